package topology

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// holVhost is the wait queue of issue 32: jobs.wait has no TTL and
// dead-letters back to jobs; jobs dead-letters into it too (so a
// dead-letter route feeds it), and publishers put messages in it with
// expirations of their own.
func holVhost(waiting int64) *Vhost {
	return &Vhost{
		Queues: []Queue{
			{Name: "jobs", Consumers: 1, Arguments: map[string]any{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "jobs.wait"}},
			{Name: "jobs.wait", Messages: waiting, Ready: waiting, Arguments: map[string]any{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "jobs"}},
		},
	}
}

// holLook is a peek of jobs.wait at at: a head due in an hour, then n
// messages of 5 s published a minute ago (overdue, held behind it).
func holLook(at time.Time, n int) (*Look, []HoLInput) {
	in := []HoLInput{{Expiration: time.Hour, HasExpiration: true, Timestamp: at.Add(-time.Minute)}}
	for range n {
		in = append(in, HoLInput{Expiration: 5 * time.Second, HasExpiration: true, Timestamp: at.Add(-time.Minute)})
	}
	return LookOf(at, int64(n+1), in, HoL(in, 0, at).Marks), in
}

func codesOf(fs []Finding, queue string) []string {
	var out []string
	for _, f := range fs {
		if f.Queue == queue {
			out = append(out, string(f.Severity)+" "+f.Code)
		}
	}
	return out
}

func findingOf(fs []Finding, code, queue string) (Finding, bool) {
	i := slices.IndexFunc(fs, func(f Finding) bool { return f.Code == code && f.Queue == queue })
	if i < 0 {
		return Finding{}, false
	}
	return fs[i], true
}

// A peek that saw messages held behind a longer expiration makes the
// diagnosis head-of-line blocking, whatever feeds the queue: never "stuck"
// nor "dead-lettering strips expiration" for messages that carry their
// own. The finding holds while the queue holds them, and clears when the
// cause does: the queue emptied to its head (unblocked), the head due, the
// head another message.
func TestLookNamesHeadOfLineBlocking(t *testing.T) {
	at := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	look, _ := holLook(at, 500)
	if look.Blocked != 500 || look.Overdue != 500 || look.Expiring != 501 || look.BlockedBy != 0 || !look.BlockedUntil.Equal(at.Add(59*time.Minute)) {
		t.Fatalf("look %+v", look)
	}
	v := holVhost(501)
	// Unlooked, the dead-letter route in is a risk, said as one.
	if got := codesOf(Findings(v, Discover(v)), "jobs.wait"); !slices.Equal(got, []string{"warning stuck"}) {
		t.Fatalf("unlooked: %q", got)
	}
	v.Apply(Evidence{"jobs.wait": {Expiration: true, Look: look}})
	fs := FindingsAt(v, Discover(v), at.Add(time.Second))
	f, ok := findingOf(fs, CodeHoLBlocked, "jobs.wait")
	if !ok || f.Severity != SeverityError {
		t.Fatalf("looked: %+v", fs)
	}
	for _, want := range []string{"500 messages wait behind a longer expiration at position 0", "500 already overdue when peeked at 12:00:00", "ladder unblock"} {
		if !strings.Contains(f.Message, want) {
			t.Errorf("message %q lacks %q", f.Message, want)
		}
	}
	if _, ok := findingOf(fs, CodeStuck, "jobs.wait"); ok || strings.Contains(f.Message, "strips") {
		t.Fatalf("a stuck diagnosis for messages with their own expiration: %+v", fs)
	}

	// Unblocked: only the head is left.
	after := holVhost(1)
	after.Apply(Evidence{"jobs.wait": {Expiration: true, Look: look}})
	if got := codesOf(FindingsAt(after, Discover(after), at.Add(2*time.Minute)), "jobs.wait"); !slices.Equal(got, []string{"warning hol-risk"}) {
		t.Errorf("after unblock: %q, want the risk alone", got)
	}
	// The head is due: it leaves, and the rest with it.
	if _, ok := findingOf(FindingsAt(v, Discover(v), at.Add(59*time.Minute)), CodeHoLBlocked, "jobs.wait"); ok {
		t.Error("hol-blocked once the head is due")
	}
	// Another head: the look no longer tells about the queue.
	other := holVhost(501)
	other.Queues[1].HeadMessageTimestamp = at
	other.Apply(Evidence{"jobs.wait": {Expiration: true, Look: look}})
	if _, ok := findingOf(FindingsAt(other, Discover(other), at.Add(time.Second)), CodeHoLBlocked, "jobs.wait"); ok {
		t.Error("hol-blocked from a look at another head")
	}
}

// A look at messages that came by dead-lettering (their expiration
// stripped) makes the stuck finding an error with what was seen; one at
// messages with expirations of their own does not.
func TestLookConfirmsStuck(t *testing.T) {
	at := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	in := make([]HoLInput, 37)
	for i := range in {
		in[i] = HoLInput{Expiration: 5 * time.Second, HasExpiration: true, Stripped: true, Timestamp: at.Add(-time.Minute)}
	}
	v := holVhost(40)
	v.Apply(Evidence{"jobs.wait": {Look: LookOf(at, 40, in, HoL(in, 0, at).Marks)}})
	f, ok := findingOf(FindingsAt(v, Discover(v), at), CodeStuck, "jobs.wait")
	if !ok || f.Severity != SeverityError {
		t.Fatalf("stuck from a look at stripped messages: %+v", f)
	}
	if want := `all 37 messages peeked at 12:00:00 never return to "jobs": they were dead-lettered into this queue, which strips per-message expiration, and it has no TTL`; f.Message != want {
		t.Errorf("message %q\nwant    %q", f.Message, want)
	}
	// Emptied since: nothing is stuck any more.
	empty := holVhost(0)
	empty.Apply(Evidence{"jobs.wait": {Look: LookOf(at, 40, in, HoL(in, 0, at).Marks)}})
	if f, ok := findingOf(FindingsAt(empty, Discover(empty), at), CodeStuck, "jobs.wait"); ok && f.Severity == SeverityError {
		t.Errorf("an empty queue still stuck: %+v", f)
	}
}

// Evidence keeps the latest look of a queue.
func TestEvidenceKeepsTheLatestLook(t *testing.T) {
	at := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	old, _ := holLook(at, 3)
	newer, _ := holLook(at.Add(time.Minute), 1)
	e := Evidence{}
	e.Merge(Evidence{"q": {Look: newer}})
	e.Merge(Evidence{"q": {Look: old}})
	if e["q"].Look != newer {
		t.Fatalf("kept %+v, want the newer look", e["q"].Look)
	}
}
