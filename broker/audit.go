package broker

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"os/user"
	"sync"
	"time"

	"github.com/ladder-tui/ladder/retry"
)

// AuditEvent is one line of the audit trail: every mutation, as asked and
// as done. Field names are a contract (JSON lines).
type AuditEvent struct {
	Time     time.Time `json:"time"`
	Phase    string    `json:"phase"` // "start" or "done"
	User     string    `json:"user"`
	Host     string    `json:"host"`
	Broker   string    `json:"broker"` // redacted
	Vhost    string    `json:"vhost"`
	Action   string    `json:"action"`
	From     string    `json:"from"`
	Target   string    `json:"target"`
	DelayMS  int64     `json:"delay_ms"`
	Limit    int       `json:"limit,omitempty"`
	Reset    bool      `json:"reset_retries,omitempty"`
	Selected int       `json:"selected,omitempty"`
	// ConfirmedRoutes are the routes of the plan the user confirmed.
	ConfirmedRoutes []retry.RouteCount `json:"confirmed_routes,omitempty"`
	Report          *MoveReport        `json:"report,omitempty"`
	Error           string             `json:"error,omitempty"`
}

// Audited wraps a Client so every Move (not dry runs) is written to w as
// JSON lines, before it starts and when it ends — the one audit hook the
// UI and the commands share.
func Audited(c Client, w io.Writer, brokerURL string) Client {
	if w == nil {
		return c
	}
	u, host := "", ""
	if cu, err := user.Current(); err == nil {
		u = cu.Username
	}
	host, _ = os.Hostname()
	return &audited{Client: c, w: w, user: u, host: host, broker: RedactURL(brokerURL)}
}

type audited struct {
	Client
	mu     sync.Mutex
	w      io.Writer
	user   string
	host   string
	broker string
}

func (a *audited) Move(ctx context.Context, req MoveRequest, progress func(MoveProgress)) (*MoveReport, error) {
	if req.DryRun {
		return a.Client.Move(ctx, req, progress)
	}
	ev := AuditEvent{
		Phase: "start", User: a.user, Host: a.host, Broker: a.broker, Vhost: a.Client.Vhost(), Action: "move",
		From: req.From, Target: req.To.String(), DelayMS: req.Delay.Milliseconds(), Limit: req.Limit,
		Reset: req.ResetRetries, Selected: len(req.Positions), ConfirmedRoutes: retry.CountRoutes(req.Expect),
	}
	if err := a.write(ev); err != nil {
		// No trail, no mutation.
		return &MoveReport{Target: req.To.String()}, err
	}
	rep, err := a.Client.Move(ctx, req, progress)
	ev.Phase, ev.Report = "done", rep
	if err != nil {
		ev.Error = RedactText(err.Error())
	}
	if werr := a.write(ev); werr != nil && err == nil {
		err = werr
	}
	return rep, err
}

func (a *audited) write(ev AuditEvent) error {
	ev.Time = time.Now().UTC()
	b, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	_, err = a.w.Write(append(b, '\n'))
	return err
}
