package main

import (
	"context"
	"log"
	"regexp"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/retry"
)

func TestFlags(t *testing.T) {
	cfg, err := parseFlags([]string{"-prefix", "p", "-tiers", "1s, 2s", "-fail", "^x"})
	if err != nil || cfg.Prefix != "p" || len(cfg.Tiers) != 2 || cfg.Tiers[1] != 2*time.Second || cfg.Fail == nil || cfg.Flaky != nil {
		t.Fatalf("%+v %v", cfg, err)
	}
	l := ladderOf(cfg)
	if l.Main != "p.process" || l.DLQ != "p.dlq" || l.Tiers[0].Queue != "p.wait.1s" || l.Tiers[1].Queue != "p.wait.2s" {
		t.Errorf("ladder: %+v", l)
	}
	for _, bad := range [][]string{{"-tiers", "soon"}, {"-tiers", "0s"}, {"-fail", "("}} {
		if _, err := parseFlags(bad); err == nil {
			t.Errorf("%q should fail", bad)
		}
	}
}

// The worker against the real broker, with tiers short enough to wait out:
// a message that keeps failing waits in each tier in turn and ends in the
// DLQ with x-retry-count 3; one that fails once comes back from the first
// tier and is processed; the rest are processed at once. Nothing is left in
// the main queue or the tiers.
func TestWorkerRoutesFailuresThroughTheLadder(t *testing.T) {
	r := brokertest.Require(t)
	var logBuf brokertest.SyncBuffer
	cfg := config{
		URL:    r.AMQPURL,
		Prefix: brokertest.Name(t, ""),
		// The seed's 5s/30s/5m scaled down; the 5^n policy's 100ms,
		// 500ms and 2.5s each wait in the next tier.
		Tiers:      []time.Duration{100 * time.Millisecond, 500 * time.Millisecond, 2500 * time.Millisecond},
		MaxRetries: 3,
		Fail:       regexp.MustCompile(`^fail`),
		Flaky:      regexp.MustCompile(`^flaky`),
		Log:        log.New(&logBuf, "", 0),
		ready:      make(chan struct{}),
	}
	l := ladderOf(cfg)
	ch := brokertest.Channel(t, r, "example worker test")
	t.Cleanup(func() {
		for _, q := range append([]string{l.Main, l.DLQ}, tierQueues(l)...) {
			if _, err := ch.QueueDelete(q, false, false, false); err != nil {
				t.Errorf("delete %s: %v", q, err)
			}
		}
	})

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, cfg) }()
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			cancel()
			if err := <-done; err != nil {
				t.Errorf("worker: %v", err)
			}
		}
	}
	t.Cleanup(stop)
	select {
	case <-cfg.ready:
	case err := <-done:
		stopped = true
		t.Fatalf("worker did not start: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("worker did not start within 30s")
	}

	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	msgs := map[string]string{"m-ok": "ok", "m-fail-1": "fail one", "m-fail-2": "fail two", "m-flaky": "flaky"}
	for id, body := range msgs {
		dc, err := ch.PublishWithDeferredConfirmWithContext(ctx, "", l.Main, true, false, amqp.Publishing{MessageId: id, Body: []byte(body)})
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := dc.WaitContext(ctx); !ok || err != nil {
			t.Fatalf("publish %s: confirmed %v, %v", id, ok, err)
		}
	}

	// Generous: the waits add up to 3.1 s, the rest is the broker's pace
	// (and TTL expiry of a queue's head is not instant).
	deadline := time.Now().Add(90 * time.Second)
	for {
		q, err := ch.QueueDeclarePassive(l.DLQ, true, false, false, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		out := logBuf.String()
		if q.Messages >= 2 && strings.Contains(out, "processed m-ok after 0 retries") && strings.Contains(out, "processed m-flaky after 1 retries") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 90s: %d in the DLQ; worker log:\n%s", q.Messages, out)
		}
		time.Sleep(100 * time.Millisecond)
	}
	stop()

	out := logBuf.String()
	for _, id := range []string{"m-fail-1", "m-fail-2"} {
		for i, tier := range tierQueues(l) {
			if want := "retry " + string(rune('1'+i)) + " of " + id + " via " + tier; !strings.Contains(out, want) {
				t.Errorf("worker log lacks %q:\n%s", want, out)
			}
		}
		if want := "parked " + id + " in " + l.DLQ + " after 3 retries"; !strings.Contains(out, want) {
			t.Errorf("worker log lacks %q:\n%s", want, out)
		}
	}
	if want := "retry 1 of m-flaky via " + l.Tiers[0].Queue; !strings.Contains(out, want) {
		t.Errorf("worker log lacks %q:\n%s", want, out)
	}

	parked := map[string]bool{}
	for {
		d, ok, err := ch.Get(l.DLQ, true)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		parked[d.MessageId] = true
		h := retry.Headers(d.Headers)
		st := retry.ReadState(h, retry.DeathQueues(l))
		if st.Count != 3 || h["x-retry-count"] != int32(3) {
			t.Errorf("%s in the DLQ: count %d, x-retry-count %v (%T)", d.MessageId, st.Count, h["x-retry-count"], h["x-retry-count"])
		}
		// The broker's record, as the worker republished it: the message
		// last died expiring in the longest tier. (4.x may not keep an
		// x-death a client publishes: the count is what a worker relies on.)
		if x := retry.DecodeXDeath(h); len(x.Deaths) > 0 && (x.Deaths[0].Queue != l.Tiers[2].Queue || x.Deaths[0].Reason != retry.ReasonExpired) {
			t.Errorf("%s in the DLQ: x-death %+v", d.MessageId, x.Deaths)
		}
		if !strings.Contains(string(d.Body), "fail") {
			t.Errorf("%s in the DLQ should not be: %q", d.MessageId, d.Body)
		}
	}
	if len(parked) != 2 || !parked["m-fail-1"] || !parked["m-fail-2"] {
		t.Errorf("DLQ held %v, want m-fail-1 and m-fail-2", parked)
	}
	for _, q := range append([]string{l.Main}, tierQueues(l)...) {
		st, err := ch.QueueDeclarePassive(q, true, false, false, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		if st.Messages != 0 {
			t.Errorf("%s holds %d messages, want none", q, st.Messages)
		}
	}
}

func tierQueues(l *retry.Ladder) []string {
	var qs []string
	for _, t := range l.Tiers {
		qs = append(qs, t.Queue)
	}
	return qs
}
