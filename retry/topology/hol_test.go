package topology

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

var holT0 = time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC)

func exp(d time.Duration, ts time.Time) HoLInput {
	return HoLInput{Expiration: d, HasExpiration: true, Timestamp: ts}
}

// The scenario: 10 min, 1 s, 1 s, 15 min, all published at t0, looked
// at 2 s later. The two 1 s messages are held by position 0, ~1 s overdue.
func TestHoLIssueScenario(t *testing.T) {
	now := holT0.Add(2 * time.Second)
	res := HoL([]HoLInput{
		exp(10*time.Minute, holT0), exp(time.Second, holT0), exp(time.Second, holT0), exp(15*time.Minute, holT0),
	}, 0, now)
	if res.Estimated || res.Basis != "publish timestamps" {
		t.Errorf("estimated %v basis %q", res.Estimated, res.Basis)
	}
	want := []HoLMark{
		{Position: 0, DueAt: holT0.Add(10 * time.Minute), TTL: 10 * time.Minute, BlockedBy: -1},
		{Position: 1, DueAt: holT0.Add(time.Second), TTL: time.Second, Blocked: true, BlockedBy: 0, Overdue: time.Second},
		{Position: 2, DueAt: holT0.Add(time.Second), TTL: time.Second, Blocked: true, BlockedBy: 0, Overdue: time.Second},
		{Position: 3, DueAt: holT0.Add(15 * time.Minute), TTL: 15 * time.Minute, BlockedBy: -1},
	}
	for i, m := range res.Marks {
		if m != want[i] {
			t.Errorf("mark %d = %+v\nwant     %+v", i, m, want[i])
		}
	}
	fs := holFindings("orders.wait", res.Marks)
	if len(fs) != 1 || fs[0].Code != CodeHoLRisk || fs[0].Severity != SeverityWarning || fs[0].Queue != "orders.wait" ||
		fs[0].Message != "2 of 4 peeked messages are held behind a longer expiration at position 0; the worst is 1s overdue (head-of-line blocking)" {
		t.Errorf("findings = %+v", fs)
	}
}

func TestHoLRules(t *testing.T) {
	now := holT0.Add(time.Minute)
	t.Run("blocked by the latest due ahead, earliest on ties", func(t *testing.T) {
		res := HoL([]HoLInput{
			exp(2*time.Minute, holT0), exp(5*time.Minute, holT0), exp(5*time.Minute, holT0), exp(3*time.Minute, holT0),
		}, 0, now)
		if m := res.Marks[3]; !m.Blocked || m.BlockedBy != 1 || m.Overdue != 0 {
			t.Errorf("mark 3 = %+v", m)
		}
		if m := res.Marks[2]; m.Blocked {
			t.Errorf("equal due is not blocked: %+v", m)
		}
	})
	t.Run("message ahead already due does not block", func(t *testing.T) {
		// Position 0 is due (broker has not dropped it yet): position 1 is
		// not held by anything still waiting.
		res := HoL([]HoLInput{exp(50*time.Second, holT0), exp(10*time.Second, holT0)}, 0, now)
		if m := res.Marks[1]; m.Blocked || m.Overdue != 50*time.Second {
			t.Errorf("mark 1 = %+v", m)
		}
	})
	t.Run("queue TTL caps per-message TTL", func(t *testing.T) {
		res := HoL([]HoLInput{exp(time.Hour, holT0), {Timestamp: holT0}, exp(time.Second, holT0)}, 30*time.Second, now)
		for i, ttl := range []time.Duration{30 * time.Second, 30 * time.Second, time.Second} {
			if res.Marks[i].TTL != ttl || res.Marks[i].NeverDue {
				t.Errorf("mark %d = %+v, want TTL %v", i, res.Marks[i], ttl)
			}
		}
		if m := res.Marks[2]; m.Blocked { // ahead is due at 30s < now
			t.Errorf("mark 2 = %+v", m)
		}
	})
	t.Run("never-due message blocks everything behind it", func(t *testing.T) {
		res := HoL([]HoLInput{exp(time.Second, holT0), {Timestamp: holT0}, exp(time.Second, holT0), {Timestamp: holT0}}, 0, now)
		if m := res.Marks[1]; !m.NeverDue || m.Blocked || !m.DueAt.IsZero() {
			t.Errorf("mark 1 = %+v", m)
		}
		if m := res.Marks[2]; !m.Blocked || m.BlockedBy != 1 || m.Overdue != 59*time.Second {
			t.Errorf("mark 2 = %+v", m)
		}
		if m := res.Marks[3]; m.Blocked {
			t.Errorf("never behind never is not blocked: %+v", m)
		}
	})
	t.Run("negative expiration is 0", func(t *testing.T) {
		res := HoL([]HoLInput{exp(-time.Second, holT0)}, 0, now)
		if m := res.Marks[0]; m.TTL != 0 || !m.DueAt.Equal(holT0) {
			t.Errorf("mark = %+v", m)
		}
	})
	t.Run("original-expiration passed by the caller is used", func(t *testing.T) {
		// x-death original-expiration "3000" parsed by the caller.
		res := HoL([]HoLInput{exp(3*time.Second, holT0)}, 0, now)
		if m := res.Marks[0]; m.Overdue != 57*time.Second {
			t.Errorf("mark = %+v", m)
		}
	})
}

