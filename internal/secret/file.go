package secret

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
)

// maxFile bounds what ReadFile reads: a password or a URL, never a large
// file named by mistake.
const maxFile = 64 << 10

// ErrReadable marks a secret file that others may read.
var ErrReadable = errors.New("secret file readable by others")

// ReadFile reads a password (or a URL holding one) from path, the way ssh
// reads a private key: a file that its group or others may read or write
// is refused ("permissions 0644 for 'pw.txt' are too open"), since the
// secret is then no secret on a shared host, unless allowReadable says the
// mode is meant (a Kubernetes secret mounted with its default 0644).
// Trailing line ends are dropped (echo pw > file writes one), as a shell's
// $(< file) does for Docker's *_FILE variables. The error never holds the
// file's content.
func ReadFile(path string, allowReadable bool) (string, error) {
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
	if mode := fi.Mode().Perm(); mode&0o077 != 0 && !allowReadable && runtime.GOOS != "windows" {
		who := "others"
		if mode&0o007 == 0 {
			who = "its group"
		}
		return "", &readableError{fmt.Sprintf("permissions %04o for '%s' are too open: %s may read it (chmod 600 %s)", mode, path, who, path)}
	}
	b, err := io.ReadAll(io.LimitReader(f, maxFile+1))
	if err != nil {
		return "", pathErr(path, err)
	}
	if len(b) > maxFile {
		return "", fmt.Errorf("%s is larger than %d KiB: not a password file", path, maxFile>>10)
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

// readableError is ErrReadable in words naming the file.
type readableError struct{ msg string }

func (e *readableError) Error() string { return e.msg }
func (e *readableError) Unwrap() error { return ErrReadable }

// pathErr is an os error without Go's "open PATH:" prefix doubled by the
// caller's own naming of the file.
func pathErr(path string, err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", path, pe.Err)
	}
	return err
}
