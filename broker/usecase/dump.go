package usecase

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/dumpfile"
	"github.com/ladder-tui/ladder/broker/internal/testhook"
	"github.com/ladder-tui/ladder/broker/preview"
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/moveplan"
	"github.com/ladder-tui/ladder/retry/topology"
)

// DumpOptions configure a dump.
type DumpOptions struct {
	Queue string
	Limit int // 0: every ready message (a browse takes at most DefaultDumpLimit)
	Where moveplan.Where
	// Consume drains the queue to the file: each message is acked only
	// after its line is written and the file synced.
	Consume  bool
	BodyText bool // write valid UTF-8 bodies as text
	Force    bool // peek a quorum queue near its delivery limit
	// Deadline (> 0) bounds how long a browsing dump reads (see
	// PeekOptions.Deadline): one still reading then stops with what it
	// wrote, Incomplete saying so. 0: no deadline but the context's.
	Deadline time.Duration
	// Progress, when set, hears how far a browsing dump has read (see
	// PeekOptions.Progress).
	Progress func(broker.PeekProgress)
	// Look bounds how many messages a browsing dump reads (0: the browse
	// bound, DefaultDumpLimit), chosen by Where or not: a scan that groups
	// a queue reads no further than its own bound.
	Look int
}

// dumpLimit is DefaultDumpLimit, or what a test lowered it to.
func dumpLimit() int {
	if n := testhook.DumpLimit.Load(); n > 0 {
		return int(n)
	}
	return DefaultDumpLimit
}

// DumpWriter is where a dump goes; Sync makes written lines durable. A
// browsing dump writes each message as it reads it, in queue order, and
// keeps none.
type DumpWriter interface {
	io.Writer
	Sync() error
}

// MessageWriter is a DumpWriter that takes each chosen message itself, in
// queue order, instead of its line (a scan that groups a whole queue, say):
// Dump calls WriteMessage for it and writes no line, so every message is
// taken, whatever the dump format could carry. The message is the writer's
// only during the call (one it keeps, it copies; its body is whole). The
// header line still goes to Write.
type MessageWriter interface {
	DumpWriter
	WriteMessage(*broker.Message) error
}

// DumpReport is what a dump did. JSON field names are a contract.
type DumpReport struct {
	Queue       string   `json:"queue"`
	Written     int      `json:"written"`
	Unmatched   int      `json:"unmatched"`
	Consumed    bool     `json:"consumed"`
	SideEffects []string `json:"side_effects"`
	Released    int64    `json:"released"`
	// Skipped, in a browsing dump, are the messages the format cannot keep
	// exactly (a routing key or property that is not UTF-8), one note each:
	// they stay in the queue, the others are written.
	Skipped []string `json:"skipped,omitempty"`
	// Incomplete, when set, says why a browsing dump stopped before the
	// end of what it was to read (the queue's ready messages, or -n): the
	// lines written are good, the rest is not in the file.
	Incomplete string `json:"incomplete,omitempty"`
}

// unkeptError is a message the dump format cannot keep exactly.
type unkeptError struct{ err error }

func (e *unkeptError) Error() string { return e.err.Error() }

func (e *unkeptError) Unwrap() error { return e.err }