func TestHoLEstimates(t *testing.T) {
	now := holT0.Add(10 * time.Second)
	t.Run("no timestamps: enqueued now", func(t *testing.T) {
		res := HoL([]HoLInput{exp(time.Minute, time.Time{}), exp(time.Second, time.Time{})}, 0, now)
		if !res.Estimated || !strings.HasPrefix(res.Basis, "no timestamps") {
			t.Errorf("estimated %v basis %q", res.Estimated, res.Basis)
		}
		m := res.Marks[1]
		if !m.Estimated || !m.DueAt.Equal(now.Add(time.Second)) || !m.Blocked || m.BlockedBy != 0 || m.Overdue != 0 {
			t.Errorf("mark 1 = %+v", m)
		}
	})
	t.Run("missing timestamps borrow the nearest ahead, else behind", func(t *testing.T) {
		t1, t3 := holT0.Add(time.Second), holT0.Add(3*time.Second)
		res := HoL([]HoLInput{
			exp(time.Second, time.Time{}), exp(time.Second, t1), exp(time.Second, time.Time{}), exp(time.Second, t3),
		}, 0, now)
		wantEnq := []time.Time{t1, t1, t1, t3}
		for i, m := range res.Marks {
			if !m.DueAt.Equal(wantEnq[i].Add(time.Second)) || m.Estimated != (i%2 == 0) {
				t.Errorf("mark %d = %+v, want enqueue %v", i, m, wantEnq[i])
			}
		}
		if !res.Estimated || res.Basis != "2 of 4 messages have no timestamp: their enqueue time is taken from the nearest timestamped message ahead (or behind)" {
			t.Errorf("basis %q", res.Basis)
		}
	})
	t.Run("empty", func(t *testing.T) {
		if res := HoL(nil, 0, now); len(res.Marks) != 0 || res.Estimated {
			t.Errorf("%+v", res)
		}
		if fs := holFindings("q", nil); fs != nil {
			t.Errorf("%+v", fs)
		}
	})
}

func TestHoLFindingsVariants(t *testing.T) {
	now := holT0
	tests := []struct {
		name string
		in   []HoLInput
		want string
	}{
		{"all the same TTL", []HoLInput{exp(time.Second, now), exp(time.Second, now)}, ""},
		{"blocked, not yet overdue", []HoLInput{exp(time.Minute, now), exp(time.Second, now)},
			"1 of 2 peeked messages will leave late: a longer expiration at position 0 holds them back (head-of-line blocking)"},
		{"different TTLs, none blocked yet", []HoLInput{exp(time.Second, now), exp(15*time.Minute, now)},
			"peeked messages carry different expirations (1s to 15m): a longer one at the head holds back shorter ones behind it"},
		{"never-expiring mixed in behind", []HoLInput{exp(time.Second, now), {Timestamp: now}},
			"peeked messages mix ones that never expire with ones that do: a never-expiring one at the head holds back everything behind it"},
		{"none expire", []HoLInput{{Timestamp: now}, {Timestamp: now}}, ""},
	}
	for _, tt := range tests {
		fs := holFindings("q", HoL(tt.in, 0, now).Marks)
		got := ""
		if len(fs) == 1 {
			got = fs[0].Message
		}
		if got != tt.want || len(fs) > 1 {
			t.Errorf("%s: %+v, want %q", tt.name, fs, tt.want)
		}
	}
}

