package rabbit

import (
	"context"
	"net"
	"os"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/preview"
	"github.com/ladder-tui/ladder/retry/moveplan"
	"github.com/ladder-tui/ladder/retry/topology"
)

// The delayed-message-exchange plugin cannot be installed on our machines.
// Its documented contract — exchange type x-delayed-message, header x-delay
// in ms, never mandatory — is tested against a plain exchange the test
// presents to the mover as a delayed one: the broker routes at once, and
// the test checks what ladder published.
func TestMoveThroughADelayedExchangeFake(t *testing.T) {
	r := requireBroker(t)
	conn, err := r.DialAMQP(context.Background(), "test delayed")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, _ := conn.Channel()
	suffix := time.Now().Format("150405.000000")
	src, dst := "ladder-test.delayed.src."+suffix, "ladder-test.delayed.dst."+suffix
	target, delayed := "ladder-test.delayed.x."+suffix, "ladder-test.delayed.dx."+suffix
	t.Cleanup(func() {
		c, err := r.DialAMQP(context.Background(), "test cleanup")
		if err != nil {
			return
		}
		defer c.Close()
		cc, _ := c.Channel()
		for _, q := range []string{src, dst} {
			_, _ = cc.QueueDelete(q, false, false, false)
		}
		for _, x := range []string{target, delayed} {
			_ = cc.ExchangeDelete(x, false, false)
		}
	})
	for _, q := range []string{src, dst} {
		if _, err := ch.QueueDeclare(q, false, false, false, false, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, x := range []string{target, delayed} {
		if err := ch.ExchangeDeclare(x, "direct", false, false, false, false, nil); err != nil {
			t.Fatal(err)
		}
		if err := ch.QueueBind(dst, "k", x, false, nil); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 3; i++ {
		if err := ch.PublishWithContext(context.Background(), "", src, false, false, amqp.Publishing{MessageId: "d", Headers: amqp.Table{"x-retry-count": int32(1)}}); err != nil {
			t.Fatal(err)
		}
	}
	l, err := NewLive(r, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	l.adaptVhost = func(v *topology.Vhost) {
		for i := range v.Exchanges {
			if v.Exchanges[i].Name == delayed {
				v.Exchanges[i].Type = topology.ExchangeDelayed
				v.Exchanges[i].Arguments = map[string]any{"x-delayed-type": "direct"}
			}
		}
	}
	time.Sleep(200 * time.Millisecond) // publishes above were unconfirmed
	rep, err := l.Move(context.Background(), broker.MoveRequest{From: src, To: moveplan.Target{Kind: moveplan.TargetExchange, Name: target, RoutingKey: "k", HasKey: true}, Delay: 3 * time.Second}, nil)
	if version, _ := l.BrokerVersion(context.Background()); topology.DelayedExchangesGone(version) {
		// 4.3 has no delayed-message exchange: the delay waits in ladder's
		// own queue, whatever the topology lists.
		for _, rt := range rep.Routes {
			t.Cleanup(func() {
				if c, err := r.DialAMQP(context.Background(), "test cleanup"); err == nil {
					if cc, err := c.Channel(); err == nil {
						_, _ = cc.QueueDelete(rt.Through, false, false, false)
					}
					c.Close()
				}
			})
		}
		if err != nil || rep.Moved != 3 || rep.Via[topology.ViaDelayQueue] != 3 {
			t.Fatalf("4.3: %+v %v", rep, err)
		}
		return
	}
	if err != nil || rep.Moved != 3 || rep.Via[topology.ViaDelayedExchange] != 3 {
		t.Fatalf("%+v %v", rep, err)
	}
	if len(rep.Notes) == 0 {
		t.Error("no note that the delayed exchange cannot report unroutable messages")
	}
	got := 0
	for got < 3 {
		d, ok, err := ch.Get(dst, true)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			t.Fatalf("only %d arrived", got)
		}
		got++
		if d.Exchange != delayed || d.Headers["x-delay"] != int64(3000) || d.Headers["x-retry-count"] != int32(1) {
			t.Errorf("published to %q with headers %v", d.Exchange, d.Headers)
		}
	}
}

// requireBroker is brokertest.Require for this internal test package
// (brokertest imports broker, so it cannot be imported here).
func requireBroker(t *testing.T) *Resolved {
	t.Helper()
	url := os.Getenv("LADDER_TEST_AMQP_URL")
	if url == "" {
		url = "amqp://guest:guest@127.0.0.1:5672/"
	}
	api := os.Getenv("LADDER_TEST_API_URL")
	if api == "" {
		api = "http://127.0.0.1:15672"
	}
	r, err := Config{AMQPURL: url, APIURL: api}.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	for _, addr := range []string{net.JoinHostPort(r.AMQP.Hostname(), r.Port()), r.APIURL.Host} {
		c, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err != nil {
			if os.Getenv("LADDER_REQUIRE_BROKER") == "1" {
				t.Fatalf("no broker at %s: %v", addr, err)
			}
			t.Skipf("no broker at %s: %v", addr, err)
		}
		c.Close()
	}
	return r
}

// A position asked for twice is one message (the simulation agrees).
func TestRequestedCountsEachPositionOnce(t *testing.T) {
	if n := preview.Requested(broker.MoveRequest{Positions: []int{2, 2, 0, 9}}, 5); n != 2 {
		t.Errorf("requested %d, want 2", n)
	}
}
