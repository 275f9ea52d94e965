package sshserve

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	gossh "golang.org/x/crypto/ssh"

	"github.com/ladder-tui/ladder/internal/gate"
)

// Role is what a key may do: the gate's (internal/gate), which authorizes
// every action by it.
type Role = gate.Role

const (
	// RoleReadOnly sees the ladders, peeks and previews; it changes
	// nothing (the default of a key without role=).
	RoleReadOnly = gate.RoleReadOnly
	// RoleOperator may also move, replay and unblock.
	RoleOperator = gate.RoleOperator
)

// Key is one line of the authorized-keys file.
type Key struct {
	Key gossh.PublicKey
	// Fingerprint is the key's SHA256:… fingerprint (what logs and audit
	// lines name it by).
	Fingerprint string
	// Comment is the text after the key (often its owner, "alice@laptop").
	Comment string
	Role    Role
	// Contexts are the config file's contexts the key may see; none: any.
	Contexts []string
	// Line is where it is in the file (from 1).
	Line int
}

// AuthorizedKeys is a parsed authorized-keys file.
type AuthorizedKeys struct {
	keys []Key
}

// Lookup returns the entry of k, if it has one.
func (a *AuthorizedKeys) Lookup(k gossh.PublicKey) (Key, bool) {
	if a == nil || k == nil {
		return Key{}, false
	}
	m := k.Marshal()
	for _, e := range a.keys {
		if bytes.Equal(e.Key.Marshal(), m) {
			return e, true
		}
	}
	return Key{}, false
}

// Keys returns every entry, in file order.
func (a *AuthorizedKeys) Keys() []Key { return slices.Clone(a.keys) }

// LoadAuthorizedKeys reads and parses an authorized-keys file.
func LoadAuthorizedKeys(path string) (*AuthorizedKeys, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("authorized keys: %w", err)
	}
	ak, err := ParseAuthorizedKeys(b)
	if err != nil {
		return nil, fmt.Errorf("authorized keys %s: %w", path, err)
	}
	return ak, nil
}

// ParseAuthorizedKeys parses the authorized-keys format of OpenSSH, one key
// a line, with ladder's own options in the options position:
//
//	role=operator,contexts="prod,staging" ssh-ed25519 AAAA… alice@laptop
//	ssh-ed25519 AAAA… bob@laptop
//
// role is read-only (the default) or operator; contexts (quoted when it
// lists more than one) are the config file's contexts the key may see.
// Blank lines and lines starting with # are skipped. Any other option
// (OpenSSH's from=, command=, …) is an error rather than silently not
// applied, as is a key listed twice.
func ParseAuthorizedKeys(b []byte) (*AuthorizedKeys, error) {
	ak := &AuthorizedKeys{}
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		n := i + 1
		pk, comment, options, rest, err := gossh.ParseAuthorizedKey([]byte(line))
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		if len(bytes.TrimSpace(rest)) != 0 {
			return nil, fmt.Errorf("line %d: more than one key", n)
		}
		k := Key{Key: pk, Fingerprint: gossh.FingerprintSHA256(pk), Comment: comment, Role: RoleReadOnly, Line: n}
		seen := map[string]bool{}
		for _, o := range options {
			name, value, _ := strings.Cut(o, "=")
			if seen[name] {
				return nil, fmt.Errorf("line %d: %s given twice", n, name)
			}
			seen[name] = true
			value = unquote(value)
			switch name {
			case "role":
				switch Role(value) {
				case RoleReadOnly, RoleOperator:
					k.Role = Role(value)
				default:
					return nil, fmt.Errorf("line %d: role %q: want read-only or operator", n, value)
				}
			case "contexts":
				for c := range strings.SplitSeq(value, ",") {
					if c = strings.TrimSpace(c); c != "" {
						k.Contexts = append(k.Contexts, c)
					}
				}
				if len(k.Contexts) == 0 {
					return nil, fmt.Errorf("line %d: contexts= names none", n)
				}
			default:
				return nil, fmt.Errorf("line %d: unknown option %q (ladder knows role= and contexts=)", n, name)
			}
		}
		if prev, dup := ak.Lookup(pk); dup {
			return nil, fmt.Errorf("line %d: key %s is also on line %d", n, k.Fingerprint, prev.Line)
		}
		ak.keys = append(ak.keys, k)
	}
	if len(ak.keys) == 0 {
		return nil, errors.New("no key")
	}
	return ak, nil
}

// unquote takes the double quotes off an option's value.
func unquote(v string) string {
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
		return v[1 : len(v)-1]
	}
	return v
}
