package present

import (
	"slices"
	"strconv"
	"strings"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/retry"
)

// RetryCount is a message's retry count as a table shows it: "~" before a
// count read from x-death in queues ladder inferred to be retry queues
// (learned from messages read, or the queue's own deaths outside any
// ladder), as AGE marks a time that is not the message's own.
func RetryCount(r retry.RetryState) string {
	n := strconv.FormatInt(r.Count, 10)
	if RetryGuessed(r) {
		return "~" + n
	}
	return n
}

// RetryGuessed reports whether r's count rests on an inference: which
// queues' x-death entries count was not said by the topology alone, or a
// counter read from its name alone (retry's guess).
func RetryGuessed(r retry.RetryState) bool {
	return r.Source == retry.SourceXDeath && (r.CountFrom == retry.CountFromMessages || r.CountFrom == retry.CountFromQueue) ||
		r.IsGuessed(retry.GuessedCount)
}

// RetryFrom says where a count read from x-death, or no count, comes from,
// in words (the inspector's retries line, peek's notes): which queues'
// deaths count and what made them count. "" for a count a convention's
// own header gives (the caller names the header).
func RetryFrom(r retry.RetryState, deaths int) string {
	switch r.Source {
	case "", retry.SourceNone:
		if deaths > 0 {
			// Dead-lettered, but in no queue that counts as a retry.
			return "no retry recorded"
		}
		return "no retry recorded: a first delivery"
	case retry.SourceXDeath:
	default:
		return ""
	}
	in := "from x-death"
	if len(r.CountedIn) > 0 {
		in += " in " + strings.Join(r.CountedIn, ", ")
	}
	switch r.CountFrom {
	case retry.CountFromTopology:
		return in + ": its ladder's retry queues, by the topology"
	case retry.CountFromMessages:
		return in + ": its ladder's retry queues as the messages read showed them, not the topology alone"
	case retry.CountFromQueue:
		return in + " itself: the queue is in no ladder"
	}
	return in
}

// RetryNotes are peek's notes under its table: one line for each way a
// count shown was inferred (RetryGuessed), said once, at most maxRetryNotes.
func RetryNotes(ms []broker.Message) []string {
	var out []string
	more := 0
	for _, m := range ms {
		if !RetryGuessed(m.Retry) {
			continue
		}
		n := "~ retries " + RetryFrom(m.Retry, len(m.Deaths))
		switch {
		case slices.Contains(out, n):
		case len(out) < maxRetryNotes:
			out = append(out, n)
		default:
			more++
		}
	}
	if more > 0 {
		out = append(out, "~ and "+Plural(more, "message", "messages")+" counted from other queues (the inspector says which)")
	}
	return out
}

// maxRetryNotes bounds RetryNotes: a queue of messages from many ladders
// would otherwise print a note each.
const maxRetryNotes = 4
