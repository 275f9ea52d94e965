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

// auditLogFile opens --audit-log for appending (nil when not set); close
// it when the command ends.
func (a *app) auditLogFile() (*os.File, error) {
	if a.auditLog == "" {
		return nil, nil
	}
	f, err := os.OpenFile(a.auditLog, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, fmt.Errorf("--audit-log %s: %w", a.auditLog, err)
	}
	return f, nil
}

// withAuditLog opens --audit-log (if set) and returns a wrapper that puts
// any client behind it, and the func that closes the log.
func (a *app) withAuditLog() (wrap func(broker.Client, string) broker.Client, closeLog func(), err error) {
	f, err := a.auditLogFile()
	if err != nil {
		return nil, nil, err
	}
	closeLog = func() {}
	if f != nil {
		closeLog = func() { f.Close() }
	}
	return func(c broker.Client, url string) broker.Client { return audited(c, f, url) }, closeLog, nil
}

// audited wraps c with the audit trail in f (none when f is nil).
func audited(c broker.Client, f *os.File, brokerURL string) broker.Client {
	if f == nil {
		return c
	}
	return broker.Audited(c, f, brokerURL)
}
