package movedialog

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/usecase"
	"github.com/ladder-tui/ladder/internal/present"
	"github.com/ladder-tui/ladder/internal/termtext"
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/moveplan"
	"github.com/ladder-tui/ladder/retry/topology"
	"github.com/ladder-tui/ladder/ui/component/input"
	"github.com/ladder-tui/ladder/ui/style"
	"github.com/ladder-tui/ladder/ui/styled"
)

// Pure renderers of the move dialog's steps. Each returns lines of at most
// width cells.

// moveForm is what the form shows.
type moveForm struct {
	queue                  string
	scope, target, delay   string
	reset                  bool
	focus                  Field
	count, tTarget, tDelay *input.Line // set when the field is typed
	where                  *input.Line // set when the scope takes a --where
	rate, maxMoves         *input.Line
	err                    string
	hints                  []key.Binding // the step's keys, as the footer shows them
}

const labelWidth = 10

func renderMoveForm(f moveForm, width int, st *style.Styles) []string {
	lines := []string{
		st.Title.Render(termtext.Truncate(formTitle(f.queue), width)),
		"",
	}
	// A field is a choice (id) and, when typed, its text (textID).
	field := func(id, textID Field, label, value string, in *input.Line, hint string) {
		line := st.Label.Render(termtext.Fit(label, labelWidth))
		if value != "" {
			vw := width - labelWidth - 4
			if in != nil {
				vw = min(vw, termtext.Width(value)+4)
			}
			v := "‹ " + termtext.Truncate(termtext.Sanitize(value), max(1, vw)) + " ›"
			if id == f.focus {
				v = st.Focused.Render(v)
			}
			line += v + " "
		}
		if in != nil {
			rest := width - termtext.Width(line)
			if empty := placeholder[textID]; empty != "" && in.String() == "" && textID != f.focus {
				// An empty flag means its default: say which.
				line += st.Muted.Render(termtext.Truncate(empty, rest))
			} else if note := fieldNote[textID]; note != "" && textID != f.focus {
				// A bare number says little: what it bounds, beside it.
				v := termtext.Sanitize(in.String())
				line += v + st.Muted.Render(termtext.Truncate(note, max(0, rest-termtext.Width(v))))
			} else {
				line += in.View(min(rest, 40), textID == f.focus, st)
			}
		}
		lines = append(lines, line)
		if hint != "" && in != nil && (id == f.focus || textID == f.focus) {
			lines = append(lines, st.Muted.Render(termtext.Truncate(strings.Repeat(" ", labelWidth)+hint, width)))
		}
	}
	field(FieldScope, -1, "Messages", f.scope, nil, "")
	if f.count != nil {
		field(FieldCount, FieldCount, "N", "", f.count, "how many messages from the head of the queue (-n)")
	}
	field(FieldTarget, FieldTargetText, "Target", f.target, f.tTarget, "type queue:NAME or exchange:NAME[:KEY]")
	field(FieldDelay, FieldDelayText, "Delay", f.delay, f.tDelay, "type 30s, 5m, 1h30m or 500ms (a unit each)")
	reset := "no: keep the retry count"
	if f.reset {
		reset = "yes: reset the retry count to 0"
	}
	field(FieldReset, -1, "Retries", reset, nil, "")
	if f.where != nil {
		field(FieldWhere, FieldWhere, "Where", "", f.where, fieldHelp[FieldWhere])
	}
	if f.rate != nil {
		field(FieldRate, FieldRate, "Rate", "", f.rate, fieldHelp[FieldRate])
	}
	if f.maxMoves != nil {
		field(FieldMaxMoves, FieldMaxMoves, "Max moves", "", f.maxMoves, fieldHelp[FieldMaxMoves])
	}
	lines = append(lines, "")
	if f.err != "" {
		lines = append(lines, styled.Wrap(st.Error, termtext.Sanitize(f.err), width)...)
	}
	lines = append(lines, keyHints(width, st, f.hints...))
	return lines
}

// placeholder is what an empty typed field means, shown while it is not
// focused.
var placeholder = map[Field]string{
	FieldWhere:    "every message",
	FieldRate:     "no limit",
	FieldMaxMoves: "no loop guard",
}

