package cli

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/usecase"
	"github.com/ladder-tui/ladder/internal/present"
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/topology"
)

// Pure renderers for the commands' tables. Everything from the broker goes
// through termtext.Sanitize: names and headers are untrusted text.

func rate(p *float64) string {
	if p == nil {
		return "-"
	}
	return strconv.FormatFloat(*p, 'f', 1, 64)
}

func queueRow(role string, q present.QueueReport, ttl string) []string {
	return []string{role, clean(q.Name), ttl, strconv.FormatInt(q.Ready, 10), strconv.FormatInt(q.Unacked, 10),
		consumers(q.Consumers), inRate(q), rate(q.AckRate)}
}

// linkRow is queueRow for a DLQ or error queue, marked when only a
// naming links it (present.QueueReport.Unconfirmed).
func linkRow(role string, q present.QueueReport) []string {
	row := queueRow(role, q, "")
	if q.Unconfirmed {
		row[1] += " (by name, unconfirmed)"
	}
	return row
}

// inRate is a queue's inflow, "~" before one derived from its depth (see
// in_rate_source) rather than counted publishes.
func inRate(q present.QueueReport) string {
	s := rate(q.InRate)
	if q.InRate != nil && q.InRateSource != nil && *q.InRateSource != topology.InFromPublish {
		s = "~" + s
	}
	return s
}

func consumers(n *int) string {
	if n == nil {
		return "?"
	}
	return strconv.Itoa(*n)
}

