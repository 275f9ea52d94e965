package broker

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
)

// maxSecretFile bounds what ReadSecretFile reads: a password or a URL,
// never a large file named by mistake.
const maxSecretFile = 64 << 10

// ErrSecretFileOpen marks a secret file that others may read.
var ErrSecretFileOpen = errors.New("secret file readable by others")

// ReadSecretFile reads a password (or a URL holding one) from path, the way
// ssh reads a private key: a file that its group or others may read or
// write is refused ("permissions 0644 for 'pw.txt' are too open"), since
// the secret is then no secret on a shared host. Trailing line ends are
// dropped (echo pw > file writes one), as a shell's $(< file) does for
// Docker's *_FILE variables. The error never holds the file's content.
// --password-file uses it now; a context's password file (issue 24) is
// read by the same rule.
func ReadSecretFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", pathErr(path, err)
	}
	defer f.Close()
	// Checked on the open file: what is read is what was checked.
	fi, err := f.Stat()
	if err != nil {
		return "", pathErr(path, err)
	}
	if fi.IsDir() {
		return "", fmt.Errorf("%s is a directory", path)
	}
	if mode := fi.Mode().Perm(); mode&0o077 != 0 && runtime.GOOS != "windows" {
		return "", &redactedError{msg: fmt.Sprintf("permissions %04o for '%s' are too open: others may read it (chmod 600 %s)", mode, path, path), err: ErrSecretFileOpen}
	}
	b, err := io.ReadAll(io.LimitReader(f, maxSecretFile+1))
	if err != nil {
		return "", pathErr(path, err)
	}
	if len(b) > maxSecretFile {
		return "", fmt.Errorf("%s is larger than %d KiB: not a password file", path, maxSecretFile>>10)
	}
	s := strings.TrimRight(string(b), "\r\n")
	switch {
	case s == "":
		return "", fmt.Errorf("%s is empty", path)
	case strings.ContainsAny(s, "\r\n"):
		// A password has no line break: two lines are a mistake (a file
		// of several secrets, a note under the password).
		return "", fmt.Errorf("%s has more than one line: want the password alone", path)
	}
	return s, nil
}

// pathErr is an os error without Go's "open PATH:" prefix doubled by the
// caller's own naming of the file.
func pathErr(path string, err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", path, pe.Err)
	}
	return err
}
