//go:build windows

package filelock

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/windows"
)

// Windows byte-range locks are mandatory: a range locked by one handle
// cannot be read or written through any other, even of the same process.
// So the lock is one byte far past any end the file will reach, not the
// file itself: the holder keeps appending through its handle, a replay
// reads its progress through another, and a refused one can still read
// the holder's lock record. Every taker locks the same byte, so they
// exclude each other as flock does.
const lockOffsetHigh = 0x7fffffff // 2^63 - 2^32: past any real file

func lockAt() *windows.Overlapped {
	return &windows.Overlapped{Offset: 0, OffsetHigh: lockOffsetHigh}
}

func tryLock(f *os.File) error {
	err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, lockAt())
	switch {
	case err == nil:
		return nil
	case errors.Is(err, windows.ERROR_LOCK_VIOLATION), errors.Is(err, windows.ERROR_IO_PENDING):
		return ErrHeld
	}
	return fmt.Errorf("lock %s: %w", f.Name(), err)
}

func unlock(f *os.File) error {
	return windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, lockAt())
}
