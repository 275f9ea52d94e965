package ui

import (
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/lipgloss/v2"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/keymap"
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/ui/style"
	"github.com/ladder-tui/ladder/ui/termtext"
)

// Pure renderers of the move dialog's steps. Each returns lines of at most
// width cells.

// moveForm is what the form shows.
type moveForm struct {
	queue                  string
	scope, target, delay   string
	reset                  bool
	focus                  int
	count, tTarget, tDelay *lineInput // set when the field is typed
	err                    string
	keys                   *keymap.KeyMap
}

const labelWidth = 10

func renderMoveForm(f moveForm, width int, st *style.Styles) []string {
	lines := []string{
		st.Title.Render(termtext.Truncate("Move / re-publish from "+termtext.Sanitize(f.queue), width)),
		"",
	}
	field := func(id int, label, value string, in *lineInput, hint string) {
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
			line += in.view(min(rest, 40), id == f.focus || in == focusedInput(f), st)
		}
		lines = append(lines, line)
		if hint != "" && in != nil && in == focusedInput(f) {
			lines = append(lines, st.Muted.Render(termtext.Truncate(strings.Repeat(" ", labelWidth)+hint, width)))
		}
	}
	field(fieldScope, "Messages", f.scope, nil, "")
	if f.count != nil {
		field(fieldCount, "N", "", f.count, "how many messages from the head of the queue")
	}
	field(fieldTarget, "Target", f.target, f.tTarget, "type queue:NAME or exchange:NAME:KEY")
	field(fieldDelay, "Delay", f.delay, f.tDelay, "type 30s, 5m, 1h30m (a bare number is ms)")
	reset := "no: keep the retry count"
	if f.reset {
		reset = "yes: reset the retry count to 0"
	}
	field(fieldReset, "Retries", reset, nil, "")
	lines = append(lines, "")
	if f.err != "" {
		lines = append(lines, st.Error.Render(termtext.Truncate(f.err, width)))
	}
	lines = append(lines, keyHints(width, st, f.keys.Confirm, "preview (dry run)", f.keys.Next, "next field", f.keys.Toggle, "change", f.keys.Cancel, "cancel"))
	return lines
}

// focusedInput is the typed field that has the focus, if any.
func focusedInput(f moveForm) *lineInput {
	switch f.focus {
	case fieldCount:
		return f.count
	case fieldTarget:
		return f.tTarget
	case fieldDelay:
		return f.tDelay
	}
	return nil
}

// keyHints renders "enter preview · tab next field" from bindings and words,
// skipping disabled bindings.
func keyHints(width int, st *style.Styles, pairs ...any) string {
	var parts []string
	for i := 0; i+1 < len(pairs); i += 2 {
		b := pairs[i].(key.Binding)
		if !b.Enabled() {
			continue
		}
		parts = append(parts, st.Key.Render(b.Help().Key)+" "+st.Muted.Render(pairs[i+1].(string)))
	}
	return truncateStyled(strings.Join(parts, st.Muted.Render(" · ")), width)
}

// describeTarget says where a request sends messages.
func describeTarget(t broker.Target) string {
	switch t.Kind {
	case broker.TargetOrigin:
		return "their origin"
	case broker.TargetExchange:
		name := t.Name
		if name == "" {
			name = "(default)"
		}
		return "exchange " + termtext.Sanitize(name) + " with key " + strconv.Quote(termtext.Sanitize(t.RoutingKey))
	}
	return "queue " + termtext.Sanitize(t.Name)
}

func describeDelay(d time.Duration) string {
	if d <= 0 {
		return "no delay"
	}
	return "delay " + retry.FormatDelay(d)
}

// describeScope says which messages a request takes.
func describeScope(req broker.MoveRequest) string {
	switch {
	case len(req.Positions) == 1:
		return "message #" + strconv.Itoa(req.Positions[0])
	case len(req.Positions) > 1:
		return strconv.Itoa(len(req.Positions)) + " marked messages"
	case req.Limit > 0:
		return "the first " + strconv.Itoa(req.Limit) + " messages"
	}
	return "every ready message"
}

// renderMovePreview is the confirmation: count, source, target and delay,
// then what the dry run planned, message by message.
func renderMovePreview(queue string, req broker.MoveRequest, rep *broker.MoveReport, err error, width, height int, st *style.Styles, keys *keymap.KeyMap) []string {
	lines := []string{st.Title.Render(termtext.Truncate("Confirm move", width)), ""}
	switch {
	case err != nil:
		lines = append(lines, wrapStyled(st.Error, "dry run failed: "+termtext.Sanitize(err.Error()), width)...)
		return append(lines, "", keyHints(width, st, keys.Cancel, "back to the form"))
	case rep == nil:
		return append(lines, st.Muted.Render(termtext.Truncate("planning (dry run)…", width)))
	}
	what := "Move " + plural(rep.Requested, "message", "messages") + " (" + describeScope(req) + ") from " +
		termtext.Sanitize(queue) + " to " + describeTarget(req.To) + ", " + describeDelay(req.Delay)
	if rep.Via != "" && req.Delay > 0 {
		what += " via " + viaText(rep.Via)
	}
	if req.ResetRetries {
		what += ", retry count reset to 0"
	}
	lines = append(lines, wrapStyled(st.Strong, what+"?", width)...)
	lines = append(lines, "")
	if len(rep.Planned) > 0 {
		lines = append(lines, st.Section.Render("Dry run"))
		room := max(1, height-len(lines)-len(rep.Notes)-3)
		for i, p := range rep.Planned {
			if i == room && len(rep.Planned) > room+1 {
				lines = append(lines, st.Muted.Render("  … "+strconv.Itoa(len(rep.Planned)-i)+" more"))
				break
			}
			lines = append(lines, termtext.Truncate(renderPlanned(p), width))
		}
	}
	for _, n := range rep.Notes {
		lines = append(lines, wrapStyled(st.Warning, termtext.Sanitize(n), width)...)
	}
	lines = append(lines, "", keyHints(width, st, keys.Confirm, "move now", keys.Cancel, "back"))
	return lines
}

