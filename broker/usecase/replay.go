package usecase

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/dumpfile"
	"github.com/ladder-tui/ladder/broker/pace"
	"github.com/ladder-tui/ladder/broker/preview"
	"github.com/ladder-tui/ladder/internal/wording"
	"github.com/ladder-tui/ladder/retry/moveplan"
	"github.com/ladder-tui/ladder/retry/topology"
)

// Dump and replay are built on a Client's primitives (Peek, Drain,
// Topology, Publish), so the live broker and the simulation run the same
// code, and every message is routed by the one planner.

// ReplayRequest describes a replay of a dump file.
type ReplayRequest struct {
	File         string
	To           moveplan.Target
	Delay        time.Duration
	Rate         float64
	Where        moveplan.Where
	Limit        int
	DryRun       bool
	Resume       bool
	Strict       bool
	ResetRetries bool
	MaxMoves     int
	Force        bool
	// Hold, when set, pauses the replay while held.
	Hold *pace.Hold
	// Expect is the plan the user confirmed (a dry run's Planned).
	Expect []moveplan.Route
}

// ReplayBatch is how many messages are published before their confirms
// are awaited and the progress file synced.
const ReplayBatch = 256

// replayJob is one line of a replay and its plan.
type replayJob struct {
	line  dumpfile.Line
	route moveplan.Route
}

