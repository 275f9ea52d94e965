package ui

import (
	"context"
	"net/url"
	"strconv"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/broker/rabbit"
	"github.com/ladder-tui/ladder/ui/movedialog"
)

// Issue 33: a move from the UI is paced as ladder move --rate paces it.
// 750 messages moved from the browser's dialog with its rate at 50/s reach
// the target at 50 a second as the broker counts them: the management
// API's publish rate of the target queue, whose highest sample during the
// move is within 20% of 50 (unpaced, the 750 arrive within one statistics
// interval: 120 a second or more). Nothing is timed on ladder's clock.
func TestMoveDialogRateIsTheBrokersPublishRate(t *testing.T) {
	const (
		n    = 750
		rate = 50.0
	)
	r := brokertest.OwnVhost(t)
	ch := brokertest.Channel(t, r, "test move rate")
	for _, q := range []string{"rate.dlq", "rate.target"} {
		if _, err := ch.QueueDeclare(q, true, false, false, false, nil); err != nil {
			t.Fatalf("declare %s: %v", q, err)
		}
	}
	msgs := make([]amqp.Publishing, n)
	for i := range msgs {
		msgs[i] = amqp.Publishing{MessageId: "m-" + strconv.Itoa(i), DeliveryMode: amqp.Persistent, Body: []byte("x")}
	}
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	if err := brokertest.PublishConfirmed(context.Background(), ch, "", "rate.dlq", msgs); err != nil {
		t.Fatal(err)
	}
	live, err := rabbit.NewLive(r, "test move rate")
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()

	h := newHarnessOn(t, live, Options{}, 120, 40).start()
	h.send(openQueueMsg{queue: "rate.dlq", confirmed: true})
	h.mustContain("peeked " + strconv.Itoa(n) + " of " + strconv.Itoa(n))
	h.key("m")
	mv := h.m.move
	for range 5 {
		if labels, at := mv.Choices(movedialog.FieldScope); len(labels) > 0 && labels[at] == "the whole queue ("+strconv.Itoa(n)+" ready)" {
			break
		}
		h.key("right")
	}
	focus := func(f movedialog.Field) {
		t.Helper()
		for range 12 {
			if mv.Focus() == f {
				return
			}
			h.key("tab")
		}
		t.Fatalf("field %v never focused:\n%s", f, h.plain())
	}
	focus(movedialog.FieldTarget)
	h.key("left") // the last choice: a typed target
	h.typeText("queue:rate.target")
	focus(movedialog.FieldRate)
	h.typeText("50/s")
	h.key("enter")
	h.mustContain("Confirm move", "Move "+strconv.Itoa(n)+" messages", "at most 50 a second")

	// The broker's figures, polled on their own from before the move
	// starts (the harness is busy with the dialog's progress while it
	// runs) until two statistics intervals after it ended, so every
	// interval of it is sampled.
	type queueStats struct {
		MessageStats struct {
			Publish        int `json:"publish"`
			PublishDetails struct {
				Rate float64 `json:"rate"`
			} `json:"publish_details"`
		} `json:"message_stats"`
	}
	path := "queues/" + url.PathEscape(r.Vhost) + "/rate.target?columns=message_stats.publish,message_stats.publish_details.rate"
	type sample struct {
		published int
		rate      float64
	}
	sampled := make(chan []sample, 1)
	go func() {
		var out []sample
		var done time.Time
		brokertest.WaitFor(5*time.Minute, func() bool {
			var q queueStats
			if err := brokertest.APIGet(r, path, &q); err != nil {
				return false // the queue's stats may not exist yet
			}
			s := sample{q.MessageStats.Publish, q.MessageStats.PublishDetails.Rate}
			if len(out) == 0 || out[len(out)-1] != s {
				out = append(out, s)
			}
			if s.published >= n && done.IsZero() {
				done = time.Now()
			}
			return !done.IsZero() && time.Since(done) > 12*time.Second
		})
		sampled <- out
	}()
	h.key("enter")
	samples := <-sampled
	h.mustContain("Moved all " + strconv.Itoa(n) + " messages")
	peak := 0.0
	for _, x := range samples {
		peak = max(peak, x.rate)
	}
	t.Logf("rate.target as the management API reported it while the move ran (published, rate/s): %v", samples)
	if len(samples) == 0 || samples[len(samples)-1].published != n {
		t.Fatalf("the broker never counted %d publishes to rate.target: %v", n, samples)
	}
	// The rate is a ceiling: unpaced, the move goes at hundreds a second.
	// A machine with both cores busy may publish slower than asked, so the
	// floor is loose: it only says the broker saw a paced move at all.
	if peak < rate*0.5 || peak > rate*1.2 {
		t.Errorf("the broker saw rate.target published to at %.1f/s at most, want at most %.0f/s +20%% (and over half of it) (samples %v)", peak, rate, samples)
	}
}