func renderPlanned(p broker.PlannedMove) string {
	id := p.MessageID
	if id == "" {
		id = noValue
	}
	to := "exchange " + termtext.Sanitize(p.Exchange)
	if p.Exchange == "" {
		to = "default exchange"
	}
	s := "  #" + strconv.Itoa(p.Position) + " " + termtext.Sanitize(id) + " → " + to + " key " + strconv.Quote(termtext.Sanitize(p.RoutingKey))
	if p.Note != "" {
		s += " (" + termtext.Sanitize(p.Note) + ")"
	}
	return s
}

// renderMoveProgress shows the bar with rate and ETA.
func renderMoveProgress(queue string, req broker.MoveRequest, p broker.MoveProgress, bar string, cancelling bool, width int, st *style.Styles, keys *keymap.KeyMap) []string {
	head := "Moving from " + termtext.Sanitize(queue) + " to " + describeTarget(req.To) + ", " + describeDelay(req.Delay)
	lines := []string{st.Title.Render(termtext.Truncate(head, width)), ""}
	if bar != "" {
		lines = append(lines, bar)
	}
	lines = append(lines, termtext.Truncate(progressLine(p), width))
	if cancelling {
		lines = append(lines, st.Warning.Render(termtext.Truncate("cancelling: stopping after the batch in flight is settled…", width)))
	} else if p.Total == 0 || p.Done < p.Total {
		lines = append(lines, keyHints(width, st, keys.Cancel, "stop after the batch in flight"))
	}
	return lines
}

// progressLine is "7 of 12 · 3.5 msg/s · ETA 2s · moved 7 · failed 0".
func progressLine(p broker.MoveProgress) string {
	var b strings.Builder
	b.WriteString(strconv.Itoa(p.Done))
	if p.Total > 0 {
		b.WriteString(" of " + strconv.Itoa(p.Total))
	}
	if secs := p.Elapsed.Seconds(); secs > 0 && p.Done > 0 {
		rate := float64(p.Done) / secs
		b.WriteString(" · " + fmtRate(rate, true) + " msg/s")
		if p.Total > p.Done {
			eta := time.Duration(float64(p.Total-p.Done) / rate * float64(time.Second))
			b.WriteString(" · ETA " + fmtDur(eta.Round(time.Second)))
		}
	}
	b.WriteString(" · moved " + strconv.Itoa(p.Moved) + " · failed " + strconv.Itoa(p.Failed))
	return b.String()
}

// renderMoveSummary says what the move did, including what may need a look.
func renderMoveSummary(rep *broker.MoveReport, err error, width int, st *style.Styles, keys *keymap.KeyMap) []string {
	var lines []string
	if err != nil {
		lines = append(lines, wrapStyled(st.Error, "move stopped: "+termtext.Sanitize(err.Error()), width)...)
	}
	if rep != nil {
		lines = append(lines, st.Section.Render("Summary"))
		lines = append(lines, termtext.Truncate("moved "+strconv.Itoa(rep.Moved)+" · failed "+strconv.Itoa(rep.Failed)+
			" · returned "+strconv.Itoa(rep.Returned)+" · skipped "+strconv.Itoa(rep.Skipped)+" of "+strconv.Itoa(rep.Requested), width))
		to := "to " + termtext.Sanitize(rep.Target)
		if rep.Via != "" && rep.DelayMS > 0 {
			to += " via " + viaText(rep.Via)
		}
		if rep.DelayMS > 0 {
			to += " · delay " + retry.FormatDelay(time.Duration(rep.DelayMS)*time.Millisecond)
		}
		lines = append(lines, termtext.Truncate(to, width))
		if rep.DuplicatesPossible {
			lines = append(lines, wrapStyled(st.Warning, "duplicates possible: a message may have reached the target without its source being acked", width)...)
		} else {
			lines = append(lines, termtext.Truncate("duplicates possible: no", width))
		}
		for _, n := range rep.Notes {
			lines = append(lines, wrapStyled(st.Muted, termtext.Sanitize(n), width)...)
		}
	}
	lines = append(lines, "", keyHints(width, st, keys.Confirm, "close"))
	return lines
}

// wrapStyled wraps text at words and styles each line.
func wrapStyled(s lipgloss.Style, text string, width int) []string {
	ws := termtext.Wrap(text, width)
	for i := range ws {
		ws[i] = s.Render(ws[i])
	}
	return ws
}

// viaText says in words how a delay is applied.
func viaText(via string) string {
	switch via {
	case "tier":
		return "a wait tier"
	case "delayed_exchange":
		return "the delayed-message exchange"
	case "delay_queue":
		return "a per-delay wait queue"
	}
	return via
}