// renderTopology draws every ladder as a block of rows, then the findings.
func renderTopology(r present.TopologyReport) string {
	var b strings.Builder
	fmt.Fprintf(&b, "vhost %s · RabbitMQ %s · %s", clean(r.Vhost), clean(r.BrokerVersion), present.Plural(len(r.Ladders), "ladder", "ladders"))
	if r.OverMS > 0 {
		fmt.Fprintf(&b, " · read twice, %s apart", retry.FormatDelay(time.Duration(r.OverMS)*time.Millisecond))
	}
	if up, total := topology.NodesUp(&topology.Vhost{Nodes: r.Nodes}); total > 1 || up < total {
		fmt.Fprintf(&b, " · cluster %s, %d of %d nodes up", clean(r.ClusterName), up, total)
	}
	b.WriteString("\n")
	if r.RatesFrom == topology.RatesUnavailable {
		fmt.Fprintf(&b, "no rates: %s\n", clean(r.RatesNote))
	}
	b.WriteString("\n")
	rows := [][]string{{"ROLE", "QUEUE", "TTL", "READY", "UNACKED", "CONSUMERS", "IN/S", "ACK/S"}}
	for _, l := range r.Ladders {
		rows = append(rows, queueRow("main", l.Main, ""))
		for _, t := range l.Tiers {
			rows = append(rows, queueRow("  tier", t.QueueReport, retry.FormatDelay(time.Duration(t.TTLMS)*time.Millisecond)))
		}
		for _, w := range l.WaitQueues {
			rows = append(rows, queueRow("  wait", w, present.PerMessageTTL))
		}
		for _, d := range l.DelayedExchanges {
			held := "?"
			if d.MessagesDelayed != nil {
				held = strconv.FormatInt(*d.MessagesDelayed, 10)
			}
			rows = append(rows, []string{"  delayed", clean(d.Name), "x-delay", held, "-", "-", "-", "-"})
		}
		for _, d := range l.Delays {
			ttl := present.Dur(time.Duration(d.MinTTLMS)*time.Millisecond) + "…" + present.Dur(time.Duration(d.MaxTTLMS)*time.Millisecond)
			switch {
			case d.HeldByConsumers:
				ttl = "until due" // the workers hold each message: no TTL
			case d.PerMessageTTL:
				ttl = present.PerMessageTTL + " (shared)"
			case len(d.Levels) > 0 && len(d.Levels) < 8:
				// A few levels: each delay this queue can be given.
				var ls []string
				for _, lv := range d.Levels {
					ls = append(ls, present.Dur(time.Duration(lv.TTLMS)*time.Millisecond))
				}
				ttl = strings.Join(ls, ",")
			}
			rows = append(rows, []string{"  delays", clean(d.Name), ttl, strconv.FormatInt(d.Messages, 10), "-", "-", "-", "-"})
		}
		if l.RetriesInConsumer {
			rows = append(rows, []string{"  tier", "(none: retries in the consumer)", "", "", "", "", "", ""})
		}
		if l.DLQ != nil {
			rows = append(rows, linkRow("  dlq", *l.DLQ))
		} else {
			rows = append(rows, []string{"  dlq", "(none)", "", "", "", "", "", ""})
		}
		for _, e := range l.ErrorQueues {
			rows = append(rows, linkRow("  error", e))
		}
	}
	if len(r.Ladders) > 0 {
		b.WriteString(table(rows))
		if derivedInflow(r) {
			b.WriteString("~ inflow derived from the depth (its change, or depth ÷ TTL on a tier): dead-lettered messages are not counted as published\n")
		}
	} else {
		b.WriteString("no retry ladders found\n")
	}
	// How discovery guessed, per ladder, as JSON's inferred_from: after the
	// table so the long reasons do not widen its columns.
	var inferred [][]string
	for _, l := range r.Ladders {
		if len(l.InferredFrom) > 0 {
			inferred = append(inferred, []string{clean(l.Main.Name), clean(strings.Join(l.InferredFrom, "; "))})
		}
	}
	if len(inferred) > 0 {
		b.WriteString("\nINFERRED FROM\n")
		b.WriteString(table(inferred))
	}
	// Error queues the graph cannot link: say which naming did, and that
	// failures are published there rather than dead-lettered.
	var named [][]string
	for _, l := range r.Ladders {
		if l.DLQFrom != "" && l.DLQ != nil {
			from := l.DLQFrom
			if l.DLQ.Unconfirmed {
				from += "; unconfirmed: no message read there yet says it failed in " + l.Main.Name
			}
			named = append(named, []string{clean(l.Main.Name), clean(l.DLQ.Name), clean(from)})
		}
	}
	if len(named) > 0 {
		b.WriteString("\nDLQ BY NAMING OR MESSAGES SEEN (failures are published there, no dead-letter route)\n")
		b.WriteString(table(named))
	}
	if s := r.Sampled; s != nil && s.Free {
		// Read unasked: said, queue by queue.
		b.WriteString("\nSAMPLED (unasked: the browse is free on this broker; --no-sample reads none)\n")
		for _, q := range s.Queues {
			switch {
			case q.Skipped != "":
				fmt.Fprintf(&b, "not sampled %s: %s\n", clean(q.Queue), clean(q.Skipped))
			case len(q.FailedIn) > 0:
				fmt.Fprintf(&b, "sampled %d messages of %s (free on this broker): they failed in %s\n", q.Read, clean(q.Queue), clean(strings.Join(q.FailedIn, ", ")))
			default:
				fmt.Fprintf(&b, "sampled %d messages of %s (free on this broker)\n", q.Read, clean(q.Queue))
			}
		}
		if s.Left > 0 {
			fmt.Fprintf(&b, "%d more not sampled (at most %d queues unasked; --sample N reads more)\n", s.Left, usecase.MaxFreeQueues)
		}
	} else if s != nil {
		fmt.Fprintf(&b, "\nSAMPLED (up to %d messages of each queue no ladder explained)\n", s.PerQueue)
		rows := [][]string{{"QUEUE", "READ", "FAILED IN", "NOTE"}}
		for _, q := range s.Queues {
			in := strings.Join(q.FailedIn, ", ")
			if in == "" {
				in = "–"
			}
			note := q.Skipped
			if note == "" {
				note = strings.Join(q.SideEffects, "; ")
			}
			rows = append(rows, []string{clean(q.Queue), strconv.Itoa(q.Read), clean(in), clean(note)})
		}
		if len(s.Queues) == 0 {
			b.WriteString("no queue to sample: every queue with messages nothing consumes is in a ladder\n")
		} else {
			b.WriteString(table(rows))
		}
		if s.Left > 0 {
			fmt.Fprintf(&b, "%d more not sampled (at most %d queues a run)\n", s.Left, usecase.MaxSampledQueues)
		}
	}
	if len(r.Findings) > 0 {
		b.WriteString("\nFINDINGS\n")
		b.WriteString(findingsTable(r.Findings))
	}
	return b.String()
}

// derivedInflow: some ladder's queue shows an inflow derived from its depth.
func derivedInflow(r present.TopologyReport) bool {
	derived := func(q present.QueueReport) bool {
		return q.InRate != nil && q.InRateSource != nil && *q.InRateSource != topology.InFromPublish
	}
	for _, l := range r.Ladders {
		qs := append([]present.QueueReport{l.Main}, l.WaitQueues...)
		for _, t := range l.Tiers {
			qs = append(qs, t.QueueReport)
		}
		if l.DLQ != nil {
			qs = append(qs, *l.DLQ)
		}
		if slices.ContainsFunc(qs, derived) {
			return true
		}
	}
	return false
}