// fieldNote follows a typed field's text while it is not focused.
var fieldNote = map[Field]string{
	FieldMaxMoves: " (the loop guard: a message ladder moved this often stays)",
}

// fieldHelp is the line under a focused typed field: what to type, and the
// command line's flag it is.
var fieldHelp = map[Field]string{
	FieldWhere:    "--where (all hold): reason=rejected error~RE age>1h retries>=3",
	FieldRate:     "--rate: e.g. 50/s or 600/m, at most that many (empty: no limit)",
	FieldMaxMoves: "--max-moves: a message ladder moved this often stays (0: no guard)",
}

// keyHints renders "enter preview · tab next field" from bindings' help
// (the footer shows the same bindings), skipping disabled ones.
func keyHints(width int, st *style.Styles, bs ...key.Binding) string {
	var parts []string
	for _, b := range bs {
		if !b.Enabled() {
			continue
		}
		parts = append(parts, st.Key.Render(b.Help().Key)+" "+st.Muted.Render(b.Help().Desc))
	}
	return styled.Truncate(strings.Join(parts, st.Muted.Render(" · ")), width)
}

// describeTarget says where a request sends n messages (planned, the dry
// run's plan, names an origin shared by all).
func describeTarget(t moveplan.Target, n int, planned []moveplan.Route) string {
	return termtext.Sanitize(present.Target(t, n, planned))
}

// describeScope says which messages a request takes; planned is how many
// the dry run found, so "the first 500" with 22 ready says what happens.
func describeScope(req broker.MoveRequest, planned int) string {
	switch {
	case !req.Where.Empty() && req.Limit > 0:
		return "the first " + strconv.Itoa(req.Limit) + " chosen by --where " + termtext.Sanitize(present.WhereText(req.Where))
	case !req.Where.Empty():
		return "those chosen by --where " + termtext.Sanitize(present.WhereText(req.Where))
	case len(req.Positions) == 1:
		return "message #" + strconv.Itoa(req.Positions[0])
	case len(req.Positions) > 1:
		return strconv.Itoa(len(req.Positions)) + " marked messages"
	case req.Limit > 0 && planned < req.Limit:
		return "all that are ready, fewer than the " + strconv.Itoa(req.Limit) + " asked for"
	case req.Limit == 1:
		return "the first message"
	case req.Limit > 0:
		return "the first " + strconv.Itoa(req.Limit) + " messages"
	}
	return "every ready message"
}

// skippedPlan reports a planned entry that will not move.
func skippedPlan(p moveplan.Route) bool { return !p.Moves() }

// routesText says how many messages take which way ("3 via tier
// orders.wait.5s, 1 via a ladder delay queue"), from the plan's counts.
func routesText(rep *broker.MoveReport) string {
	return termtext.Sanitize(present.Routes(rep.Routes))
}