func TestHoLMarkJSON(t *testing.T) {
	m := HoLMark{Position: 1, DueAt: holT0.Add(time.Second), TTL: time.Second, Blocked: true, BlockedBy: 0, Overdue: 1500 * time.Millisecond}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"position":1,"due_at":"2025-03-14T09:00:01Z","never_due":false,"ttl_ms":1000,"blocked":true,"blocked_by":0,"overdue_ms":1500,"estimated":false}`
	if string(b) != want {
		t.Errorf("JSON = %s\nwant   %s", b, want)
	}
	b, _ = json.Marshal(HoLMark{Position: 2, NeverDue: true, BlockedBy: -1})
	if want := `{"position":2,"due_at":null,"never_due":true,"ttl_ms":null,"blocked":false,"blocked_by":-1,"overdue_ms":0,"estimated":false}`; string(b) != want {
		t.Errorf("JSON = %s\nwant   %s", b, want)
	}
	// In a result, marks marshal through the method too.
	b, _ = json.Marshal(HoLResult{Marks: []HoLMark{m}, Basis: "publish timestamps"})
	if !strings.Contains(string(b), `"overdue_ms":1500`) {
		t.Errorf("result JSON = %s", b)
	}
}

// hol-blocked needs a watched window of HoLBlockedAfter (HoLBlockedWatch
// with a head published that long ago) with messages arriving, messages
// waiting and none leaving beyond estimate noise; a stuck queue never.
func TestHoLBlockedFinding(t *testing.T) {
	ok := HoLEvidence{Window: 14 * time.Minute, Left: 0, Arrived: 2310, Waiting: 2310, HeadAge: 14*time.Minute + 400*time.Millisecond}
	f, found := HoLBlockedFinding("jobs.delay", ok)
	want := "head published 14m ago, nothing left for 14m, 2,310 waiting: a long expiration at the head holds back the rest (ladder unblock, or u, frees them)"
	if !found || f.Code != CodeHoLBlocked || f.Severity != SeverityError || f.Queue != "jobs.delay" || f.Message != want {
		t.Fatalf("%+v %v\nwant %q", f, found, want)
	}
	for name, ev := range map[string]HoLEvidence{
		"watched too short":                {Window: 110 * time.Second, Arrived: 50, Waiting: 50},
		"head old, watched under a minute": {Window: 50 * time.Second, Arrived: 50, Waiting: 50, HeadAge: time.Hour},
		"head young, watched under 2m":     {Window: 90 * time.Second, Arrived: 50, Waiting: 50, HeadAge: 100 * time.Second},
		"messages leave":                   {Window: 10 * time.Minute, Left: 20, Arrived: 60, Waiting: 47},
		"nothing arrives":                  {Window: 10 * time.Minute, Waiting: 50},
		"empty":                            {Window: 10 * time.Minute, Arrived: 5},
		"stuck: nothing expires, no TTL":   {Window: 10 * time.Minute, Arrived: 5, Waiting: 152, HeadAge: time.Hour, Stuck: true},
	} {
		if f, found := HoLBlockedFinding("q", ev); found {
			t.Errorf("%s: %+v", name, f)
		}
	}
	// A minute of watching is enough when the head is 2m old or more.
	if _, found := HoLBlockedFinding("q", HoLEvidence{Window: time.Minute, Arrived: 15, Waiting: 80, HeadAge: 4 * time.Minute}); !found {
		t.Error("an old head and a quiet minute: no finding")
	}
	// Estimate noise (a couple of messages of 35) is not outflow.
	if _, found := HoLBlockedFinding("q", HoLEvidence{Window: 2 * time.Minute, Left: 3, Arrived: 35, Waiting: 117}); !found {
		t.Error("3 of 35 seemingly left (rate noise): no finding")
	}
	if f, _ := HoLBlockedFinding("q", HoLEvidence{Window: 3 * time.Minute, Arrived: 9, Waiting: 9}); !strings.HasPrefix(f.Message, "nothing left for 3m, 9 waiting") {
		t.Errorf("no head timestamp: %q", f.Message)
	}
}

func TestFndCount(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 2310: "2,310", 1234567: "1,234,567", -4500: "-4,500"} {
		if got := fndCount(n); got != want {
			t.Errorf("fndCount(%d) = %q, want %q", n, got, want)
		}
	}
}
