package cli

import (
	"context"
	"fmt"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/broker/rabbit"
)

// On the broker: ladder serve --metrics (no --ssh) reports a ladder's DLQ
// depth as the broker counts it, read by the one snapshot reader however
// many scrapes come.
func TestServeMetricsOnTheBroker(t *testing.T) {
	r := vhostEnv(t)
	ch := brokertest.Channel(t, r, "test serve metrics")
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	main, dlq := "orders", "orders.dlq"
	if _, err := ch.QueueDeclare(main, true, false, false, false, amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": dlq}); err != nil {
		t.Fatal(err)
	}
	if _, err := ch.QueueDeclare(dlq, true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	if err := brokertest.PublishConfirmed(context.Background(), ch, "", dlq, brokertest.BenchMessages(4, "failed")); err != nil {
		t.Fatal(err)
	}
	ro := *r
	ro.ReadOnly = true
	live, err := rabbit.NewLive(&ro, "test serve metrics")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { live.Close() })
	sv := startServeOn(t, live, live, "serve", "--metrics", "127.0.0.1:0")
	labels := fmt.Sprintf(`main="%s",queue="%s",vhost="%s"`, main, dlq, r.Vhost)
	scrapes := 0
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		body := scrapeURL(t, sv.metrics)
		scrapes++
		got, ok := metricValue(body, "ladder_dlq_messages", labels)
		if want := depthOf(t, r, dlq); ok && int(got) == want && want == 4 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("ladder_dlq_messages{%s} %v %v, the broker holds %d:\n%s", labels, got, ok, depthOf(t, r, dlq), body)
		}
	}
	n, readers := sv.snapshotsBy("serve snapshots")
	if readers != 1 || n > scrapes {
		t.Errorf("%d scrapes: %d snapshots by %d readers", scrapes, n, readers)
	}
	if err := sv.stop(); err != nil {
		t.Fatalf("serve --metrics: %v", err)
	}
}