// renderMovePreview is the confirmation: count, source, target and delay,
// then what the dry run planned, message by message; a message that will
// be skipped shows only why.
func renderMovePreview(queue string, req broker.MoveRequest, rep *broker.MoveReport, err error, width, height int, st *style.Styles, hints []key.Binding) []string {
	verb, title := "Move ", "Confirm move"
	if isReplaySource(queue) {
		verb, title = "Replay ", "Confirm replay"
	}
	lines := []string{st.Title.Render(termtext.Truncate(title, width)), ""}
	switch {
	case err != nil:
		lines = append(lines, styled.Wrap(st.Error, "dry run failed: "+termtext.Sanitize(err.Error()), width)...)
		return append(lines, "", keyHints(width, st, hints...))
	case rep == nil:
		return append(lines, st.Muted.Render(termtext.Truncate("planning (dry run)…", width)), "", keyHints(width, st, hints...))
	}
	scope, delay := describeScope(req, rep.Requested), moveDelay(req)
	if req.Pick != nil {
		scope = "those holding others back"
	}
	what := verb + present.Plural(rep.Requested, "message", "messages") + " (" + scope + ") from " +
		termtext.Sanitize(queue) + " to " + describeTarget(req.To, rep.Requested, rep.Planned) + ", " + delay
	if v := routesText(rep); v != "" && (req.Delay > 0 || req.Pick != nil) {
		what += ": " + v
	}
	if v := present.Reaches(rep.Planned); v != "" {
		// Every queue a route reaches, as the CLI's question says it.
		what += ", reaching " + termtext.Sanitize(v)
	}
	if req.ResetRetries {
		what += ", retry count reset to 0"
	}
	if v := present.Pace(req.Rate); v != "" {
		what += ", " + v
	}
	if !isReplaySource(queue) && usecase.PreviewCapped(req, rep) {
		what += "; " + present.PreviewCapped(usecase.PreviewCap)
	}
	lines = append(lines, styled.Wrap(st.Strong, what+"?", width)...)
	if v := present.CrashRisk(rep.Planned); v != "" {
		lines = append(lines, styled.Wrap(st.Warning, strings.ToUpper(v[:1])+v[1:]+" (why below)", width)...)
	}
	skipped := 0
	for _, p := range rep.Planned {
		if skippedPlan(p) {
			skipped++
		}
	}
	if skipped > 0 {
		text := present.Plural(skipped, "message", "messages") + " will be skipped; " + itStays(skipped) + " in " + termtext.Sanitize(queue) + " (reasons below)"
		if skipped == rep.Requested {
			text = "Nothing would move: " + text
		}
		lines = append(lines, styled.Wrap(st.Warning, text, width)...)
	}
	lines = append(lines, "")
	if len(rep.Planned) > 0 {
		lines = append(lines, st.Section.Render("Dry run"))
		notes := 0
		for _, n := range rep.Notes {
			notes += len(termtext.Wrap(termtext.Sanitize(n), width))
		}
		room := max(2, height-len(lines)-notes-2)
		rows := make([][]string, len(rep.Planned))
		total := 0
		for i, p := range rep.Planned {
			if slices.Contains(rep.Notes, p.Note) {
				p.Note = "" // said once below, as the CLI does
			}
			// A row is wrapped, not cut: its end says the way and the note.
			rows[i] = wrapIndented(renderPlanned(p), width, 4)
			total += len(rows[i])
		}
		used := 0
		for i, row := range rows {
			// Rows that do not fit are counted, on the one line kept for
			// it; the first is always shown, whole.
			if i > 0 && total > room && used+len(row) > room-1 {
				lines = append(lines, st.Muted.Render("  … "+strconv.Itoa(len(rows)-i)+" more"))
				break
			}
			lines = append(lines, row...)
			used += len(row)
		}
	}
	for _, n := range rep.Notes {
		lines = append(lines, styled.Wrap(st.Warning, termtext.Sanitize(n), width)...)
	}
	lines = append(lines, "", keyHints(width, st, hints...))
	return lines
}

func renderPlanned(p moveplan.Route) string {
	id := p.MessageID
	if id == "" {
		id = present.NoValue
	}
	s := "  #" + strconv.Itoa(p.Position) + " " + termtext.Sanitize(id)
	if skippedPlan(p) {
		return s + ": skipped: " + termtext.Sanitize(p.Skip)
	}
	to := "exchange " + termtext.Sanitize(p.Exchange)
	if p.Exchange == "" {
		to = "default exchange"
	}
	s += " → " + to + " key " + strconv.Quote(termtext.Sanitize(p.RoutingKey))
	if p.Via != topology.ViaDirect {
		s += " · " + present.Via(p.Via)
		if p.Queue != "" {
			s += " " + termtext.Sanitize(p.Queue)
		}
	}
	if len(p.Reaches) > 0 {
		s += " · reaches " + termtext.Sanitize(strings.Join(p.Reaches, ", "))
	}
	if p.Note != "" {
		s += " (" + termtext.Sanitize(p.Note) + ")"
	}
	return s
}

