package main

import (
	"fmt"
	"os"

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

// audited wraps c with the audit trail when --audit-log is set. The
// returned close func closes the log.
func (a *app) audited(c broker.Client, brokerURL string) (broker.Client, func(), error) {
	if a.auditLog == "" {
		return c, func() {}, nil
	}
	f, err := os.OpenFile(a.auditLog, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("--audit-log %s: %w", a.auditLog, err)
	}
	return broker.Audited(c, f, brokerURL), func() { f.Close() }, nil
}