// findingsTable is one finding a line: severity, code, what, message.
func findingsTable(fs []topology.Finding) string {
	rows := make([][]string, 0, len(fs))
	for _, f := range fs {
		about := f.Queue
		if about == "" && f.Exchange != "" {
			about = "exchange " + f.Exchange
		}
		if about == "" && f.Node != "" {
			about = "node " + f.Node
		}
		rows = append(rows, []string{string(f.Severity), f.Code, clean(about), clean(f.Message)})
	}
	return table(rows)
}

// renderPeek draws a peek: side effects first, then one row per message,
// or the groups (at most width cells wide; 0: no limit; see peekTable).
func renderPeek(r *usecase.GroupedPeek, width int) string {
	var b strings.Builder
	if r.Grouping != nil {
		fmt.Fprintf(&b, "%s (%s): %d ready of %d\n", clean(r.Queue), r.Type, r.Ready, r.Total)
	} else {
		fmt.Fprintf(&b, "%s (%s): %d ready of %d, showing %d\n", clean(r.Queue), r.Type, r.Ready, r.Total, len(r.Messages))
	}
	for _, s := range r.SideEffects {
		fmt.Fprintf(&b, "! %s\n", clean(s))
	}
	if r.Incomplete != "" && !slices.Contains(r.SideEffects, r.Incomplete) {
		fmt.Fprintf(&b, "! incomplete: %s\n", clean(r.Incomplete))
	}
	if p := present.PeekPartial(r.PeekResult); p != "" && r.Grouping == nil {
		fmt.Fprintf(&b, "! %s\n", clean(p))
	}
	if r.Grouping != nil || len(r.Groups) > 0 {
		renderGroups(&b, r, width)
		return b.String()
	}
	if len(r.Messages) == 0 {
		return b.String()
	}
	b.WriteString("\n")
	b.WriteString(peekTable(r.PeekResult, width))
	for _, n := range present.RetryNotes(r.Messages) {
		fmt.Fprintf(&b, "%s\n", clean(n))
	}
	return b.String()
}

// peekDue is a message's due time (its TTL's, else Celery's eta), with
// the message holding it back.
func peekDue(m broker.Message, at time.Time) string {
	h := m.HoL
	s := present.DueOf(h, m.Retry.DueTime, m.Retry.DueSource, at, present.DueWide)
	if b := present.Blocked(h, true); b != "" {
		s += " " + b
	}
	return s
}

// renderMove summarises a move (or a dry run's plan).
func renderMove(r *broker.MoveReport, from string) string {
	var b strings.Builder
	if r.DryRun {
		fmt.Fprintf(&b, "dry run: %s from %s to %s", present.Plural(len(r.Planned), "message", "messages"), clean(from), clean(r.Target))
		if r.DelayMS > 0 {
			fmt.Fprintf(&b, " after %s", retry.FormatDelay(time.Duration(r.DelayMS)*time.Millisecond))
		}
		if v := present.Routes(r.Routes); v != "" {
			fmt.Fprintf(&b, ": %s", clean(v))
		}
		b.WriteString("\n")
		rows := [][]string{{"POS", "MESSAGE ID", "TARGET", "PUBLISHED TO", "VIA", "REACHES", "NOTE"}}
		for _, p := range r.Planned {
			if !p.Moves() {
				rows = append(rows, []string{strconv.Itoa(p.Position), clean(p.MessageID), "-", "-", "skipped", "-", clean(p.Skip)})
				continue
			}
			note := p.Note
			if slices.Contains(r.Notes, note) {
				note = "" // said once below
			}
			reaches := strings.Join(p.Reaches, ", ")
			if reaches == "" {
				reaches = "?" // a route ladder cannot resolve (the note says)
			}
			rows = append(rows, []string{strconv.Itoa(p.Position), clean(p.MessageID), clean(present.Publish(p.TargetExchange, p.TargetRoutingKey)),
				clean(present.Publish(p.Exchange, p.RoutingKey)), clean(present.Way(p)), clean(reaches), clean(note)})
		}
		b.WriteString(table(rows))
		if v := present.Reaches(r.Planned); v != "" {
			fmt.Fprintf(&b, "queues reached: %s\n", clean(v))
		}
	} else {
		fmt.Fprintf(&b, "moved %d of %d from %s to %s", r.Moved, r.Requested, clean(from), clean(r.Target))
		if r.DelayMS > 0 {
			fmt.Fprintf(&b, " with a %s delay", retry.FormatDelay(time.Duration(r.DelayMS)*time.Millisecond))
		}
		if v := present.Routes(r.Routes); v != "" {
			fmt.Fprintf(&b, " (%s)", clean(v))
		}
		fmt.Fprintf(&b, "; failed %d, returned %d, skipped %d\n", r.Failed, r.Returned, r.Skipped)
		for _, p := range r.Planned {
			if p.MessageID == "" {
				fmt.Fprintf(&b, "  skipped #%d: %s\n", p.Position, clean(p.Skip))
				continue
			}
			fmt.Fprintf(&b, "  skipped #%d %s: %s\n", p.Position, clean(p.MessageID), clean(p.Skip))
		}
	}
	if r.DuplicatesPossible {
		b.WriteString("! duplicates possible: a message may be both in the target and still in the source\n")
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "note: %s\n", clean(n))
	}
	return b.String()
}

