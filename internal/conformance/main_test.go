package conformance

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestMain points the user's cache, where ladder remembers what its runs
// learned of a broker's queues, at a directory of the tests' own: the
// tests never read nor write the user's.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "ladder-conformance-cache-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := os.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache")); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}
