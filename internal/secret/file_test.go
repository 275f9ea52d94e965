package secret

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFile(t *testing.T, dir, name, content string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	if got, err := ReadFile(writeFile(t, dir, "ok", "s3cret-pw\r\n", 0o600), false); err != nil || got != "s3cret-pw" {
		t.Errorf("%q %v", got, err)
	}
	if got, err := ReadFile(writeFile(t, dir, "ro", "s3cret-pw\n", 0o400), false); err != nil || got != "s3cret-pw" {
		t.Errorf("0400: %q %v", got, err)
	}
	for name, c := range map[string]struct {
		content string
		mode    os.FileMode
		want    string
	}{
		"others": {"s3cret-pw\n", 0o644, "permissions 0644 for '" + filepath.Join(dir, "others") + "' are too open: others may read it (chmod 600 " + filepath.Join(dir, "others") + ")"},
		"group":  {"s3cret-pw\n", 0o640, "permissions 0640 for '" + filepath.Join(dir, "group") + "' are too open: its group may read it"},
		"empty":  {"\n", 0o600, "is empty"},
		"two":    {"s3cret-pw\nnote\n", 0o600, "more than one line"},
	} {
		_, err := ReadFile(writeFile(t, dir, name, c.content, c.mode), false)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
	if _, err := ReadFile(filepath.Join(dir, "missing"), false); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing: %v", err)
	}
}

// A file others may read is refused as ErrReadable, and read when that is
// allowed on purpose (a Kubernetes secret's default 0644); the other rules
// still hold then.
func TestReadFileAllowReadable(t *testing.T) {
	dir := t.TempDir()
	open := writeFile(t, dir, "k8s", "s3cret-pw\n", 0o644)
	if _, err := ReadFile(open, false); !errors.Is(err, ErrReadable) {
		t.Errorf("0644 not allowed: %v, want ErrReadable", err)
	}
	if got, err := ReadFile(open, true); err != nil || got != "s3cret-pw" {
		t.Errorf("0644 allowed: %q %v", got, err)
	}
	if _, err := ReadFile(writeFile(t, dir, "two", "a\nb\n", 0o644), true); err == nil || !strings.Contains(err.Error(), "more than one line") {
		t.Errorf("two lines, readable allowed: %v", err)
	}
}
