package present

import (
	"strings"
	"testing"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/retry"
)

// A count is marked "~" and explained where it rests on an inference:
// retry queues learned from messages, or the queue's own deaths outside
// any ladder; the topology's own count is not marked.
func TestRetryWords(t *testing.T) {
	xd := func(from string) retry.RetryState {
		return retry.RetryState{Count: 2, Source: retry.SourceXDeath, CountedIn: []string{"orders.retry"}, CountFrom: from}
	}
	for _, tt := range []struct {
		r          retry.RetryState
		deaths     int
		count      string
		from       string
		guessed    bool
		noteSubstr string
	}{
		{xd(retry.CountFromTopology), 2, "2", "from x-death in orders.retry: its ladder's retry queues, by the topology", false, ""},
		{xd(retry.CountFromMessages), 2, "~2", "from x-death in orders.retry: its ladder's retry queues as the messages read showed them, not the topology alone", true, "~ retries from x-death in orders.retry"},
		{xd(retry.CountFromQueue), 2, "~2", "from x-death in orders.retry itself: the queue is in no ladder", true, "itself"},
		{xd(""), 2, "2", "from x-death in orders.retry", false, ""},
		{retry.RetryState{Source: retry.SourceNone}, 1, "0", "no retry recorded", false, ""},
		{retry.RetryState{Source: retry.SourceNone}, 0, "0", "no retry recorded: a first delivery", false, ""},
		{retry.RetryState{Count: 3, Source: retry.SourceRetryCount, Kind: "int32"}, 0, "3", "", false, ""},
	} {
		if got := RetryCount(tt.r); got != tt.count {
			t.Errorf("%+v: count %q, want %q", tt.r, got, tt.count)
		}
		if got := RetryFrom(tt.r, tt.deaths); got != tt.from {
			t.Errorf("%+v: from %q, want %q", tt.r, got, tt.from)
		}
		notes := RetryNotes([]broker.Message{{Retry: tt.r}, {Retry: tt.r}})
		if tt.guessed != (len(notes) == 1) || tt.guessed && !strings.Contains(notes[0], tt.noteSubstr) {
			t.Errorf("%+v: notes %q", tt.r, notes)
		}
	}
}

// Notes are said once each, and at most a few: the rest are counted.
func TestRetryNotesAreBounded(t *testing.T) {
	var ms []broker.Message
	for _, q := range []string{"a", "b", "c", "d", "e", "f"} {
		ms = append(ms, broker.Message{Retry: retry.RetryState{Count: 1, Source: retry.SourceXDeath, CountedIn: []string{q}, CountFrom: retry.CountFromMessages}})
	}
	notes := RetryNotes(ms)
	if len(notes) != maxRetryNotes+1 || !strings.Contains(notes[maxRetryNotes], "2 messages counted from other queues") {
		t.Fatalf("notes %q", notes)
	}
}