// renderMoveProgress shows the bar with rate and ETA; hints are the keys
// while the move runs (none once it has finished or is being cancelled).
func renderMoveProgress(queue string, req broker.MoveRequest, p broker.MoveProgress, bar string, cancelling, paused bool, width int, st *style.Styles, hints []key.Binding) []string {
	moving := "Moving from "
	if isReplaySource(queue) {
		moving = "Replaying "
	}
	head := moving + termtext.Sanitize(queue) + " to " + describeTarget(req.To, p.Total, req.Expect) + ", " + moveDelay(req)
	if v := present.Pace(req.Rate); v != "" {
		head += ", " + v
	}
	lines := []string{st.Title.Render(termtext.Truncate(head, width)), ""}
	if bar != "" {
		lines = append(lines, bar)
	}
	lines = append(lines, termtext.Truncate(progressLine(p), width))
	if p.Blocked != "" {
		// A resource alarm: nothing moves until the broker clears it.
		lines = append(lines, st.Warning.Render(termtext.Truncate(present.PublishBlocked(termtext.Sanitize(p.Blocked)), width)))
	}
	if paused {
		lines = append(lines, styled.Wrap(st.Warning, "paused: nothing more is taken until p resumes (in-flight confirms still settle)", width)...)
	}
	if cancelling {
		lines = append(lines, styled.Wrap(st.Warning, "cancelling: stopping after the batch in flight is settled…", width)...)
	} else if len(hints) > 0 {
		lines = append(lines, keyHints(width, st, hints...))
	}
	return lines
}

// progressLine is "7 of 12 · 3.5 msg/s · ETA 2s · moved 7 · failed 0".
func progressLine(p broker.MoveProgress) string {
	return present.Progress(p.Done, p.Total, p.Moved, p.Failed, p.Elapsed)
}

// maxSkipReasons is how many skipped messages the summary explains one by
// one before "… N more".
const maxSkipReasons = 4

// renderMoveSummary says what the move did: a move that went through every
// message is a result (all moved, some or none), told with the reasons for
// what stayed; only a move that stopped early is an error.
func renderMoveSummary(queue string, req broker.MoveRequest, rep *broker.MoveReport, err error, width int, st *style.Styles, hints []key.Binding) []string {
	var lines []string
	finished := rep != nil && rep.Moved+rep.Failed+rep.Returned+rep.Skipped >= rep.Requested &&
		(err == nil || errors.Is(err, broker.ErrPartial))
	switch {
	case err != nil && !finished && errors.Is(err, context.Canceled) && rep != nil:
		// Stopped on purpose (esc, or q): a result, not a failure, and
		// "context canceled" is no news to the one who pressed the key.
		lines = append(lines, styled.Wrap(st.Warning, stoppedByYou(rep, termtext.Sanitize(queue)), width)...)
	case err != nil && !finished:
		lines = append(lines, styled.Wrap(st.Error, "move stopped: "+termtext.Sanitize(err.Error()), width)...)
	}
	if rep != nil {
		lines = append(lines, st.Section.Render("Summary"))
		src := termtext.Sanitize(queue)
		if finished {
			left := rep.Requested - rep.Moved
			switch {
			case rep.Requested == 0:
				lines = append(lines, styled.Wrap(st.Strong, "Nothing to move: no message was ready", width)...)
			case left <= 0:
				lines = append(lines, styled.Wrap(st.Strong, "Moved "+allOf(rep.Requested), width)...)
			case rep.Moved == 0:
				lines = append(lines, styled.Wrap(st.Warning, "Nothing moved: "+allOf(rep.Requested)+" "+stays(rep.Requested)+" in "+src, width)...)
			default:
				lines = append(lines, styled.Wrap(st.Warning, "Moved "+strconv.Itoa(rep.Moved)+" of "+strconv.Itoa(rep.Requested)+
					"; "+strconv.Itoa(left)+" "+stays(left)+" in "+src, width)...)
			}
		}
		lines = append(lines, termtext.Truncate("moved "+strconv.Itoa(rep.Moved)+" · failed "+strconv.Itoa(rep.Failed)+
			" · returned "+strconv.Itoa(rep.Returned)+" · skipped "+strconv.Itoa(rep.Skipped)+" of "+strconv.Itoa(rep.Requested), width))
		to := "to " + describeTarget(req.To, rep.Requested, req.Expect)
		if v := routesText(rep); v != "" && rep.DelayMS > 0 {
			to += ": " + v
		}
		if rep.DelayMS > 0 {
			to += " · delay " + retry.FormatDelay(time.Duration(rep.DelayMS)*time.Millisecond)
		}
		lines = append(lines, termtext.Wrap(to, width)...)
		lines = append(lines, renderSkipReasons(rep.Planned, width, st)...)
		if rep.DuplicatesPossible {
			lines = append(lines, styled.Wrap(st.Warning, "duplicates possible: a message may have reached the target without its source being acked", width)...)
		} else {
			lines = append(lines, termtext.Truncate("duplicates possible: no", width))
		}
		for _, n := range rep.Notes {
			lines = append(lines, styled.Wrap(st.Muted, termtext.Sanitize(n), width)...)
		}
		if finished && err != nil && rep.Failed > 0 {
			// Failures may have a cause the counts do not tell.
			lines = append(lines, styled.Wrap(st.Muted, "broker: "+termtext.Sanitize(err.Error()), width)...)
		}
	}
	lines = append(lines, "", keyHints(width, st, hints...))
	return lines
}