// Dump writes a queue's messages to w in the dump format.
func Dump(ctx context.Context, c DumpSource, o DumpOptions, w DumpWriter) (*DumpReport, error) {
	rep := &DumpReport{Queue: o.Queue, Consumed: o.Consume, SideEffects: []string{}}
	// The topology, not a snapshot: no rates are needed, only the queue,
	// its ladder and the version for the header line.
	v, err := c.Topology(ctx)
	if err != nil {
		return rep, err
	}
	if _, ok := v.Queue(o.Queue); !ok {
		return rep, fmt.Errorf("dump: queue %q does not exist in vhost %s", o.Queue, c.Vhost())
	}
	version, err := c.BrokerVersion(ctx)
	if err != nil {
		return rep, err
	}
	ladders := topology.Discover(&v)
	head, _ := json.Marshal(dumpfile.Header{LadderDump: dumpfile.Format, Vhost: c.Vhost(), Queue: o.Queue, BrokerVersion: version, DumpedAt: time.Now().UTC()})
	if _, err := w.Write(append(head, '\n')); err != nil {
		return rep, fmt.Errorf("dump: write: %w", err)
	}
	now := time.Now()
	// --where reads a message as the move planner does: the same death
	// queues and main queues, from the headers.
	deaths, mains := retry.DeathQueuesOf(ladders, o.Queue), retry.MainQueues(ladders)
	chosen := func(m *broker.Message) bool {
		if o.Where.Empty() {
			return true
		}
		var ts time.Time
		if m.Properties.Timestamp != nil {
			ts = *m.Properties.Timestamp
		}
		return o.Where.Match(moveplan.SubjectOf(v.Conventions, m.Headers, deaths, mains, m.Body, ts), now)
	}
	mw, _ := w.(MessageWriter)
	write := func(m *broker.Message) error {
		if mw != nil {
			if err := mw.WriteMessage(m); err != nil {
				return fmt.Errorf("dump: write: %w", err)
			}
			rep.Written++
			return nil
		}
		line, err := dumpfile.MarshalRecord(RecordOf(m), o.BodyText)
		if err != nil {
			return &unkeptError{fmt.Errorf("dump: message #%d: %w", m.Position, err)}
		}
		if _, err := w.Write(append(line, '\n')); err != nil {
			return fmt.Errorf("dump: write: %w", err)
		}
		rep.Written++
		return nil
	}
	if !o.Consume {
		// A browse decodes each message as a peek does (its Decoder
		// learns from the messages): --where reads what the peek shows.
		browsed := func(m *broker.Message) bool { return o.Where.Empty() || o.Where.Match(m.Subject(), now) }
		return browseDump(ctx, c, o, w, rep, browsed, write)
	}
	if err := w.Sync(); err != nil {
		return rep, fmt.Errorf("dump: sync: %w", err)
	}
	audit := c.Audit
	ev := broker.AuditEvent{Phase: "start", Action: "dump --consume", From: o.Queue, Limit: o.Limit, Where: o.Where.Exprs()}
	if err := audit(ev); err != nil {
		return rep, err
	}
	_, err = c.Drain(ctx, o.Queue, o.Limit, func(m *broker.Message) (bool, error) {
		if !chosen(m) {
			rep.Unmatched++
			return false, nil
		}
		if err := write(m); err != nil {
			return false, err
		}
		// Durable before the ack: a crash now leaves the message in both
		// the file and the queue, never in neither.
		if err := w.Sync(); err != nil {
			return false, fmt.Errorf("dump: sync: %w", err)
		}
		ev.Messages = append(ev.Messages, moveplan.IDOf(m.Properties.MessageID, m.BodyDigest))
		return true, nil
	})
	ev.Phase, ev.Counts = "done", map[string]int{"written": rep.Written, "unmatched": rep.Unmatched}
	if err != nil {
		ev.Error = err.Error()
	}
	if aerr := audit(ev); aerr != nil && err == nil {
		err = aerr
	}
	return rep, err
}

