//go:build !unix && !windows

package filelock

import (
	"errors"
	"os"
)

// Elsewhere (wasm, plan9) there is no lock to take: say so rather than
// pretend.
func tryLock(*os.File) error { return errors.New("file locking is not supported on this system") }

func unlock(*os.File) error { return nil }
