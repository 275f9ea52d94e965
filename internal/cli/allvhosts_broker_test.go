package cli

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/brokertest"
)

// topology --all-vhosts reads every vhost with one listing each of vhosts,
// queues, exchanges and bindings — never a request per vhost — and lists
// the vhost on fire first: its ladders, what its DLQs hold, its worst
// finding.
func TestTopologyAllVhosts(t *testing.T) {
	r := brokerEnv(t)
	fire, full, quiet := brokertest.OwnVhost(t), brokertest.OwnVhost(t), brokertest.OwnVhost(t)
	declare := func(vhost string, q string, args amqp.Table, n int) {
		t.Helper()
		v := *r
		v.Vhost = vhost
		conn, err := v.DialAMQP(context.Background(), "test all vhosts")
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		ch, err := conn.Channel()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ch.QueueDeclare(q, true, false, false, false, args); err != nil {
			t.Fatal(err)
		}
		for range n {
			if err := ch.PublishWithContext(context.Background(), "", q, false, false, amqp.Publishing{Body: []byte("x")}); err != nil {
				t.Fatal(err)
			}
		}
	}
	// fire: dead-letters into an exchange that does not exist (an error).
	declare(fire.Vhost, "orders", amqp.Table{"x-dead-letter-exchange": "nowhere"}, 0)
	// full: a ladder whose DLQ holds 3.
	declare(full.Vhost, "billing.dlq", nil, 3)
	declare(full.Vhost, "billing", amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "billing.dlq"}, 0)

	api := brokertest.NewDelayedAPI(t, r.APIURL)
	t.Setenv("LADDER_API_URL", api.URL)
	var rep allVhostsReport
	deadline := time.Now().Add(60 * time.Second)
	for {
		code, out, errOut := runLadder(t, "topology", "--all-vhosts", "-o", "json")
		if code != exitOK {
			t.Fatalf("topology --all-vhosts: exit %d %s", code, errOut)
		}
		rep = allVhostsReport{}
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatal(err)
		}
		// The API's depths lag publishes by seconds.
		if i := slices.IndexFunc(rep.Vhosts, func(s broker.VhostSummary) bool { return s.Vhost == full.Vhost }); i >= 0 && rep.Vhosts[i].DLQMessages == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("never saw %s's DLQ hold 3: %+v", full.Vhost, rep.Vhosts)
		}
		time.Sleep(time.Second)
	}
	at := map[string]int{}
	for i, s := range rep.Vhosts {
		at[s.Vhost] = i
	}
	f, u, q := rep.Vhosts[at[fire.Vhost]], rep.Vhosts[at[full.Vhost]], rep.Vhosts[at[quiet.Vhost]]
	if f.Worst == nil || f.Worst.Code != "unroutable-dead-letter" || f.Worst.Queue != "orders" {
		t.Errorf("%s: worst finding %+v, want unroutable-dead-letter on orders", fire.Vhost, f.Worst)
	}
	if u.Ladders != 1 || u.DLQs != 1 || u.DLQMessages != 3 || u.Queues != 2 {
		t.Errorf("%s: %+v, want 1 ladder, 1 DLQ holding 3, 2 queues", full.Vhost, u)
	}
	if q.Queues != 0 || q.Ladders != 0 || q.Worst != nil {
		t.Errorf("%s: %+v, want an empty vhost listed", quiet.Vhost, q)
	}
	if !(at[fire.Vhost] < at[full.Vhost] && at[full.Vhost] < at[quiet.Vhost]) {
		t.Errorf("order %v: the error first, then the fuller DLQ, then the quiet one", at)
	}
	// Each run: one listing each, whatever the number of vhosts.
	counts := map[string]int{}
	for _, p := range api.Paths() {
		counts[p]++
	}
	runs := counts["/api/queues"]
	for p, n := range counts {
		if strings.HasPrefix(p, "/api/queues/") || strings.HasPrefix(p, "/api/exchanges/") || strings.HasPrefix(p, "/api/bindings/") && p != "/api/bindings/" || n != runs {
			t.Errorf("%s asked %d times in %d runs: want one listing of each a run, nothing per vhost (%v)", p, n, runs, counts)
		}
	}
	// The table says the same, the vhost on fire first.
	code, out, _ := runLadder(t, "topology", "--all-vhosts")
	if code != exitOK || !strings.Contains(out, "error unroutable-dead-letter orders") || strings.Index(out, fire.Vhost) > strings.Index(out, full.Vhost) {
		t.Errorf("table: exit %d\n%s", code, out)
	}
}
