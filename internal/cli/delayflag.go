package cli

import (
	"time"

	"github.com/ladder-tui/ladder/broker/usecase"
)

// delayFlag is --delay: read by usecase.ParseDelay, the rule the TUI's move
// dialog follows (a unit required). Its type and zero default read in the
// help as pflag's duration flag did.
type delayFlag time.Duration

func (d *delayFlag) Set(s string) error {
	v, err := usecase.ParseDelay(s)
	if err != nil {
		return err
	}
	*d = delayFlag(v)
	return nil
}

func (d *delayFlag) String() string {
	if *d == 0 {
		return "0" // pflag prints no default for a zero one
	}
	return time.Duration(*d).String()
}

func (d *delayFlag) Type() string { return "duration" }
