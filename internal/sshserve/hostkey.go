package sshserve

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	gossh "golang.org/x/crypto/ssh"
)

// HostKeyName is the host key's file name in the data directory.
const HostKeyName = "ssh_host_ed25519_key"

// DataDir is where the server keeps its host key by default:
// <user config dir>/ladder (~/.config/ladder).
func DataDir() (string, error) {
	d, err := os.UserConfigDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "ladder"), nil
}

// LoadOrCreateHostKey reads the host key at path, or, when there is none,
// generates an ed25519 key and writes it there (0600, its directory 0700
// when made): generated once, the same key after, so clients can pin it.
// created says which. A key file others may read is refused, as sshd
// refuses one.
func LoadOrCreateHostKey(path string) (signer gossh.Signer, created bool, err error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		s, err := createHostKey(path)
		return s, err == nil, err
	}
	if err != nil {
		return nil, false, fmt.Errorf("host key: %w", err)
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, false, fmt.Errorf("host key: %w", err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, false, fmt.Errorf("host key %s: mode %04o lets others read it: chmod 600 it", path, st.Mode().Perm())
	}
	s, err := gossh.ParsePrivateKey(b)
	if err != nil {
		return nil, false, fmt.Errorf("host key %s: %w", path, err)
	}
	return s, false, nil
}

func createHostKey(path string) (gossh.Signer, error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("host key: %w", err)
	}
	block, err := gossh.MarshalPrivateKey(priv, "ladder serve host key")
	if err != nil {
		return nil, fmt.Errorf("host key: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("host key: %w", err)
	}
	// O_EXCL: two servers starting at once do not overwrite each
	// other's key (the second fails and is started again).
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("host key: %w", err)
	}
	if _, err := f.Write(pem.EncodeToMemory(block)); err != nil {
		f.Close()
		os.Remove(path)
		return nil, fmt.Errorf("host key: %w", err)
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		return nil, fmt.Errorf("host key: %w", err)
	}
	return gossh.NewSignerFromKey(priv)
}