// stoppedByYou is the summary's first line after a deliberate stop: what
// moved and what stays.
func stoppedByYou(rep *broker.MoveReport, src string) string {
	left := max(0, rep.Requested-rep.Moved)
	return "move stopped by you: " + strconv.Itoa(rep.Moved) + " moved, " + strconv.Itoa(left) + " " + stays(left) + " in " + src
}

// stays agrees with a count: "1 stays", "3 stay".
func stays(n int) string {
	if n == 1 {
		return "stays"
	}
	return "stay"
}

// itStays is "it stays" or "they stay", after a count already said.
func itStays(n int) string {
	if n == 1 {
		return "it stays"
	}
	return "they stay"
}

// allOf is "the message" or "all 3 messages".
func allOf(n int) string {
	if n == 1 {
		return "the message"
	}
	return "all " + strconv.Itoa(n) + " messages"
}

// renderSkipReasons lists why messages were not moved: the first few
// entries of the report that carry a reason, then how many more.
func renderSkipReasons(planned []moveplan.Route, width int, st *style.Styles) []string {
	var lines []string
	n := 0
	for _, p := range planned {
		if p.Moves() {
			continue
		}
		if n == 0 {
			lines = append(lines, st.Section.Render(termtext.Truncate("Not moved", width)))
		}
		n++
		if n <= maxSkipReasons {
			id := p.MessageID
			if id == "" {
				id = present.NoValue
			}
			text := "#" + strconv.Itoa(p.Position) + " " + termtext.Sanitize(id) + ": " + termtext.Sanitize(p.Skip)
			for i, l := range termtext.Wrap(text, max(1, width-2)) {
				if i == 2 {
					break // two lines a reason: the list stays short
				}
				lines = append(lines, "  "+l)
			}
		}
	}
	if n > maxSkipReasons {
		lines = append(lines, st.Muted.Render("  … "+strconv.Itoa(n-maxSkipReasons)+" more"))
	}
	return lines
}

// wrapIndented wraps text at words, continuation lines indented by indent
// cells (a list's rows stay apart).
func wrapIndented(text string, width, indent int) []string {
	ws := termtext.Wrap(text, width)
	if len(ws) <= 1 || width <= indent+10 {
		return ws
	}
	rest := termtext.Wrap(strings.Join(ws[1:], " "), width-indent)
	out := []string{ws[0]}
	for _, r := range rest {
		out = append(out, strings.Repeat(" ", indent)+r)
	}
	return out
}

// replaySource names a replay's source where a move names its queue.
func replaySource(file string) string { return "dump file " + file }

func isReplaySource(s string) bool { return strings.HasPrefix(s, "dump file ") }

func formTitle(source string) string {
	if isReplaySource(source) {
		return "Replay " + termtext.Sanitize(source)
	}
	return "Move / re-publish from " + termtext.Sanitize(source)
}

// moveDelay is a move's delay in words; an unblock's are per message.
func moveDelay(req broker.MoveRequest) string {
	if req.Pick != nil {
		return "each after its remaining delay"
	}
	return present.Delay(req.Delay)
}
