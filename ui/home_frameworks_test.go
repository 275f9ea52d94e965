package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/retry"
)

// A framework's ladder reads on the home screen as the framework means it:
// a shared delay infrastructure is one row (its queues out of OTHER
// QUEUES), error queues by naming sit in the ladder and say how they were
// linked, and a ladder with nothing that makes messages wait says its
// retries are in the consumer.
func TestHomeShowsFrameworkShapes(t *testing.T) {
	levels := []string{"nsb.v2.delay-level-00", "nsb.v2.delay-level-01", "nsb.v2.delay-level-02"}
	s := &broker.Snapshot{Vhost: "/"}
	for i, q := range levels {
		s.Topology.Queues = append(s.Topology.Queues, queue(q, int64(i), 0, 0, 0, 0))
	}
	for _, q := range []string{"Sales", "error", "submit-order", "submit-order_error", "submit-order_skipped"} {
		s.Topology.Queues = append(s.Topology.Queues, queue(q, 1, 0, 1, 0, 0))
	}
	s.Ladders = []retry.Ladder{
		{Main: "Sales", Delays: []retry.Delay{{Name: "nsb.v2.delay-level-00…02", Queues: levels, MinTTL: time.Second, MaxTTL: 4 * time.Second}},
			DLQ: "error", DLQFrom: "NServiceBus: error (shared)"},
		{Main: "submit-order", DLQ: "submit-order_error", DLQFrom: "MassTransit: {queue}_error", ErrorQueues: []string{"submit-order_skipped"}, RetriesInConsumer: true},
	}
	rows := buildHomeRowsView(s, homeView{})
	st := newStylesForTest()
	cols := homeLayout(120)
	var screen []string
	for i := range rows {
		screen = append(screen, ansi.Strip(renderHomeRow(&rows[i], broker.Trend{}, cols, st, false, false)))
	}
	all := strings.Join(screen, "\n")
	for _, r := range rows {
		for _, q := range levels {
			if r.name == q {
				t.Errorf("delay level %s has a row of its own:\n%s", q, all)
			}
		}
	}
	for _, want := range []string{"nsb.v2.delay-level-00…02", "delay", "3 queues 1s…4s · 3 waiting", "submit-order_skipped", "error"} {
		if !strings.Contains(all, want) {
			t.Errorf("no %q on the screen:\n%s", want, all)
		}
	}
	details := func(name string) string {
		for i := range rows {
			if rows[i].name == name && rows[i].kind != rowSection {
				return ansi.Strip(strings.Join(renderRowDetails(&rows[i], s, 200, 6, st, ""), "\n"))
			}
		}
		t.Fatalf("no row %s:\n%s", name, all)
		return ""
	}
	if d := details("submit-order"); !strings.Contains(d, "retries happen in the consumer") {
		t.Errorf("submit-order: %q", d)
	}
	if d := details("Sales"); strings.Contains(d, "consumer") {
		t.Errorf("Sales waits in the delay levels, not in its consumer: %q", d)
	}
	if d := details("error"); !strings.Contains(d, "error queue of Sales (NServiceBus: error (shared))") {
		t.Errorf("error: %q", d)
	}
	if d := details("submit-order_skipped"); !strings.Contains(d, "error queue of submit-order by its naming or its messages: failures are published there") {
		t.Errorf("submit-order_skipped: %q", d)
	}
}

// Dramatiq's delay queue is its main's: held by the workers, no TTL.
func TestHomeShowsAHeldDelayQueue(t *testing.T) {
	s := &broker.Snapshot{Vhost: "/"}
	for _, q := range []string{"default", "default.DQ", "default.XQ"} {
		s.Topology.Queues = append(s.Topology.Queues, queue(q, 2, 0, 1, 0, 0))
	}
	s.Ladders = []retry.Ladder{{Main: "default", DLQ: "default.XQ",
		Delays: []retry.Delay{{Name: "default.DQ", Queues: []string{"default.DQ"}, HeldByConsumers: true}}}}
	rows := buildHomeRowsView(s, homeView{})
	st := newStylesForTest()
	for i := range rows {
		if rows[i].name != "default.DQ" {
			continue
		}
		line := ansi.Strip(renderHomeRow(&rows[i], broker.Trend{}, homeLayout(120), st, false, false))
		if !strings.Contains(line, "held by the workers until due · 2 waiting") {
			t.Errorf("row %q", line)
		}
		if d := ansi.Strip(strings.Join(renderRowDetails(&rows[i], s, 200, 4, st, ""), "\n")); !strings.Contains(d, "delay queue of default: its workers hold each message until due") {
			t.Errorf("details %q", d)
		}
		return
	}
	t.Fatalf("no default.DQ row: %+v", rows)
}

// amqplib-retry's shared wait queue and its ready queue are a delay of
// each queue its messages name: per-message TTLs, tied by those messages.
func TestHomeShowsASharedWait(t *testing.T) {
	s := &broker.Snapshot{Vhost: "/"}
	for _, q := range []string{"orders", "amqplib-retry.delayed", "amqplib-retry.ready", "orders.failure"} {
		s.Topology.Queues = append(s.Topology.Queues, queue(q, 2, 0, 0, 0, 0))
	}
	s.Ladders = []retry.Ladder{{Main: "orders", DLQ: "orders.failure", DLQFrom: "common naming: {queue}.failure",
		Delays: []retry.Delay{{Name: "amqplib-retry.delayed", Queues: []string{"amqplib-retry.delayed", "amqplib-retry.ready"}, PerMessageTTL: true,
			From: "messages seen in amqplib-retry.ready return to orders"}}}}
	rows := buildHomeRowsView(s, homeView{})
	st := newStylesForTest()
	for i := range rows {
		if rows[i].name != "amqplib-retry.delayed" {
			continue
		}
		line := ansi.Strip(renderHomeRow(&rows[i], broker.Trend{}, homeLayout(120), st, false, false))
		if !strings.Contains(line, "shared wait, 2 queues · per-message TTL · 4 waiting") {
			t.Errorf("row %q", line)
		}
		d := ansi.Strip(strings.Join(renderRowDetails(&rows[i], s, 300, 4, st, ""), "\n"))
		if !strings.Contains(d, "shared wait queue amqplib-retry.delayed → amqplib-retry.ready") || !strings.Contains(d, "return to orders") {
			t.Errorf("details %q", d)
		}
		return
	}
	t.Fatalf("no amqplib-retry.delayed row: %+v", rows)
}
