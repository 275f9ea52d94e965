package movedialog

import (
	"context"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/pace"
	"github.com/ladder-tui/ladder/internal/present"
)

// What the app reads of the dialog: the root routes answers and questions
// by ID, the peek-consent rule reads the dry run's request.

// ID is the dialog's current Move call: its results carry it.
func (m *Model) ID() int { return m.id }

// Spec is what the dialog was opened on.
func (m *Model) Spec() Spec { return m.spec }

// Request is the move asked for (its dry run, or the move running).
func (m *Model) Request() broker.MoveRequest { return m.req }

// Preview is the dry run's report, nil until it has answered.
func (m *Model) Preview() *broker.MoveReport { return m.preview }

// Step is where the dialog is.
func (m *Model) Step() Step { return m.step }

// Focus is the form's focused field.
func (m *Model) Focus() Field { return m.focus }

// Text is what is typed in a text field (FieldCount, FieldTargetText,
// FieldDelayText, FieldWhere, FieldRate, FieldMaxMoves); "" for a choice.
func (m *Model) Text(f Field) string {
	switch f {
	case FieldCount:
		return m.count.String()
	case FieldTargetText:
		return m.tTarget.String()
	case FieldDelayText:
		return m.tDelay.String()
	case FieldWhere:
		return m.where.String()
	case FieldRate:
		return m.rate.String()
	case FieldMaxMoves:
		return m.maxMoves.String()
	}
	return ""
}

// SetRunning puts the dialog in its running step at progress p, as though
// a move were in flight that cancel stops: for tests of what surrounds a
// running move (the root's quit, questions, the footer) without one.
func (m *Model) SetRunning(p broker.MoveProgress, cancel context.CancelFunc) {
	m.step, m.id = StepRunning, m.id+1
	m.progress = p
	m.progressCh = make(chan broker.MoveProgress, 1)
	m.gate = &pace.Hold{}
	m.cancel, m.cancelling = cancel, false
}

// Choices are the labels a choice field (FieldScope, FieldTarget,
// FieldDelay) offers, and the index of the one chosen.
func (m *Model) Choices(f Field) (labels []string, at int) {
	switch f {
	case FieldScope:
		for _, o := range m.scopes {
			labels = append(labels, o.label)
		}
		return labels, m.scopeAt
	case FieldTarget:
		for _, o := range m.targets {
			labels = append(labels, o.label)
		}
		return labels, m.targetAt
	case FieldDelay:
		for _, o := range m.delays {
			labels = append(labels, o.label)
		}
		return labels, m.delayAt
	}
	return nil, -1
}

// Fields says what each field of the form means, with the command line's
// flag it is (the ? screen lists them, a line each at 80 columns); none
// past the form.
func (m *Model) Fields() []present.Column {
	if m.step != StepForm {
		return nil
	}
	return []present.Column{
		{Name: "Messages", Meaning: "this one, the marked, the w filter's, the first N, or all"},
		{Name: "N", Meaning: "with the first N: how many (-n)"},
		{Name: "Target", Meaning: "where they go (--to)"},
		{Name: "Delay", Meaning: "how long each waits first (--delay)"},
		{Name: "Retries", Meaning: "reset each retry count to 0 (--reset-retries)"},
		{Name: "Where", Meaning: "with the first N or all: only those it chooses (--where)"},
		{Name: "Rate", Meaning: "at most this many a second or minute, e.g. 50/s (--rate)"},
		{Name: "Max moves", Meaning: "the loop guard: a message moved this often stays (--max-moves)"},
	}
}