// moveQuestion is the confirmation a move asks, from its dry run: how many
// messages go where, through which routes, every queue they reach, which
// --where chose them and how fast they go, what a crash can cost, and how
// many stay.
func moveQuestion(req broker.MoveRequest, dry *broker.MoveReport, file bool) string {
	moving := dry.Requested - dry.Skipped
	var b strings.Builder
	fmt.Fprintf(&b, "Move %s from %s to %s", present.Plural(moving, "message", "messages"), clean(req.From), clean(present.Target(req.To, moving, dry.Planned)))
	if req.Delay > 0 {
		fmt.Fprintf(&b, " after %s", retry.FormatDelay(req.Delay))
	}
	if v := present.Routes(dry.Routes); v != "" && req.Delay > 0 {
		fmt.Fprintf(&b, ", %s", clean(v))
	}
	if v := present.Reaches(dry.Planned); v != "" {
		fmt.Fprintf(&b, ", reaching %s", clean(v))
	}
	if req.ResetRetries {
		b.WriteString(", retry counts reset to 0")
	}
	if v := present.Chosen(req.Where.Exprs()); v != "" {
		fmt.Fprintf(&b, "; %s", clean(v))
	}
	if v := present.Pace(req.Rate); v != "" {
		fmt.Fprintf(&b, "; %s", v)
	}
	if v := present.CrashRisk(dry.Planned); v != "" {
		fmt.Fprintf(&b, "; %s (see the note above)", v)
	}
	if dry.Skipped > 0 {
		verb := "stay"
		if dry.Skipped == 1 {
			verb = "stays"
		}
		fmt.Fprintf(&b, " (%d %s in %s: see the plan above)", dry.Skipped, verb, clean(req.From))
	}
	if !file && usecase.PreviewCapped(req, dry) {
		b.WriteString("; " + present.PreviewCapped(usecase.PreviewCap))
	}
	b.WriteString("? [y/N] ")
	return b.String()
}

// renderSchedule is the retry schedule as a table: each attempt's delay, the
// band jitter spreads it over, and the tier it waits in.
func renderSchedule(s retry.RetrySchedule) string {
	rows := [][]string{{"ATTEMPT", "DELAY", "MIN", "MAX", "TIER"}}
	for _, at := range s.Attempts {
		tier := "-"
		if at.Tier != "" {
			tier = clean(at.Tier)
			if at.Match == retry.TierLonger {
				tier += " (longer)"
			}
		}
		rows = append(rows, []string{strconv.Itoa(at.Attempt), retry.FormatDelay(at.Delay), retry.FormatDelay(at.Min), retry.FormatDelay(at.Max), tier})
	}
	return table(rows)
}

// renderDump says what a dump wrote and what the browse cost.
func renderDump(r *usecase.DumpReport, out string) string {
	var b strings.Builder
	verb := "dumped"
	if r.Consumed {
		verb = "drained"
	}
	fmt.Fprintf(&b, "%s %s from %s to %s", verb, present.Plural(r.Written, "message", "messages"), clean(r.Queue), clean(out))
	if r.Unmatched > 0 {
		fmt.Fprintf(&b, " (%d not chosen by --where)", r.Unmatched)
	}
	b.WriteString("\n")
	for _, s := range r.SideEffects {
		fmt.Fprintf(&b, "! %s\n", clean(s))
	}
	for _, s := range r.Skipped {
		fmt.Fprintf(&b, "skipped %s\n", clean(s))
	}
	if r.Incomplete != "" && !slices.Contains(r.SideEffects, r.Incomplete) {
		fmt.Fprintf(&b, "! incomplete: %s\n", clean(r.Incomplete))
	}
	return b.String()
}
