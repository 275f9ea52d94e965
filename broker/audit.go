package broker

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/user"
	"sync"
	"time"

	"github.com/ladder-tui/ladder/internal/termtext"
	"github.com/ladder-tui/ladder/retry/moveplan"
)

// AuditEvent is one line of the audit trail: every mutation, as asked and
// as done. Field names are a contract (JSON lines).
type AuditEvent struct {
	Time   time.Time `json:"time"`
	Phase  string    `json:"phase"` // "start" or "done"
	User   string    `json:"user"`
	Host   string    `json:"host"`
	Broker string    `json:"broker"` // redacted
	Vhost  string    `json:"vhost"`
	// Context is the config file's named broker the action ran in ("" for
	// none).
	Context string `json:"context,omitempty"`
	// SSHUser and SSHKey name who asked, when the action came from a
	// session of `ladder serve --ssh`: the SSH user and the fingerprint
	// of the key it logged in with (SHA256:…).
	SSHUser string `json:"ssh_user,omitempty"`
	SSHKey  string `json:"ssh_key,omitempty"`
	Action  string `json:"action"`
	From    string `json:"from"`
	Target  string `json:"target"`
	DelayMS int64  `json:"delay_ms"`
	// DelaysMS (unblock): each picked message's remaining delay as the
	// preview showed it (rounded up to the second), in queue order; each
	// is published with what remains of it then (the report's routes).
	DelaysMS []int64  `json:"delays_ms,omitempty"`
	Limit    int      `json:"limit,omitempty"`
	Reset    bool     `json:"reset_retries,omitempty"`
	Selected int      `json:"selected,omitempty"`
	Rate     float64  `json:"rate,omitempty"`
	Where    []string `json:"where,omitempty"`
	// File and Lines: a replay's dump file and the lines it published; a
	// consuming dump's file.
	File  string `json:"file,omitempty"`
	Lines []int  `json:"lines,omitempty"`
	// Counts: a dump's or replay's totals (a move's are in Report).
	Counts map[string]int `json:"counts,omitempty"`
	// Messages are the ids of the messages acted on (sha256:<digest> for
	// one without an id).
	Messages []string `json:"messages,omitempty"`
	// ConfirmedRoutes are the routes of the plan the user confirmed.
	ConfirmedRoutes []moveplan.RouteCount `json:"confirmed_routes,omitempty"`
	Report          *MoveReport           `json:"report,omitempty"`
	Error           string                `json:"error,omitempty"`
}

// AuditScope is what every line of an audited client says besides its
// action: the broker (its URL, redacted when written) and the context;
// for a session of `ladder serve --ssh`, the SSH user and the key's
// fingerprint.
type AuditScope struct {
	Broker  string
	Context string
	SSHUser string
	SSHKey  string
}

// Audited wraps a Client so every Move (not dry runs) is written to w as
// JSON lines, before it starts and when it ends — the one audit hook the
// UI and the commands share.
func Audited(c Client, w io.Writer, s AuditScope) Client {
	if w == nil {
		return c
	}
	u, host := "", ""
	if cu, err := user.Current(); err == nil {
		u = cu.Username
	}
	host, _ = os.Hostname()
	return &audited{Client: c, w: w, user: u, host: host, broker: RedactURL(s.Broker), context: s.Context, sshUser: s.SSHUser, sshKey: s.SSHKey}
}

type audited struct {
	Client
	mu      sync.Mutex
	w       io.Writer
	user    string
	host    string
	broker  string
	context string
	sshUser string
	sshKey  string
}

func (a *audited) Move(ctx context.Context, req MoveRequest, progress func(MoveProgress)) (*MoveReport, error) {
	if req.DryRun {
		return a.Client.Move(ctx, req, progress)
	}
	ev := AuditEvent{
		Phase: "start", User: a.user, Host: a.host, Broker: a.broker, Vhost: a.Client.Vhost(), Context: a.context, Action: "move",
		SSHUser: a.sshUser, SSHKey: a.sshKey,
		From: req.From, Target: req.To.String(), DelayMS: req.Delay.Milliseconds(), Limit: req.Limit,
		Reset: req.ResetRetries, Selected: len(req.Positions), ConfirmedRoutes: moveplan.CountRoutes(req.Expect),
		Rate: req.Rate, Where: req.Where.Exprs(),
	}
	if req.Pick != nil {
		ev.Action = "unblock"
		ev.DelaysMS = make([]int64, len(req.Pick))
		for i, p := range req.Pick {
			ev.DelaysMS[i] = p.Delay.Milliseconds()
		}
	}
	if err := a.write(ev); err != nil {
		// No trail, no mutation.
		return &MoveReport{Target: req.To.String()}, err
	}
	rep, err := a.Client.Move(ctx, req, progress)
	ev.Phase, ev.Report = "done", rep
	if rep != nil {
		ev.Messages = rep.MovedIDs
	}
	if err != nil {
		ev.Error = RedactText(err.Error())
	}
	if werr := a.write(ev); werr != nil && err == nil {
		err = werr
	}
	return rep, err
}

// Failover implements Failoverer when the client it wraps does: the other
// node's client, audited alike.
func (a *audited) Failover(ctx context.Context) (Client, string, error) {
	f, ok := a.Client.(Failoverer)
	if !ok {
		return nil, "", errNoFailover
	}
	c, addr, err := f.Failover(ctx)
	if err != nil {
		return nil, "", err
	}
	return &audited{Client: c, w: a.w, user: a.user, host: a.host, broker: a.broker, context: a.context, sshUser: a.sshUser, sshKey: a.sshKey}, addr, nil
}

// Auditor is the audit hook of an audited client: actions built on the
// client's primitives (dump --consume, replay) record their own events.
type Auditor interface {
	Audit(ev AuditEvent) error
}

// Audit writes ev with who, where and when filled in.
func (a *audited) Audit(ev AuditEvent) error {
	ev.User, ev.Host, ev.Broker, ev.Vhost, ev.Context = a.user, a.host, a.broker, a.Client.Vhost(), a.context
	ev.SSHUser, ev.SSHKey = a.sshUser, a.sshKey
	if ev.Error != "" {
		ev.Error = RedactText(ev.Error)
	}
	return a.write(ev)
}

// write appends ev as one whole line. Names from the broker may hold runes
// a terminal acts on (bidi overrides, C1 controls): they are written as
// JSON escapes, so the log can be read with cat or tail. The line is built
// whole and written at once; a write cut short (a full disk) is taken back,
// so the log never keeps half a line.
func (a *audited) write(ev AuditEvent) error {
	ev.Time = time.Now().UTC()
	b, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	line := append(termtext.EscapeJSON(b), '\n')
	a.mu.Lock()
	defer a.mu.Unlock()
	f, isFile := a.w.(auditFile)
	var size int64 = -1
	if isFile {
		if st, err := f.Stat(); err == nil {
			size = st.Size()
		}
	}
	n, err := a.w.Write(line)
	if err == nil && n < len(line) {
		err = io.ErrShortWrite
	}
	if err != nil {
		err = fmt.Errorf("audit log: %w", err)
		if n > 0 && size >= 0 {
			if terr := f.Truncate(size); terr != nil {
				err = fmt.Errorf("%w (and its partial line could not be taken back: %v)", err, terr)
			}
		}
	}
	return err
}

// auditFile is an audit log that can take back a partial line (*os.File).
type auditFile interface {
	Stat() (os.FileInfo, error)
	Truncate(size int64) error
}
