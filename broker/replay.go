package broker

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ladder-tui/ladder/retry"
)

// Dump and replay are built on a Client's primitives (Peek, Drain,
// Topology, Publish), so the live broker and the simulation run the same
// code, and every message is routed by the one planner.

// DumpOptions configure a dump.
type DumpOptions struct {
	Queue string
	Limit int // 0: every ready message (a browse takes at most DefaultDumpLimit)
	Where retry.Where
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
	Progress func(PeekProgress)
}

// DefaultDumpLimit bounds a browsing dump without --limit: a browse holds
// every message it reads, unacked on the broker, until it ends.
const DefaultDumpLimit = 100_000

// dumpLimit is DefaultDumpLimit (a variable: a test lowers it).
var dumpLimit = DefaultDumpLimit

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
	WriteMessage(*Message) error
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

// partialErr is a dump that left messages out: it is ErrPartial, worded
// for a dump (ErrPartial's own words are a move's).
type partialErr struct{ msg string }

func partialError(format string, args ...any) error {
	return &partialErr{fmt.Sprintf(format, args...)}
}
func (e *partialErr) Error() string        { return e.msg }
func (e *partialErr) Is(target error) bool { return target == ErrPartial }

// unkeptError is a message the dump format cannot keep exactly.
type unkeptError struct{ err error }

func (e *unkeptError) Error() string { return e.err.Error() }
func (e *unkeptError) Unwrap() error { return e.err }

