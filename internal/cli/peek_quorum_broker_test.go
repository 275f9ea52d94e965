package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/broker/rabbit"
	"github.com/ladder-tui/ladder/retry/topology"
)

// versionEnv points the commands at the test broker, or at the broker of
// version ("4.0"), and returns it with its version.
func versionEnv(t *testing.T, version string) (*rabbit.Resolved, string) {
	t.Helper()
	if version == "" {
		r := brokerEnv(t)
		l, err := rabbit.NewLive(r, "test version")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		v, err := l.BrokerVersion(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return r, v
	}
	r := brokertest.RequireVersion(t, version)
	cfg, _ := brokertest.VersionConfig(version)
	t.Setenv("LADDER_AMQP_URL", cfg.AMQPURL)
	t.Setenv("LADDER_API_URL", cfg.APIURL)
	l, err := rabbit.NewLive(r, "test version")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	v, err := l.BrokerVersion(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return r, v
}

// takeAll takes every message of q (acked) and returns their ids, with
// the delivery counts they arrived with (3.10 shows 0 on a first delivery).
func takeAll(t *testing.T, r *rabbit.Resolved, q string) (ids []string, counted []string) {
	t.Helper()
	conn, err := r.DialAMQP(context.Background(), "test drain")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, _ := conn.Channel()
	for {
		d, ok, err := ch.Get(q, true)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return ids, counted
		}
		ids = append(ids, d.MessageId)
		if n, ok := d.Headers["x-delivery-count"]; ok && n != int64(0) {
			counted = append(counted, fmt.Sprintf("%s:%v", d.MessageId, n))
		}
	}
}

// Issue 20's done-when, on the command line: ten `ladder peek` and ten
// `ladder --read-only peek` of a quorum queue with x-delivery-limit 3, on
// the test broker and on 4.0, dead-letter nothing and keep the order: 4.3
// browses without counting, 3.10 and 4.0 refuse before touching the queue,
// each time with one line saying why.
func TestTenCLIPeeksOfALimitedQuorumQueue(t *testing.T) {
	for _, version := range []string{"", "4.0"} {
		t.Run("broker "+version, func(t *testing.T) {
			r, v := versionEnv(t, version)
			dlq := testQueue(t, r, "dlq", 0, nil)
			q := testQueue(t, r, "m", 5, amqp.Table{"x-queue-type": "quorum", "x-delivery-limit": int32(3),
				"x-dead-letter-exchange": "", "x-dead-letter-routing-key": dlq})
			costless := topology.VersionAtLeast(v, 4, 3)
			for i := 0; i < 20; i++ {
				args := []string{"peek", q, "-n", fmt.Sprint(5 - 3*(i%2)), "-o", "json"}
				readOnly := i >= 10
				if readOnly {
					args = append([]string{"--read-only"}, args...)
				}
				code, out, errOut := runLadder(t, args...)
				if !costless {
					want := "--force peeks anyway"
					if readOnly {
						want = "read-only"
					}
					if code != exitError || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, q) || !strings.Contains(errOut, "delivery limit of 3") || !strings.Contains(errOut, want) {
						t.Fatalf("RabbitMQ %s, peek %d: exit %d, %q", v, i, code, errOut)
					}
					continue
				}
				if code != exitOK {
					t.Fatalf("RabbitMQ %s, peek %d: exit %d: %s", v, i, code, errOut)
				}
				var res broker.PeekResult
				if err := json.Unmarshal([]byte(out), &res); err != nil {
					t.Fatal(err)
				}
				var ids []string
				for _, m := range res.Messages {
					ids = append(ids, m.Properties.MessageID)
					if _, ok := m.Headers["x-delivery-count"]; ok {
						t.Fatalf("peek %d: %s counted a delivery", i, m.Properties.MessageID)
					}
				}
				if want := []string{"m-0", "m-1", "m-2", "m-3", "m-4"}[:5-3*(i%2)]; fmt.Sprint(ids) != fmt.Sprint(want) {
					t.Fatalf("peek %d: %v, want %v", i, ids, want)
				}
			}
			waitDepth(t, r, q, 5)
			if d := depthOf(t, r, dlq); d != 0 {
				t.Fatalf("RabbitMQ %s: %d dead-lettered", v, d)
			}
			ids, counted := takeAll(t, r, q)
			if fmt.Sprint(ids) != "[m-0 m-1 m-2 m-3 m-4]" || len(counted) != 0 {
				t.Fatalf("RabbitMQ %s: the queue holds %v, counted %v", v, ids, counted)
			}
		})
	}
}

// waitDepth waits (bounded) until q holds n ready messages: quorum queues
// apply returns asynchronously.
func waitDepth(t *testing.T, r *rabbit.Resolved, q string, n int) {
	t.Helper()
	if !brokertest.WaitFor(time.Minute, func() bool { return depthOf(t, r, q) == n }) {
		t.Fatalf("%s: depth %d, want %d", q, depthOf(t, r, q), n)
	}
}
