package ui

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/broker/rabbit"
	"github.com/ladder-tui/ladder/retry/topology"
)

// With management stats off the API has no message_stats and no consumer
// counts; the home screen still shows a ladder's rates (from Prometheus)
// and its consumers, and says where its rates come from.
func TestHomeShowsRatesWithManagementStatsOff(t *testing.T) {
	r := brokertest.OwnVhostOn(t, brokertest.RequireNoStats(t))
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	conn, err := r.DialAMQP(ctx, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ch.QueueDeclare("work.dlq", true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := ch.QueueDeclare("work", true, false, false, false, amqp.Table{
		"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "work.dlq"}); err != nil {
		t.Fatal(err)
	}
	// A worker acks everything; a publisher sends 100 a second.
	cch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	deliveries, err := cch.Consume("work", "", false, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for d := range deliveries {
			_ = d.Ack(false)
		}
	}()
	pch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		defer wg.Done()
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				_ = pch.PublishWithContext(ctx, "", "work", false, false, amqp.Publishing{Body: []byte("x")})
			}
		}
	}()
	defer func() { cancel(); _ = cch.Close(); _ = pch.Close(); wg.Wait() }()

	live, err := rabbit.NewLive(r, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	h := newHarnessOn(t, live, Options{}, 160, 48).start()
	// Prometheus counters move every collection interval (5 s by default):
	// poll until two polls see the publisher, within a generous bound.
	deadline := time.Now().Add(60 * time.Second)
	var row string
	for {
		time.Sleep(time.Second)
		h.send(pollMsg{gen: h.m.gen})
		row = lineWith(h.plain(), "work ")
		snap := h.m.home.snap
		if snap != nil {
			if snap.Topology.RatesFrom != topology.RatesFromPrometheus {
				t.Fatalf("rates from %q (%s), want prometheus", snap.Topology.RatesFrom, snap.Topology.RatesNote)
			}
			// Prometheus's gauges lag by its collection interval too.
			if q, ok := snap.Queue("work"); ok && q.Rates.Known && q.Rates.Publish > 0 && q.Rates.Deliver > 0 &&
				!q.ConsumersUnknown && q.Consumers == 1 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no rates and consumer after 60 s; row:\n%s\n%s", row, h.plain())
		}
	}
	h.mustContain("rates: prometheus")
	f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(row), "▸"))
	// work  main  READY UNACKED CONS IN OUT …: the rates are numbers, not "–".
	if len(f) < 7 || f[4] != "1" || !strings.ContainsAny(f[5], "123456789") || !strings.ContainsAny(f[6], "123456789") {
		t.Fatalf("row %q: want 1 consumer and non-zero in and out rates", row)
	}
}

func lineWith(s, sub string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			return l
		}
	}
	return ""
}
