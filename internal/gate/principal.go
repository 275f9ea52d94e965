// Package gate is the one door every action on messages or files passes,
// from every face (the commands, the TUI, a session of ladder serve): it
// knows who is acting (Principal), whether they may (May), and writes what
// they did to the audit log (Log) before and after — once, in one order.
package gate

import (
	"fmt"
	"os"
	"os/user"
	"strings"

	"github.com/ladder-tui/ladder/broker"
)

// Role is what a principal may do.
type Role string

const (
	// RoleLocal is the person running ladder on their own terminal: what
	// their broker user (and --read-only) allows.
	RoleLocal Role = "local"
	// RoleOperator is an SSH key of ladder serve that may change the broker.
	RoleOperator Role = "operator"
	// RoleReadOnly is an SSH key of ladder serve that may change nothing.
	RoleReadOnly Role = "read-only"
	// RoleMCP is an MCP client of ladder mcp: it changes nothing (ReadOnly)
	// unless the server was started with --allow-moves, and writes no files.
	RoleMCP Role = "mcp"
)

// Action is what the gate guards: each acts on messages or on files.
type Action string

const (
	Move        Action = "move"
	Unblock     Action = "unblock"
	Replay      Action = "replay"
	DumpConsume Action = "dump --consume"
	// WriteFile is a dump written to a file (in a session of ladder
	// serve, on the server).
	WriteFile Action = "write a file"
	// Publish and Drain are the primitives the actions above are built
	// on: they pass only inside an audited action (see Gate).
	Publish Action = "publish"
	Drain   Action = "drain"
)

// verb is how a refusal names a.
func (a Action) verb() string {
	switch a {
	case WriteFile:
		return "write files on the server"
	case DumpConsume:
		return "drain a queue into a file"
	case Publish:
		return "publish"
	case Drain:
		return "drain"
	}
	return string(a)
}

// Principal is who is acting: the one value the gate authorizes, the
// audit log names and the screen shows.
type Principal struct {
	// User and Host: the operating-system user ladder runs as, and where.
	User, Host string
	// SSHUser, SSHKey (SHA256:… fingerprint) and KeyComment: who a session
	// of ladder serve is, as its authorized key names them.
	SSHUser, SSHKey, KeyComment string
	Role                        Role
	// Context is the config file's named broker acted on ("" for none).
	Context string
	// ReadOnly: the context (or --read-only) changes nothing, whatever
	// the role.
	ReadOnly bool
	// FileWrites lets a read-only key write dump files on the server
	// (ladder serve --read-only-dumps).
	FileWrites bool
	// MCPClient names the MCP client of ladder mcp as its initialize
	// request did ("claude-code 1.2.3"); its user and host are ladder's.
	// MovesAllowed: the server was started with --allow-moves.
	MCPClient    string
	MovesAllowed bool
}

// Local is the person at this terminal, in context (readOnly: --read-only
// or the context's).
func Local(context string, readOnly bool) Principal {
	p := Principal{Role: RoleLocal, Context: context, ReadOnly: readOnly}
	if u, err := user.Current(); err == nil {
		p.User = u.Username
	}
	p.Host, _ = os.Hostname()
	return p
}

// SSH is a session of ladder serve: its user, key and role, on this host.
func SSH(sshUser, fingerprint, comment string, role Role, context string) Principal {
	p := Local(context, false)
	p.SSHUser, p.SSHKey, p.KeyComment, p.Role = sshUser, fingerprint, comment, role
	return p
}

// MCP is an MCP client of ladder mcp (named by its initialize request's
// clientInfo), on this host, in context (readOnly: --read-only or the
// context's): it may move only when the server was started allowing it
// (allowMoves), and never writes files.
func MCP(client, context string, readOnly, allowMoves bool) Principal {
	p := Local(context, readOnly)
	p.Role, p.MCPClient, p.MovesAllowed = RoleMCP, client, allowMoves
	if p.MCPClient == "" {
		// An unnamed client is still told apart from the person at the terminal.
		p.MCPClient = "unnamed MCP client"
	}
	return p
}

// Refused is a principal's action the gate did not let through. It wraps
// broker.ErrReadOnly, as every read-only refusal does.
type Refused struct {
	Action Action
	// By names what refused: "this key" (its role) or "this context".
	By string
	// Hint says how it could be allowed, where something can.
	Hint string
}

func (e *Refused) Error() string {
	s := fmt.Sprintf("read-only: %s may not %s", e.By, e.Action.verb())
	if e.Hint != "" {
		s += " (" + e.Hint + ")"
	}
	return s
}

func (e *Refused) Unwrap() error { return broker.ErrReadOnly }

// May says whether p may do a: nil, or a *Refused saying why not.
func (p Principal) May(a Action) error {
	if p.Role == RoleReadOnly {
		if a == WriteFile && p.FileWrites {
			return nil
		}
		r := &Refused{Action: a, By: "this key"}
		if a == WriteFile {
			r.Hint = "its operator may allow dumps with ladder serve --read-only-dumps"
		}
		return r
	}
	if p.Role == RoleMCP {
		switch {
		case a == WriteFile:
			return &Refused{Action: a, By: "this MCP server"}
		case !p.MovesAllowed:
			return &Refused{Action: a, By: "this MCP server", Hint: "ladder mcp --allow-moves allows moves"}
		}
	}
	if p.ReadOnly && a != WriteFile {
		by := "this context"
		if p.Context == "" {
			by = "this run"
		}
		return &Refused{Action: a, By: by, Hint: "--read-only, or the context's read-only"}
	}
	return nil
}

// ChangesNothing reports whether p may change nothing on the broker.
func (p Principal) ChangesNothing() bool {
	return p.Role == RoleReadOnly || p.ReadOnly || p.Role == RoleMCP && !p.MovesAllowed
}

// Who names p for a screen or a log line: "alice (key laptop
// SHA256:…, read-only)", or the local user.
func (p Principal) Who() string {
	if p.Role == RoleMCP {
		who := p.User
		if who == "" {
			who = "you"
		}
		return p.MCPClient + " (MCP client, run by " + who + ")"
	}
	if p.SSHUser == "" {
		if p.User == "" {
			return "you"
		}
		return p.User
	}
	var parts []string
	if p.KeyComment != "" {
		parts = append(parts, "key "+p.KeyComment)
	}
	if p.SSHKey != "" {
		parts = append(parts, p.SSHKey)
	}
	parts = append(parts, string(p.Role))
	return p.SSHUser + " (" + strings.Join(parts, ", ") + ")"
}
