package topology

import (
	"github.com/ladder-tui/ladder/retry"
	"strings"
	"testing"
	"time"
)

func lintVhost() *Vhost {
	return &Vhost{
		Name: "/",
		Exchanges: []Exchange{
			{Name: "delayed", Type: ExchangeDelayed, Arguments: map[string]any{"x-delayed-type": "direct"}},
			{Name: "plain", Type: ExchangeDirect},
		},
		Queues: []Queue{
			{Name: "lazy", Type: QueueClassic, Arguments: map[string]any{"x-queue-mode": "lazy"}},
			{Name: "lazy-by-policy", Type: QueueClassic, Policy: map[string]any{"queue-mode": "lazy"}},
			{Name: "v1", Type: QueueClassic, Arguments: map[string]any{"x-queue-version": int32(1)}},
			{Name: "v2", Type: QueueClassic, Arguments: map[string]any{"x-queue-version": int32(2)}},
			{Name: "mirrored", Type: QueueClassic, Policy: map[string]any{"ha-mode": "all"}},
			{Name: "qq", Type: QueueQuorum},
			{Name: "qq-dlx", Type: QueueQuorum, Arguments: map[string]any{"x-dead-letter-exchange": "plain"}},
			{Name: "qq-unlimited", Type: QueueQuorum, Arguments: map[string]any{"x-delivery-limit": int64(-1)}},
			{Name: "temp", Type: QueueClassic, Transient: true},
			{Name: "fine", Type: QueueClassic},
		},
	}
}

// Each upgrade hazard is found exactly where it is, for the versions it
// concerns.
func TestLintFindsWhatBreaksOnUpgrade(t *testing.T) {
	got := func(target string) string {
		fs, err := Lint(lintVhost(), target)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, f := range fs {
			out = append(out, string(f.Severity)+" "+f.Code+" "+f.Queue+f.Exchange)
		}
		return strings.Join(out, "\n")
	}
	want43 := strings.Join([]string{
		"error queue-version-1 v1", "error classic-mirroring mirrored", "error delayed-exchange-plugin delayed",
		"warning queue-mode lazy", "warning queue-mode lazy-by-policy",
		"warning quorum-no-dead-letter qq", "warning transient-queue temp",
	}, "\n")
	if g := got("4.3"); g != want43 {
		t.Errorf("4.3:\n%s\nwant\n%s", g, want43)
	}
	want40 := strings.Join([]string{
		"error classic-mirroring mirrored", "warning queue-mode lazy", "warning queue-mode lazy-by-policy",
		"warning quorum-no-dead-letter qq", "warning transient-queue temp", "warning delayed-exchange-plugin delayed",
	}, "\n")
	if g := got("4.0"); g != want40 {
		t.Errorf("4.0:\n%s\nwant\n%s", g, want40)
	}
	if _, err := Lint(lintVhost(), "5"); err == nil || !strings.Contains(err.Error(), `--for "5"`) {
		t.Errorf("bad target: %v", err)
	}
}

// A 4.3 quorum queue with built-in delayed retry is a ladder of its own,
// with its DLQ; its delays preview as min(min × count, max).
func TestDelayedRetryQueueIsALadder(t *testing.T) {
	v := &Vhost{Name: "/", Queues: []Queue{
		{Name: "jobs", Type: QueueQuorum, Arguments: map[string]any{"x-delayed-retry-type": "failed", "x-delayed-retry-min": int64(1000),
			"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "jobs.dlq"}, Policy: map[string]any{"delayed-retry-max": float64(2500)}},
		{Name: "jobs.dlq", Type: QueueQuorum},
		{Name: "off", Type: QueueQuorum, Arguments: map[string]any{"x-delayed-retry-type": "disabled"}},
	}}
	ls := Discover(v)
	if len(ls) != 1 || ls[0].Main != "jobs" || ls[0].DLQ != "jobs.dlq" || ls[0].DelayedRetry == nil {
		t.Fatalf("%+v", ls)
	}
	d := *ls[0].DelayedRetry
	if d.Type != "failed" || d.Min != time.Second || d.Max != 2500*time.Millisecond || d.Delay(2) != 2*time.Second || d.Delay(3) != 2500*time.Millisecond {
		t.Errorf("%+v", d)
	}
	s, err := retry.Schedule(d.Policy(), 3, &ls[0])
	if err != nil || s.Attempts[0].Delay != time.Second || s.Attempts[2].Delay != 2500*time.Millisecond {
		t.Errorf("%+v %v", s, err)
	}
}

// A ladder whose consumer publishes into its tiers may count retries from a
// client-published x-death, which 4.x no longer interprets; a ladder whose
// main queue dead-letters into its tier lets the broker count.
func TestLintWarnsOfRetriesCountedFromClientPublishedXDeath(t *testing.T) {
	codes := func(v *Vhost) []Finding {
		fs, err := Lint(v, "4.0")
		if err != nil {
			t.Fatal(err)
		}
		var out []Finding
		for _, f := range fs {
			if f.Code == CodeClientXDeath {
				out = append(out, f)
			}
		}
		return out
	}
	fs := codes(seedGo())
	if len(fs) != 1 || fs[0].Queue != "orders.process" || !strings.Contains(fs[0].Message, "orders.wait.5s, orders.wait.30s, orders.wait.5m") {
		t.Errorf("seed Go (tiers entered by the consumer): %+v", fs)
	}
	if fs := codes(seedPython()); len(fs) != 0 {
		t.Errorf("seed Python (main dead-letters into its tier): %+v", fs)
	}
	// Dead-lettering through a binding of the DLX, keys kept.
	v := seedPython()
	q := seedQueue(v, "main_queue")
	delete(q.Arguments, "x-dead-letter-routing-key")
	if fs := codes(v); len(fs) != 0 {
		t.Errorf("main dead-letters through the DLX's binding: %+v", fs)
	}
}
