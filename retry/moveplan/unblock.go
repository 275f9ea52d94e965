package moveplan

import (
	"fmt"
	"github.com/ladder-tui/ladder/retry/internal/words"
	"github.com/ladder-tui/ladder/retry/topology"
	"time"
)

// UnblockInput is one peeked message of a wait queue, in queue order:
// what identifies it (see Pick) and its HoL mark.
type UnblockInput struct {
	MessageID, BodyDigest string
	Expiration            string
	Timestamp             time.Time
	Mark                  topology.HoLMark
}

// UnblockPick is a message that holds others back, with the delay it
// still has (rounded up to the second) as of the analysis.
type UnblockPick struct {
	Position   int           `json:"position"`
	MessageID  string        `json:"message_id"`
	BodyDigest string        `json:"body_digest"`
	DueAt      time.Time     `json:"due_at"`
	Remaining  time.Duration `json:"-"`
	// RemainingMS is Remaining in JSON.
	RemainingMS int64 `json:"remaining_ms"`
	// Expiration and Timestamp tell it from a message with the same id and
	// body (see Pick).
	Expiration string    `json:"-"`
	Timestamp  time.Time `json:"-"`
}

// UnblockPlan is what ladder unblock moves and why.
type UnblockPlan struct {
	Queue  string `json:"queue"`
	Target Target `json:"-"`
	// To is Target as the user writes it (queue:NAME, exchange:NAME[:KEY]).
	To    string        `json:"to"`
	Picks []UnblockPick `json:"picks"`
	// Behind counts the messages the picks hold back.
	Behind int `json:"held_back"`
	// Kept counts messages holding others back that stay (never due, or
	// no known remaining delay): Notes say why.
	Kept  int       `json:"kept"`
	Notes []string  `json:"notes"`
	At    time.Time `json:"at"`
}

// Pick is the plan as a Spec.Pick: each message by identity and
// position, its wait queue that of its remaining delay as of the peek.
func (u UnblockPlan) Pick() []Pick {
	out := make([]Pick, len(u.Picks))
	for i, p := range u.Picks {
		out[i] = Pick{Position: p.Position, MessageID: p.MessageID, BodyDigest: p.BodyDigest,
			Expiration: p.Expiration, Timestamp: p.Timestamp, DueAt: p.DueAt, Delay: p.Remaining}
	}
	return out
}

// Kinds of dead-letter route (DeadLetterTarget).
const (
	DeadLettersDropped        = "dropped"  // no dead-letter exchange
	DeadLettersOwnKeysDefault = "own-keys" // default exchange, the messages' own keys
	DeadLettersTarget         = "target"   // a move target
)

// DeadLetterTarget is where a queue with these settings dead-letters, as a
// move target, and which kind of route that is: without a dead-letter
// exchange, or through the default exchange with the messages' own keys,
// there is no single target.
func DeadLetterTarget(set topology.QueueSettings) (Target, string) {
	switch {
	case !set.HasDeadLetterExchange:
		return Target{}, DeadLettersDropped
	case set.DeadLetterExchange == "" && !set.HasDeadLetterRoutingKey:
		return Target{}, DeadLettersOwnKeysDefault
	case set.DeadLetterExchange == "":
		return Target{Kind: TargetQueue, Name: set.DeadLetterRoutingKey}, DeadLettersTarget
	}
	return Target{Kind: TargetExchange, Name: set.DeadLetterExchange, RoutingKey: set.DeadLetterRoutingKey, HasKey: set.HasDeadLetterRoutingKey}, DeadLettersTarget
}

// PlanUnblock finds, among a wait queue's messages (head first, as HoL
// marked them at now), those holding others back: a message whose
// remaining delay is longer than that of some message behind it. Moved
// into per-delay wait queues with that remaining delay (through the move
// planner), each still leaves when it was due, and every message left
// behind is then in due order, so it leaves on time too. A never-due
// message cannot be given a delay, and one whose enqueue time is only
// estimated has no known remaining delay: both stay, with a note.
// set is the queue's settings: its dead-letter route is where the picked
// messages go after their delay.
//
// released is how many messages left the queue while it was read (a peek
// taking the head lets the broker expire what was due behind it): the
// first message not yet due was holding those, and would hold whatever
// arrives next, so it is picked too.
func PlanUnblock(queue string, set topology.QueueSettings, msgs []UnblockInput, released int64, now time.Time) (UnblockPlan, error) {
	u := UnblockPlan{Queue: queue, Picks: []UnblockPick{}, Notes: []string{}, At: now}
	t, route := DeadLetterTarget(set)
	switch route {
	case DeadLettersDropped:
		return u, fmt.Errorf("unblock %s: it has no dead-letter exchange, so its messages expire into nothing: there is nowhere to send them after their delay", queue)
	case DeadLettersOwnKeysDefault:
		return u, fmt.Errorf("unblock %s: it dead-letters through the default exchange with the messages' own routing keys, which lead back to itself", queue)
	}
	u.Target = t
	// minBehind[i]: the smallest remaining delay among messages after i
	// that will be due at all.
	const never = time.Duration(1<<63 - 1)
	remaining := make([]time.Duration, len(msgs))
	for i, m := range msgs {
		remaining[i] = never
		if !m.Mark.NeverDue {
			remaining[i] = m.Mark.DueAt.Sub(now)
		}
	}
	minBehind := never
	holds := make([]bool, len(msgs))
	for i := len(msgs) - 1; i >= 0; i-- {
		// An overdue message leaves the moment it reaches the head: it
		// holds nothing back.
		holds[i] = remaining[i] > 0 && remaining[i] > minBehind
		minBehind = min(minBehind, remaining[i])
	}
	if released > 0 && len(msgs) > 0 && remaining[0] > 0 {
		holds[0] = true
	}
	nNever, estimated := 0, 0
	first := -1
	for i, m := range msgs {
		if !holds[i] {
			continue
		}
		switch {
		case m.Mark.NeverDue:
			nNever++
			continue
		case m.Mark.Estimated:
			estimated++
			continue
		}
		if first < 0 {
			first = i
		}
		d := remaining[i]
		if r := d % time.Second; r != 0 {
			d += time.Second - r
		}
		u.Picks = append(u.Picks, UnblockPick{Position: i, MessageID: m.MessageID, BodyDigest: m.BodyDigest, DueAt: m.Mark.DueAt, Remaining: d, RemainingMS: d.Milliseconds(),
			Expiration: m.Expiration, Timestamp: m.Timestamp})
	}
	for i := range msgs {
		if !holds[i] && first >= 0 && i > first {
			u.Behind++
		}
	}
	if first >= 0 {
		u.Behind += int(released)
	}
	u.To = u.Target.String()
	u.Kept = nNever + estimated
	if nNever > 0 {
		u.Notes = append(u.Notes, fmt.Sprintf("%d never-due %s others back and %s: with no TTL there is no delay to keep (move %s with ladder move)",
			nNever, words.Plural(int64(nNever), "message holds", "messages hold"), words.Plural(int64(nNever), "stays", "stay"), words.Plural(int64(nNever), "it", "them")))
	}
	if estimated > 0 {
		u.Notes = append(u.Notes, fmt.Sprintf("%d %s holding others back %s no timestamp, so %s remaining delay is not known: %s",
			estimated, words.Plural(int64(estimated), "message", "messages"), words.Plural(int64(estimated), "has", "have"),
			words.Plural(int64(estimated), "its", "their"), words.Plural(int64(estimated), "it stays", "they stay")))
	}
	return u, nil
}
