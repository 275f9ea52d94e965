package rabbit

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/ladder-tui/ladder/broker"
)

// reachTimeout bounds each address's connect when several are given: a
// node that does not answer costs this much before the next is tried.
const reachTimeout = 3 * time.Second

// Reach returns the first of r's addresses (Resolved.Addresses) whose AMQP
// port and management API both accept a connection, and a line for each
// earlier one saying why it was passed over ("127.0.0.1:5699: connection
// refused"). With one address it returns r untouched: its own errors say
// what is wrong, when it is used. None answering is ErrUnreachable,
// naming each.
func Reach(ctx context.Context, r *Resolved) (*Resolved, []string, error) {
	if len(r.Addresses) <= 1 {
		return r, nil, nil
	}
	var passed []string
	for _, a := range r.Addresses {
		why := a.answers(ctx)
		if why == "" {
			// The others stay known: a move that loses this node goes
			// on through them (failover.go).
			out := *a
			out.Addresses = r.Addresses
			return &out, passed, nil
		}
		passed = append(passed, why)
		if ctx.Err() != nil {
			return nil, passed, ctx.Err()
		}
	}
	return nil, passed, fmt.Errorf("no address answers: %s: %w", strings.Join(passed, "; "), broker.ErrUnreachable)
}

// answers is "" when a's AMQP port and management API accept a TCP
// connection, else why not, naming the address.
func (a *Resolved) answers(ctx context.Context) string {
	ports := []struct{ what, addr string }{
		{"AMQP", net.JoinHostPort(a.AMQP.Hostname(), a.Port())},
		{"management API", a.APIURL.Host},
	}
	if a.APIURL.Port() == "" {
		port := "80"
		if a.APIURL.Scheme == "https" {
			port = "443"
		}
		ports[1].addr = net.JoinHostPort(a.APIURL.Hostname(), port)
	}
	for _, p := range ports {
		d := net.Dialer{Timeout: reachTimeout}
		conn, err := d.DialContext(ctx, "tcp", p.addr)
		if err != nil {
			return fmt.Sprintf("%s (%s): %s", p.addr, p.what, dialCause(err))
		}
		conn.Close()
	}
	return ""
}

// dialCause words a failed connect in a few words.
func dialCause(err error) string {
	var ne net.Error
	switch {
	case errors.As(err, &ne) && ne.Timeout():
		return fmt.Sprintf("no answer in %s", reachTimeout)
	case strings.Contains(err.Error(), "connection refused"):
		return "connection refused"
	case strings.Contains(err.Error(), "no such host"):
		return "no such host"
	}
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		return oe.Err.Error()
	}
	return err.Error()
}

// Address is the AMQP host and port of r, for saying which node answered.
func (r *Resolved) Address() string { return net.JoinHostPort(r.AMQP.Hostname(), r.Port()) }
