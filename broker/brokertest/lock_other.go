//go:build !unix

package brokertest

import (
	"errors"
	"time"
)

func lockFile(string, time.Duration) (func(), error) {
	return nil, errors.New("the own node's lock needs flock (unix)")
}