// Replay publishes a dump's messages again, each routed by the planner the
// moves use. Every line is checked first (see checkLine): one the broker
// would refuse is skipped with its reason, so it cannot take the valid lines
// after it down with it. With Resume, lines a previous run published are
// skipped; lines it had in flight are published again and reported as
// possible duplicates. A replay locks the dump's progress file while it
// runs: a second one at once is refused, naming the first.
func Replay(ctx context.Context, c ReplayTarget, req ReplayRequest, progress func(broker.MoveProgress)) (*broker.MoveReport, error) {
	rep := &broker.MoveReport{Target: req.To.String(), DelayMS: req.Delay.Milliseconds(), DryRun: req.DryRun, Via: map[topology.Via]int{}, Routes: []moveplan.RouteCount{}}
	f, err := os.Open(req.File)
	if err != nil {
		return rep, fmt.Errorf("replay: %w", err)
	}
	head, lines, bad, err := dumpfile.ReadLines(f)
	f.Close()
	if err != nil {
		return rep, fmt.Errorf("replay %s: %w", req.File, err)
	}
	if len(bad) > 0 && req.Strict {
		return rep, fmt.Errorf("replay %s: line %d: %s (--strict: nothing published)", req.File, bad[0].Line, bad[0].Why)
	}
	progPath := dumpfile.ProgressFile(req.File)
	var prog *os.File
	if req.DryRun {
		err = dumpfile.CheckUnlocked(progPath)
	} else {
		// Before the progress is read: two replays that both read "nothing
		// published yet" would both publish everything.
		prog, err = dumpfile.LockProgress(progPath)
	}
	if err != nil {
		return rep, fmt.Errorf("replay %s: %w", req.File, err)
	}
	if prog != nil {
		defer prog.Close() // releases the lock
	}
	st, err := dumpfile.ReadProgress(progPath, head)
	if err != nil {
		return rep, fmt.Errorf("replay: progress file %s: %w", progPath, err)
	}
	if st.Exists && !req.Resume && !req.DryRun {
		return rep, fmt.Errorf("replay %s: it was replayed before (progress in %s): --resume continues it; remove the progress file to replay it all again", req.File, progPath)
	}
	run := preview.RunID()
	record := func(e dumpfile.ProgressEntry) error {
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
		if err := record(dumpfile.ProgressEntry{Run: run, Lock: dumpfile.NewLockRecord()}); err != nil {
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
	spec := moveplan.Spec{From: head.Queue, To: req.To, Delay: req.Delay, ResetRetries: req.ResetRetries,
		Where: req.Where, Now: time.Now(), MaxMoves: req.MaxMoves, Force: req.Force, Replay: true, Expect: req.Expect}
	spec.ForBroker(version)
	planner, err := moveplan.NewPlanner(&v, topology.Discover(&v), spec)
	if err != nil {
		return rep, fmt.Errorf("replay %s: %w", req.File, err)
	}
	// A line that cannot be read or published stays in the dump, skipped
	// with its reason, counted among those asked for (so the replay ends
	// partial, exit 3).
	skip := func(pm moveplan.Route) {
		rep.Skipped++
		rep.Planned = append(rep.Planned, pm)
	}
	for _, b := range bad {
		rep.Requested++
		skip(moveplan.Route{Position: b.Line, Skip: "malformed line: " + b.Why})
	}
	var jobs []replayJob
	resumed := 0
	for _, dl := range lines {
		if st.Done[dl.Line] {
			resumed++
			continue
		}
		r := dl.Record
		m := RecordInput(&r, dl.Line).Message(true)
		// Checked before it is planned: the planner holds a line to the
		// confirmed plan, which skipped it for this same reason.
		why := checkLine(&dl.Record, lim)
		var route moveplan.Route
		if why == "" {
			route = planner.Plan(m)
		} else {
			route = moveplan.Route{Position: dl.Line, MessageID: r.Properties.MessageID, BodyDigest: m.BodyDigest, Skip: why}
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
		rep.Note(fmt.Sprintf("resumed: %s already published by an earlier run %s skipped", topology.Plural(resumed, "line", "lines"), wording.WasWere(resumed)))
	}
	if req.DryRun {
		rep.Note("dry run: nothing was published")
		return rep, nil
	}
	if !st.Exists {
		if err := record(dumpfile.ProgressEntry{Dump: &dumpfile.ProgressDump{Queue: head.Queue, DumpedAt: head.DumpedAt}}); err != nil {
			return rep, err
		}
	}
	audit := c.Audit
	ev := broker.AuditEvent{Phase: "start", Action: "replay", From: head.Queue, Target: req.To.String(), DelayMS: req.Delay.Milliseconds(),
		Limit: req.Limit, Reset: req.ResetRetries, Rate: req.Rate, Where: req.Where.Exprs(), File: req.File}
	if err := audit(ev); err != nil {
		return rep, err
	}
	start := time.Now()
	pacer := pace.New(req.Rate)
	blocked := "" // the broker's reason while a resource alarm blocks publishing
	report := func() {
		if progress != nil {
			progress(broker.MoveProgress{Total: rep.Requested, Done: rep.Moved + rep.Failed + rep.Returned + rep.Skipped,
				Moved: rep.Moved, Failed: rep.Failed, Elapsed: time.Since(start), Blocked: blocked})
		}
	}
	// Publish says, from this goroutine, when an alarm blocks it.
	pubCtx := pace.WithBlockedNotice(ctx, func(reason string) {
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
	// Clients opened on other nodes when a connection was lost
	// (Failover), closed when the replay ends.
	failovers := 0
	var opened []broker.Client
	defer func() {
		for _, o := range opened {
			o.Close()
		}
	}()
	// failover switches c to another node's client after err, a lost
	// connection (or one that cannot be made again), when c knows one:
	// the address it went on through, "" when it did not.
	failover := func(err error) string {
		if !errors.Is(err, broker.ErrConnLost) && !errors.Is(err, broker.ErrUnreachable) || ctx.Err() != nil || failovers >= maxFailovers {
			return ""
		}
		nc, addr, ferr := c.Failover(ctx)
		if ferr != nil {
			return ""
		}
		failovers++
		opened = append(opened, nc)
		c = nc
		rep.Note(fmt.Sprintf("the connection was lost (%s); the replay went on through %s", shortText(err), addr))
		return addr
	}
	batchSize := ReplayBatch
	if req.Rate > 0 {
		// Each message waits its turn; a batch holds a tenth of a second's
		// worth, so confirms are awaited ten times a second at most.
		batchSize = max(1, min(ReplayBatch, int(req.Rate)/10))
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
		var out []broker.Outgoing
		var sent []int
		for _, j := range batch {
			if !req.Hold.Wait(ctx.Done()) || !pacer.Sleep(ctx.Done()) {
				failure = ctx.Err()
				break
			}
			pacer.Took(time.Now())
			r, rec := j.route, j.line.Record
			h := r.Apply(rec.Headers)
			h[broker.HeaderMoveID] = run + "/" + strconv.Itoa(j.line.Line)
			props := RecordProperties(&rec)
			props.Expiration = r.Expiration
			o := broker.Outgoing{Exchange: r.Exchange, RoutingKey: r.RoutingKey, Mandatory: r.Mandatory, Properties: props, Headers: h, Body: rec.Body}
			if r.Via == topology.ViaDelayQueue {
				o.WaitQueue, o.WaitQueueArgs = r.Queue, r.WaitQueueArgs
			}
			out = append(out, o)
			sent = append(sent, j.line.Line)
		}
		if failure != nil || len(out) == 0 {
			break // stopped while pacing: what was not published is not "sent"
		}
		batch = batch[:len(out)]
		if err := record(dumpfile.ProgressEntry{Run: run, Sent: sent}); err != nil {
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
		if outcomes == nil && failover(err) != "" {
			// Nothing of the batch was published: through the other node.
			queue = append(batch, queue...)
			continue
		}
		if outcomes == nil {
			// Nothing of the batch was published (Publish says so by an
			// error alone): its lines are not in doubt, --resume publishes
			// them.
			for _, j := range batch {
				failed = append(failed, j.line.Line)
			}
			rep.Failed += len(batch)
			failure = fmt.Errorf("replay %s: %w", req.File, err)
			if rerr := record(dumpfile.ProgressEntry{Failed: failed}); rerr != nil {
				failure = rerr
			}
			report()
			break
		}
		// A channel that ended under the batch over anything but a line too
		// large (a refusal every next batch would meet, a lost connection,
		// a stop) ends the replay, in its one cause; what it did not publish
		// is not in doubt.
		stop := err != nil && !errors.Is(err, broker.ErrTooLarge)
		// A lost connection goes on through another node when the client
		// knows one: what it did not publish is published there, and what
		// it published unconfirmed too (counted as possible duplicates).
		wentOn := ""
		if stop {
			wentOn = failover(err)
		}
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
			case res.NotSent && errors.Is(res.Err, broker.ErrNotReached) && !stop,
				res.NotSent && wentOn != "" && !errors.Is(res.Err, broker.ErrTooLarge):
				// Never reached the broker: published again next batch.
				failed = append(failed, j.line.Line)
				again = append(again, j)
			case res.NotSent && errors.Is(res.Err, broker.ErrTooLarge):
				failed = append(failed, j.line.Line)
				rep.Skipped++
				rep.Planned = append(rep.Planned, j.route.Skipped(res.Err.Error()))
			case res.NotSent:
				failed = append(failed, j.line.Line)
				rep.Failed++
				if !stop || !errors.Is(res.Err, err) && !errors.Is(res.Err, broker.ErrNotReached) {
					rep.Note(fmt.Sprintf("line %d not published: %v", j.line.Line, res.Err))
				}
			case wentOn != "":
				// Unconfirmed, its node gone: it may be on the broker, and
				// is published again through the other node.
				rep.DuplicatesPossible = true
				rep.DuplicatesAtMost++
				failed = append(failed, j.line.Line)
				again = append(again, j)
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
		if stop && wentOn == "" {
			failure = fmt.Errorf("replay %s: %w", req.File, err)
		}
		if err := record(dumpfile.ProgressEntry{Done: ok, Failed: failed}); err != nil {
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
			wording.Were(n, "line", "lines"), wording.MayBe(n), wording.Plain(n, "line", "lines"), lineList(inflightLines(st, jobs))))
	}
	if rep.Returned > 0 {
		rep.Note(fmt.Sprintf("%s returned as unroutable: not published (still in the dump)", wording.Were(rep.Returned, "message", "messages")))
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
	} else if failure != nil && !errors.Is(failure, broker.ErrPartial) {
		failure = &replayPartial{failure}
	}
	return rep, failure
}

// replayPartial is a replay that left lines unpublished: ErrPartial, in a
// replay's words.
type replayPartial struct{ err error }

func (e *replayPartial) Error() string        { return e.err.Error() + ": some lines were not published" }
func (e *replayPartial) Unwrap() error        { return e.err }
func (e *replayPartial) Is(target error) bool { return target == broker.ErrPartial }

// inflightLines are the lines of jobs an earlier run left in doubt.
func inflightLines(st dumpfile.ProgressState, jobs []replayJob) map[int]bool {
	out := map[int]bool{}
	for _, j := range jobs {
		if st.Doubt[j.line.Line] > 0 && j.route.Moves() {
			out[j.line.Line] = true
		}
	}
	return out
}

// sumDoubt bounds the duplicates publishing jobs again can make: each
// unanswered publish of a line by an earlier run may have left a copy.
func sumDoubt(st dumpfile.ProgressState, jobs []replayJob) int {
	n := 0
	for l := range inflightLines(st, jobs) {
		n += st.Doubt[l]
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
func (n *lineNotes) note(rep *broker.MoveReport) {
	for _, why := range n.order {
		set := n.lines[why]
		rep.Note(fmt.Sprintf("%s %s: %s", wording.Plain(len(set), "line", "lines"), lineList(set), why))
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

// shortText is an error's message cut for a note.
func shortText(err error) string {
	msg := err.Error()
	if len(msg) > 160 {
		msg = msg[:160] + "…"
	}
	return msg
}

// maxFailovers bounds how often one replay goes on through another node.
const maxFailovers = 5