// browseDump is a dump that browses: each message is written as the browse
// reads it, in queue order, and let go (the browse still holds it unacked
// on the broker until it ends; ladder keeps nothing).
func browseDump(ctx context.Context, c DumpSource, o DumpOptions, w DumpWriter, rep *DumpReport, chosen func(*broker.Message) bool, write func(*broker.Message) error) (*DumpReport, error) {
	limit := o.Limit
	if limit <= 0 || !o.Where.Empty() {
		limit = max(limit, dumpLimit()) // --where looks as far as a browse may: Limit counts chosen ones
	}
	if o.Look > 0 {
		limit = min(limit, o.Look)
	}
	seen := 0
	var failed error // the writer's: the dump's own error, said once
	each := func(m *broker.Message) error {
		seen++
		if !chosen(m) {
			rep.Unmatched++
			return nil
		}
		if err := write(m); err != nil {
			var unkept *unkeptError
			if !errors.As(err, &unkept) {
				failed = err
				return err
			}
			rep.Skipped = append(rep.Skipped, err.Error())
		}
		if o.Limit > 0 && rep.Written >= o.Limit {
			return broker.ErrStopBrowse
		}
		return nil
	}
	res, err := c.Peek(ctx, o.Queue, broker.PeekOptions{Limit: limit, BodyPreview: preview.MaxBody, Force: o.Force, Deadline: o.Deadline, Progress: o.Progress, Each: each})
	if err != nil {
		switch serr := w.Sync(); {
		case failed != nil:
			return rep, failed
		case serr != nil || rep.Written == 0 || ctx.Err() == nil:
			return rep, fmt.Errorf("dump: %w", err)
		}
		// Interrupted (Ctrl+C): the lines written are good.
		rep.Incomplete = fmt.Sprintf("interrupted after %s", topology.Plural(rep.Written, "message", "messages"))
		return rep, &partialErr{fmt.Sprintf("dump %s: %s (%v): the rest is not in the file", o.Queue, rep.Incomplete, ctx.Err()), ctx.Err()}
	}
	rep.SideEffects, rep.Released = res.SideEffects, res.Released
	if err := w.Sync(); err != nil {
		return rep, err
	}
	rep.Incomplete = res.Incomplete
	if rep.Incomplete == "" && seen == limit && res.Ready > int64(limit) && (o.Limit <= 0 || rep.Written < o.Limit) {
		// It stopped at its bound with more ready behind.
		if o.Where.Empty() {
			rep.Incomplete = fmt.Sprintf("read the first %d of %d ready messages: a browsing dump reads at most %d without -n (-n N reads further, --consume drains the queue)", limit, res.Ready, limit)
		} else {
			rep.Incomplete = fmt.Sprintf("--where looked at the first %d of %d ready messages only", limit, res.Ready)
		}
	}
	if rep.Incomplete != "" {
		return rep, partialError("dump %s: %s", o.Queue, rep.Incomplete)
	}
	if len(rep.Skipped) > 0 {
		return rep, partialError("dump %s: %s skipped (they stay queued), the first: %s", o.Queue, topology.Plural(len(rep.Skipped), "message", "messages"), rep.Skipped[0])
	}
	return rep, nil
}

// RecordOf is the dump record of a peeked message (its body whole).
func RecordOf(m *broker.Message) dumpfile.Record {
	p := m.Properties
	r := dumpfile.Record{Position: m.Position, Exchange: m.Exchange, RoutingKey: m.RoutingKey, Redelivered: m.Redelivered,
		Headers: m.Headers, Body: m.Body, Properties: dumpfile.Properties{
			ContentType: p.ContentType, ContentEncoding: p.ContentEncoding, DeliveryMode: p.DeliveryMode,
			Priority: p.Priority, CorrelationID: p.CorrelationID, ReplyTo: p.ReplyTo, Expiration: p.Expiration,
			MessageID: p.MessageID, Type: p.Type, UserID: p.UserID, AppID: p.AppID,
		}}
	if p.Timestamp != nil {
		s := p.Timestamp.Unix()
		r.Properties.Timestamp = &s
	} else if p.TimestampRaw != 0 {
		// Unix seconds too: the dump keeps what was sent.
		s := p.TimestampRaw
		r.Properties.Timestamp = &s
	}
	return r
}

// partialErr is a dump that left messages out: it is ErrPartial, worded
// for a dump (ErrPartial's own words are a move's).
type partialErr struct {
	msg string
	// cause, when set, is what ended the read (a Ctrl+C's
	// context.Canceled): the faces word it in the user's terms.
	cause error
}

// partialError is broker.ErrPartial worded by format (a dump's or a drain's words).
func partialError(format string, args ...any) error {
	return &partialErr{msg: fmt.Sprintf(format, args...)}
}

func (e *partialErr) Error() string { return e.msg }

func (e *partialErr) Unwrap() error { return e.cause }

func (e *partialErr) Is(target error) bool { return target == broker.ErrPartial }
