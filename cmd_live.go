package main

import (
	"github.com/ladder-tui/ladder/broker"
)

// live builds the real broker client every command and the UI share.
func (a *app) live(purpose string) (*broker.Live, error) {
	r, err := a.resolve()
	if err != nil {
		return nil, err
	}
	return broker.NewLive(r, purpose)
}
