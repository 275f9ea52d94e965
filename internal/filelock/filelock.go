// Package filelock takes an exclusive, non-blocking lock on an open file:
// flock on unix, LockFileEx on windows. The operating system releases it
// when the process ends, however it ends (kill -9 included), so a lock is
// never left behind by a crash.
package filelock

import (
	"errors"
	"os"
)

// ErrHeld says another process (or another open file in this one) holds
// the lock.
var ErrHeld = errors.New("locked by another process")

// TryLock takes an exclusive lock on f without waiting: ErrHeld when it is
// taken already.
func TryLock(f *os.File) error { return tryLock(f) }

// Unlock releases a lock TryLock took (closing f releases it too).
func Unlock(f *os.File) error { return unlock(f) }