// Dump writes a queue's messages to w in the dump format.
func Dump(ctx context.Context, c Client, o DumpOptions, w DumpWriter) (*DumpReport, error) {
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
	ladders := retry.Discover(&v)
	head, _ := json.Marshal(DumpHeader{LadderDump: DumpFormat, Vhost: c.Vhost(), Queue: o.Queue, BrokerVersion: version, DumpedAt: time.Now().UTC()})
	if _, err := w.Write(append(head, '\n')); err != nil {
		return rep, fmt.Errorf("dump: write: %w", err)
	}
	now := time.Now()
	// --where reads a message as the move planner does: the same death
	// queues and main queues, from the headers.
	deaths, mains := retry.DeathQueuesOf(ladders, o.Queue), retry.MainQueues(ladders)
	chosen := func(m *Message) bool {
		if o.Where.Empty() {
			return true
		}
		var ts time.Time
		if m.Properties.Timestamp != nil {
			ts = *m.Properties.Timestamp
		}
		return o.Where.Match(retry.SubjectOf(m.Headers, deaths, mains, m.Body, ts), now)
	}
	mw, _ := w.(MessageWriter)
	write := func(m *Message) error {
		if mw != nil {
			if err := mw.WriteMessage(m); err != nil {
				return fmt.Errorf("dump: write: %w", err)
			}
			rep.Written++
			return nil
		}
		line, err := MarshalRecord(RecordOf(m), o.BodyText)
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
		return browseDump(ctx, c, o, w, rep, chosen, write)
	}
	if err := w.Sync(); err != nil {
		return rep, fmt.Errorf("dump: sync: %w", err)
	}
	audit := auditorOf(c)
	ev := AuditEvent{Phase: "start", Action: "dump --consume", From: o.Queue, Limit: o.Limit, Where: o.Where.Exprs()}
	if err := audit(ev); err != nil {
		return rep, err
	}
	_, err = c.Drain(ctx, o.Queue, o.Limit, func(m *Message) (bool, error) {
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
		ev.Messages = append(ev.Messages, idOf(m.Properties.MessageID, m.BodyDigest))
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
func browseDump(ctx context.Context, c Client, o DumpOptions, w DumpWriter, rep *DumpReport, chosen func(*Message) bool, write func(*Message) error) (*DumpReport, error) {
	limit := o.Limit
	if limit <= 0 || !o.Where.Empty() {
		limit = max(limit, dumpLimit) // --where looks as far as a browse may: Limit counts chosen ones
	}
	seen := 0
	var failed error // the writer's: the dump's own error, said once
	each := func(m *Message) error {
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
			return ErrStopBrowse
		}
		return nil
	}
	res, err := c.Peek(ctx, o.Queue, PeekOptions{Limit: limit, BodyPreview: maxBody, Force: o.Force, Deadline: o.Deadline, Progress: o.Progress, Each: each})
	if err != nil {
		switch serr := w.Sync(); {
		case failed != nil:
			return rep, failed
		case serr != nil || rep.Written == 0 || ctx.Err() == nil:
			return rep, fmt.Errorf("dump: %w", err)
		}
		// Interrupted (Ctrl+C): the lines written are good.
		rep.Incomplete = fmt.Sprintf("interrupted after %s", retry.Plural(rep.Written, "message", "messages"))
		return rep, partialError("dump %s: %s (%v): the rest is not in the file", o.Queue, rep.Incomplete, ctx.Err())
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
		return rep, partialError("dump %s: %s skipped (they stay queued), the first: %s", o.Queue, retry.Plural(len(rep.Skipped), "message", "messages"), rep.Skipped[0])
	}
	return rep, nil
}

func idOf(id, digest string) string {
	if id != "" {
		return id
	}
	return "sha256:" + digest
}

// auditorOf is c's audit hook, or one that records nothing.
func auditorOf(c Client) func(AuditEvent) error {
	if a, ok := c.(Auditor); ok {
		return a.Audit
	}
	return func(AuditEvent) error { return nil }
}

// ReplayRequest describes a replay of a dump file.
type ReplayRequest struct {
	File         string
	To           Target
	Delay        time.Duration
	Rate         float64
	Where        retry.Where
	Limit        int
	DryRun       bool
	Resume       bool
	Strict       bool
	ResetRetries bool
	MaxMoves     int
	Force        bool
	// Gate, when set, pauses the replay while closed.
	Gate *Gate
	// Expect is the plan the user confirmed (a dry run's Planned).
	Expect []PlannedMove
}

// DumpLine is one record of a dump file with its line number.
type DumpLine struct {
	Line   int
	Record DumpRecord
}

// badLine is a line of a dump that cannot be read, and why.
type badLine struct {
	line int
	why  string
}

// ReadDump reads a dump file: its header and records. A malformed line is
// reported in bad (line number and why) and left out.
func ReadDump(r io.Reader) (DumpHeader, []DumpLine, []string, error) {
	head, lines, bad, err := readDump(r)
	var out []string
	for _, b := range bad {
		out = append(out, fmt.Sprintf("line %d: %s", b.line, b.why))
	}
	return head, lines, out, err
}

// ReadDumpHeader reads the first line of the dump file at path.
func ReadDumpHeader(path string) (DumpHeader, error) {
	f, err := os.Open(path)
	if err != nil {
		return DumpHeader{}, err
	}
	defer f.Close()
	line, err := bufio.NewReaderSize(f, 4096).ReadSlice('\n')
	var head DumpHeader
	if (err != nil && !errors.Is(err, io.EOF)) || json.Unmarshal(line, &head) != nil || head.LadderDump == 0 {
		return head, fmt.Errorf("%s: line 1: not a ladder dump", path)
	}
	return head, nil
}

func readDump(r io.Reader) (DumpHeader, []DumpLine, []badLine, error) {
	var head DumpHeader
	var lines []DumpLine
	var bad []badLine
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<30)
	n := 0
	for sc.Scan() {
		n++
		b := sc.Bytes()
		if n == 1 {
			if err := json.Unmarshal(b, &head); err != nil || head.LadderDump == 0 {
				return head, nil, nil, errors.New(`line 1: not a ladder dump (want {"ladder_dump":1,…})`)
			}
			if head.LadderDump != DumpFormat {
				return head, nil, nil, fmt.Errorf("line 1: dump format %d; this ladder reads %d", head.LadderDump, DumpFormat)
			}
			continue
		}
		if len(b) == 0 {
			continue
		}
		rec, err := UnmarshalRecord(b)
		if err != nil {
			bad = append(bad, badLine{n, err.Error()})
			continue
		}
		lines = append(lines, DumpLine{Line: n, Record: rec})
	}
	if err := sc.Err(); err != nil {
		return head, lines, bad, fmt.Errorf("line %d: %w", n+1, err)
	}
	if n == 0 {
		return head, nil, nil, errors.New("empty file: not a ladder dump")
	}
	return head, lines, bad, nil
}

// progress file: JSON lines beside the dump, {"sent":[lines]} before a batch
// is published and {"done":[…]} / {"failed":[…]} once it is settled, each
// synced. A line sent but neither done nor failed was in flight when the
// replay stopped: it may have reached the broker. Each run first writes who
// it is ({"lock":…}, see replaylock.go).
type progressEntry struct {
	// Dump names the dump the progress is of: a progress file of another
	// dump (one written over this file's name) is refused.
	Dump   *progressDump `json:"dump,omitempty"`
	Run    string        `json:"run,omitempty"`
	Lock   *lockRecord   `json:"lock,omitempty"`
	Sent   []int         `json:"sent,omitempty"`
	Done   []int         `json:"done,omitempty"`
	Failed []int         `json:"failed,omitempty"`
}

type progressDump struct {
	Queue    string    `json:"queue"`
	DumpedAt time.Time `json:"dumped_at"`
}

// ProgressFile is where a replay of file keeps its progress.
func ProgressFile(file string) string { return file + ".progress" }

// replayBatch is how many messages are published before their confirms
// are awaited and the progress file synced.
const replayBatch = 256

// replayJob is one line of a replay and its plan.
type replayJob struct {
	line  DumpLine
	route PlannedMove
}

// Replay publishes a dump's messages again, each routed by the planner the
// moves use. Every line is checked first (see checkLine): one the broker
// would refuse is skipped with its reason, so it cannot take the valid lines
// after it down with it. With Resume, lines a previous run published are
// skipped; lines it had in flight are published again and reported as
// possible duplicates. A replay locks the dump's progress file while it
// runs: a second one at once is refused, naming the first.
func Replay(ctx context.Context, c Client, req ReplayRequest, progress func(MoveProgress)) (*MoveReport, error) {
	rep := &MoveReport{Target: req.To.String(), DelayMS: req.Delay.Milliseconds(), DryRun: req.DryRun, Via: map[retry.Via]int{}, Routes: []retry.RouteCount{}}
	f, err := os.Open(req.File)
	if err != nil {
		return rep, fmt.Errorf("replay: %w", err)
	}
	head, lines, bad, err := readDump(f)
	f.Close()
	if err != nil {
		return rep, fmt.Errorf("replay %s: %w", req.File, err)
	}
	if len(bad) > 0 && req.Strict {
		return rep, fmt.Errorf("replay %s: line %d: %s (--strict: nothing published)", req.File, bad[0].line, bad[0].why)
	}
	progPath := ProgressFile(req.File)
	var prog *os.File
	if req.DryRun {
		err = checkUnlocked(progPath)
	} else {
		// Before the progress is read: two replays that both read "nothing
		// published yet" would both publish everything.
		prog, err = lockProgress(progPath)
	}
	if err != nil {
		return rep, fmt.Errorf("replay %s: %w", req.File, err)
	}
	if prog != nil {
		defer prog.Close() // releases the lock
	}
	st, err := readProgress(progPath, head)
	if err != nil {
		return rep, fmt.Errorf("replay: progress file %s: %w", progPath, err)
	}
	if st.exists && !req.Resume && !req.DryRun {
		return rep, fmt.Errorf("replay %s: it was replayed before (progress in %s): --resume continues it; remove the progress file to replay it all again", req.File, progPath)
	}
	run := runID()
	record := func(e progressEntry) error {
		b, _ := json.Marshal(e)
		if _, err := prog.Write(append(b, '\n')); err != nil {
			return fmt.Errorf("replay: progress file %s: %w", progPath, err)
		}
		return prog.Sync()
	}
	if prog != nil {
		if fi, err := prog.Stat(); err == nil && fi.Size() > 0 {
			// A run killed mid-write left a torn line: end it, so the next
			// entry is read on its own.
			if _, err := prog.Write([]byte("\n")); err != nil {
				return rep, fmt.Errorf("replay: progress file %s: %w", progPath, err)
			}
		}
		if err := record(progressEntry{Run: run, Lock: newLockRecord()}); err != nil {
			return rep, err
		}
	}
	v, err := c.Topology(ctx)
	if err != nil {
		return rep, err
	}
	version, err := c.BrokerVersion(ctx)
	if err != nil {
		return rep, err
	}
	lim, err := limitsOf(ctx, c)
	if err != nil {
		return rep, fmt.Errorf("replay %s: %w", req.File, err)
	}
	if head.Vhost != c.Vhost() {
		rep.Note(fmt.Sprintf("the dump is of vhost %s; this replay publishes into vhost %s", head.Vhost, c.Vhost()))
	}
	spec := retry.MoveSpec{From: head.Queue, To: req.To, Delay: req.Delay, ResetRetries: req.ResetRetries,
		Where: req.Where, Now: time.Now(), MaxMoves: req.MaxMoves, Force: req.Force, Replay: true, Expect: req.Expect}
	spec.ForBroker(version)
	planner, err := retry.NewMovePlanner(&v, retry.Discover(&v), spec)
	if err != nil {
		return rep, fmt.Errorf("replay %s: %w", req.File, err)
	}
	// A line that cannot be read or published stays in the dump, skipped
	// with its reason, counted among those asked for (so the replay ends
	// partial, exit 3).
	skip := func(pm PlannedMove) {
		rep.Skipped++
		rep.Planned = append(rep.Planned, pm)
	}
	for _, b := range bad {
		rep.Requested++
		skip(PlannedMove{Position: b.line, Skip: "malformed line: " + b.why})
	}
	var jobs []replayJob
	resumed := 0
	for _, dl := range lines {
		if st.done[dl.Line] {
			resumed++
			continue
		}
		r := dl.Record
		m := r.MoveInput(dl.Line).Message(true)
		// Checked before it is planned: the planner holds a line to the
		// confirmed plan, which skipped it for this same reason.
		why := checkLine(&dl.Record, lim)
		var route PlannedMove
		if why == "" {
			route = planner.Plan(m)
		} else {
			route = PlannedMove{Position: dl.Line, MessageID: r.Properties.MessageID, BodyDigest: m.BodyDigest, Skip: why}
			route.Unmatched = !req.Where.Empty() && planner.Plan(m).Unmatched
		}
		if !route.Unmatched && req.Limit > 0 && len(jobs) >= req.Limit {
			break
		}
		if !route.Unmatched && why != "" && req.Strict {
			return rep, fmt.Errorf("replay %s: line %d: %s (--strict: nothing published)", req.File, dl.Line, why)
		}
		if route = rep.Book(m, route); route.Unmatched {
			continue
		}
		jobs = append(jobs, replayJob{dl, route})
	}
	rep.Requested += len(jobs)
	if resumed > 0 {
		rep.Note(fmt.Sprintf("resumed: %s already published by an earlier run %s skipped", retry.Plural(resumed, "line", "lines"), wasWere(resumed)))
	}
	if req.DryRun {
		rep.Note("dry run: nothing was published")
		return rep, nil
	}
	if !st.exists {
		if err := record(progressEntry{Dump: &progressDump{Queue: head.Queue, DumpedAt: head.DumpedAt}}); err != nil {
			return rep, err
		}
	}
	audit := auditorOf(c)
	ev := AuditEvent{Phase: "start", Action: "replay", From: head.Queue, Target: req.To.String(), DelayMS: req.Delay.Milliseconds(),
		Limit: req.Limit, Reset: req.ResetRetries, Rate: req.Rate, Where: req.Where.Exprs(), File: req.File}
	if err := audit(ev); err != nil {
		return rep, err
	}
	start := time.Now()
	pace := NewPacer(req.Rate)
	blocked := "" // the broker's reason while a resource alarm blocks publishing
	report := func() {
		if progress != nil {
			progress(MoveProgress{Total: rep.Requested, Done: rep.Moved + rep.Failed + rep.Returned + rep.Skipped,
				Moved: rep.Moved, Failed: rep.Failed, Elapsed: time.Since(start), Blocked: blocked})
		}
	}
	// Publish says, from this goroutine, when an alarm blocks it.
	pubCtx := withBlockedNotice(ctx, func(reason string) {
		if reason == blocked {
			return
		}
		blocked = reason
		if reason != "" {
			rep.Note("the broker blocked publishing for a while (" + reason + ")")
		}
		report()
	})
	var failure error
	var doubt lineNotes // lines left in doubt, by why
	batchSize := replayBatch
	if req.Rate > 0 {
		// Each message waits its turn; a batch holds a tenth of a second's
		// worth, so confirms are awaited ten times a second at most.
		batchSize = max(1, min(replayBatch, int(req.Rate)/10))
	}
	// queue holds what is still to publish, in line order; lines of a batch
	// the broker did not reach (it closed the channel at a refused message
	// before them) go back to its front.
	var queue []replayJob
	for _, j := range jobs {
		if j.route.Moves() {
			queue = append(queue, j)
		}
	}
	for len(queue) > 0 && failure == nil {
		var batch []replayJob
		for len(queue) > 0 && len(batch) < batchSize {
			j := queue[0]
			// A large body goes alone: a broker configured below its
			// version's default refuses it without the lines after it.
			if len(j.line.Record.Body) > isolateAbove && len(batch) > 0 {
				break
			}
			queue = queue[1:]
			// The limit may have been learnt from a refusal since the plan.
			if why := checkLine(&j.line.Record, lim); why != "" {
				rep.Skipped++
				rep.Planned = append(rep.Planned, j.route.Skipped(why))
				continue
			}
			batch = append(batch, j)
			if len(j.line.Record.Body) > isolateAbove {
				break
			}
		}
		if len(batch) == 0 {
			continue
		}
		var out []Outgoing
		var sent []int
		for _, j := range batch {
			if !req.Gate.Wait(ctx.Done()) || !pace.Sleep(ctx.Done()) {
				failure = ctx.Err()
				break
			}
			pace.Took(time.Now())
			r, rec := j.route, j.line.Record
			h := r.Apply(rec.Headers)
			h[HeaderMoveID] = run + "/" + strconv.Itoa(j.line.Line)
			props := rec.MessageProperties()
			props.Expiration = r.Expiration
			o := Outgoing{Exchange: r.Exchange, RoutingKey: r.RoutingKey, Mandatory: r.Mandatory, Properties: props, Headers: h, Body: rec.Body}
			if r.Via == retry.ViaDelayQueue {
				o.WaitQueue, o.WaitQueueArgs = r.Queue, r.WaitQueueArgs
			}
			out = append(out, o)
			sent = append(sent, j.line.Line)
		}
		if failure != nil || len(out) == 0 {
			break // stopped while pacing: what was not published is not "sent"
		}
		batch = batch[:len(out)]
		if err := record(progressEntry{Run: run, Sent: sent}); err != nil {
			failure = err
			break
		}
		outcomes, err := c.Publish(pubCtx, out)
		if err == nil && len(outcomes) != len(out) {
			// Not knowing what became of it, the batch stays "sent" in the
			// progress file: possible duplicates.
			failure = fmt.Errorf("replay %s: publish answered %d of %d", req.File, len(outcomes), len(out))
			rep.DuplicatesPossible = true
			rep.DuplicatesAtMost += len(out)
			rep.Failed += len(out)
			break
		}
		var ok, failed []int
		if outcomes == nil {
			// Nothing of the batch was published (Publish says so by an
			// error alone): its lines are not in doubt, --resume publishes
			// them.
			for _, j := range batch {
				failed = append(failed, j.line.Line)
			}
			rep.Failed += len(batch)
			failure = fmt.Errorf("replay %s: %w", req.File, err)
			if rerr := record(progressEntry{Failed: failed}); rerr != nil {
				failure = rerr
			}
			report()
			break
		}
		// A channel that ended under the batch over anything but a line too
		// large (a refusal every next batch would meet, a lost connection,
		// a stop) ends the replay, in its one cause; what it did not publish
		// is not in doubt.
		stop := err != nil && !errors.Is(err, ErrTooLarge)
		var again []replayJob
		for k, res := range outcomes {
			j := batch[k]
			switch {
			case res.Confirmed:
				ok = append(ok, j.line.Line)
				rep.Moved++
				rep.Count(j.route)
				ev.Lines = append(ev.Lines, j.line.Line)
			case res.Returned:
				failed = append(failed, j.line.Line)
				rep.Returned++
			case res.NotSent && errors.Is(res.Err, errNotReached) && !stop:
				// Never reached the broker: published again next batch.
				failed = append(failed, j.line.Line)
				again = append(again, j)
			case res.NotSent && errors.Is(res.Err, ErrTooLarge):
				failed = append(failed, j.line.Line)
				rep.Skipped++
				rep.Planned = append(rep.Planned, j.route.Skipped(res.Err.Error()))
			case res.NotSent:
				failed = append(failed, j.line.Line)
				rep.Failed++
				if !stop || !errors.Is(res.Err, err) && !errors.Is(res.Err, errNotReached) {
					rep.Note(fmt.Sprintf("line %d not published: %v", j.line.Line, res.Err))
				}
			default:
				// Unconfirmed: it may be on the broker.
				rep.Failed++
				rep.DuplicatesPossible = true
				rep.DuplicatesAtMost++
				if res.Err != nil {
					doubt.add(res.Err.Error(), j.line.Line)
				}
			}
		}
		if stop {
			failure = fmt.Errorf("replay %s: %w", req.File, err)
		}
		if err := record(progressEntry{Done: ok, Failed: failed}); err != nil {
			failure = err
		}
		if len(again) > 0 && failure == nil {
			queue = append(again, queue...)
			if l, err := limitsOf(ctx, c); err == nil {
				lim = l // the refusal named the broker's limit
			}
		}
		report()
	}
	doubt.note(rep)
	if again := sumDoubt(st, jobs); again > 0 {
		rep.DuplicatesPossible = true
		rep.DuplicatesAtMost += again
		n := len(inflightLines(st, jobs))
		rep.Note(fmt.Sprintf("%s in flight when an earlier run stopped: published again, so %s be on the broker twice (%s %s)",
			were(n, "line", "lines"), mayBe(n), plainPlural(n, "line", "lines"), lineList(inflightLines(st, jobs))))
	}
	if rep.Returned > 0 {
		rep.Note(fmt.Sprintf("%s returned as unroutable: not published (still in the dump)", were(rep.Returned, "message", "messages")))
	}
	ev.Phase, ev.Report, ev.Messages = "done", rep, rep.MovedIDs
	if failure != nil {
		ev.Error = failure.Error()
	}
	if err := audit(ev); err != nil && failure == nil {
		failure = err
	}
	if failure == nil && rep.Moved < rep.Requested {
		failure = &replayPartial{fmt.Errorf("replay %s: published %d of %d (%d returned, %d failed, %d skipped)",
			req.File, rep.Moved, rep.Requested, rep.Returned, rep.Failed, rep.Skipped)}
	} else if failure != nil && !errors.Is(failure, ErrPartial) {
		failure = &replayPartial{failure}
	}
	return rep, failure
}

// replayPartial is a replay that left lines unpublished: ErrPartial, in a
// replay's words.
type replayPartial struct{ err error }

func (e *replayPartial) Error() string        { return e.err.Error() + ": some lines were not published" }
func (e *replayPartial) Unwrap() error        { return e.err }
func (e *replayPartial) Is(target error) bool { return target == ErrPartial }

// inflightLines are the lines of jobs an earlier run left in doubt.
func inflightLines(st progressState, jobs []replayJob) map[int]bool {
	out := map[int]bool{}
	for _, j := range jobs {
		if st.doubt[j.line.Line] > 0 && j.route.Moves() {
			out[j.line.Line] = true
		}
	}
	return out
}

// sumDoubt bounds the duplicates publishing jobs again can make: each
// unanswered publish of a line by an earlier run may have left a copy.
func sumDoubt(st progressState, jobs []replayJob) int {
	n := 0
	for l := range inflightLines(st, jobs) {
		n += st.doubt[l]
	}
	return n
}

// lineNotes gathers lines by what was said of them, for one note each
// (not one a line: a batch's lines share their cause).
type lineNotes struct {
	order []string
	lines map[string]map[int]bool
}

func (n *lineNotes) add(why string, line int) {
	if n.lines == nil {
		n.lines = map[string]map[int]bool{}
	}
	if n.lines[why] == nil {
		n.lines[why] = map[int]bool{}
		n.order = append(n.order, why)
	}
	n.lines[why][line] = true
}

// note writes one note for each cause: "lines 3, 4, 5: why".
func (n *lineNotes) note(rep *MoveReport) {
	for _, why := range n.order {
		set := n.lines[why]
		rep.Note(fmt.Sprintf("%s %s: %s", plainPlural(len(set), "line", "lines"), lineList(set), why))
	}
}

func lineList(set map[int]bool) string {
	ls := slices.Sorted(maps.Keys(set))
	parts := make([]string, 0, min(len(ls), 21))
	for i, l := range ls {
		if i == 20 {
			parts = append(parts, "…")
			break
		}
		parts = append(parts, strconv.Itoa(l))
	}
	return strings.Join(parts, ", ")
}
