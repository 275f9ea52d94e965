package cli

import (
	"context"
	"encoding/json"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/broker/rabbit"
	"github.com/ladder-tui/ladder/internal/present"
	"github.com/ladder-tui/ladder/retry/topology"
)

// republishErrorQueue declares, in r's vhost, an application's work queue
// "orders" (retried through the TTL tier "orders.retry") and the error queue "orders.graveyard" (a name no naming links) it republishes failures
// into (no dead-letter route between them: only the messages' headers
// say where they failed, as NServiceBus's FailedQ does), holding three
// such failures; quorum queues when quorum, classic ones otherwise. It
// returns when the management API shows them (topology reads depths
// there).
func republishErrorQueue(t *testing.T, r *rabbit.Resolved, quorum bool) {
	t.Helper()
	ch := brokertest.Channel(t, r, "test republish")
	typ := amqp.Table{}
	if quorum {
		typ["x-queue-type"] = "quorum"
	}
	with := func(t amqp.Table, kv ...any) amqp.Table {
		out := amqp.Table{}
		for k, v := range t {
			out[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			out[kv[i].(string)] = kv[i+1]
		}
		return out
	}
	// orders retries through a TTL tier and has no dead-letter queue:
	// what exhausts its retries, the application republishes.
	for _, d := range []struct {
		name string
		args amqp.Table
	}{
		{"orders", with(typ, "x-dead-letter-exchange", "", "x-dead-letter-routing-key", "orders.retry")},
		{"orders.retry", with(amqp.Table{}, "x-message-ttl", int32(5000), "x-dead-letter-exchange", "", "x-dead-letter-routing-key", "orders")},
		{"orders.graveyard", typ},
	} {
		if _, err := ch.QueueDeclare(d.name, true, false, false, false, d.args); err != nil {
			t.Fatal(err)
		}
	}
	var ps []amqp.Publishing
	for i := range 3 {
		ps = append(ps, amqp.Publishing{
			MessageId: "failed-" + string(rune('a'+i)), DeliveryMode: amqp.Persistent, Timestamp: time.Now(), Body: []byte(secretBody),
			Headers: amqp.Table{
				"NServiceBus.FailedQ":                     "orders",
				"NServiceBus.ExceptionInfo.ExceptionType": "System.TimeoutException",
				"NServiceBus.ExceptionInfo.Message":       "payment provider timed out",
			},
		})
	}
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	if err := brokertest.PublishConfirmed(context.Background(), ch, "", "orders.graveyard", ps); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		var q struct {
			Messages int64 `json:"messages"`
		}
		err := brokertest.APIGet(r, "queues/"+url.PathEscape(r.Vhost)+"/orders.graveyard", &q)
		if err == nil && q.Messages == 3 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the management API never showed orders.graveyard' 3 messages (%d, %v)", q.Messages, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// secretBody is what the republished failures hold, which no cache may.
const secretBody = `{"order":1,"card":"4111-secret-7731"}`

// topologyJSON runs `ladder topology -o json` with args.
func topologyJSON(t *testing.T, args ...string) present.TopologyReport {
	t.Helper()
	code, out, errOut := runLadder(t, append([]string{"topology", "-o", "json"}, args...)...)
	if code != exitOK {
		t.Fatalf("topology %q: exit %d %s", args, code, errOut)
	}
	var rep present.TopologyReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return rep
}

// ordersDLQ is the DLQ topology gives orders ("" when none) and whether
// a no-dlq finding is raised about it.
func ordersDLQ(rep present.TopologyReport) (dlq string, noDLQ bool) {
	for _, l := range rep.Ladders {
		if l.Main.Name == "orders" && l.DLQ != nil {
			dlq = l.DLQ.Name
		}
	}
	noDLQ = slices.ContainsFunc(rep.Findings, func(f topology.Finding) bool {
		return f.Code == topology.CodeNoDLQ && f.Queue == "orders"
	})
	return dlq, noDLQ
}

// Issue 34's "learn once": an error queue the application republishes
// into is linked to its queue by what its messages say. On 3.x a peek
// costs a redelivered flag, so plain topology reads none and cannot link
// it (no DLQ, a no-dlq finding); a peek of it by one command is
// remembered (the user's cache) and the next topology links it; --fresh
// forgets. On 4.3 quorum queues the browse is free: the first topology
// samples it unasked, says so, and links it. The cache holds no body.
func TestLearnedLinksARepublishErrorQueue(t *testing.T) {
	r := vhostEnv(t)
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	t.Setenv("LADDER_FRESH", "")
	free := topology.VersionAtLeast(liveVersion(t, r), 4, 3)
	republishErrorQueue(t, r, free)

	first := topologyJSON(t)
	dlq, noDLQ := ordersDLQ(first)
	if free {
		if dlq != "orders.graveyard" || noDLQ {
			t.Fatalf("4.3 quorum, first topology: dlq %q, no-dlq %v: want orders.graveyard linked by its free sample", dlq, noDLQ)
		}
		s := first.Sampled
		if s == nil || !s.Free || len(s.Queues) != 1 || s.Queues[0].Queue != "orders.graveyard" || s.Queues[0].Read != 3 ||
			!slices.Equal(s.Queues[0].FailedIn, []string{"orders"}) {
			t.Fatalf("4.3 quorum, first topology's sample: %+v", s)
		}
	} else {
		if dlq != "" || !noDLQ || first.Sampled != nil {
			t.Fatalf("3.x, first topology: dlq %q, no-dlq %v, sampled %+v: want nothing read, nothing linked", dlq, noDLQ, first.Sampled)
		}
		if code, _, errOut := runLadder(t, "peek", "orders.graveyard"); code != exitOK {
			t.Fatalf("peek: exit %d %s", code, errOut)
		}
	}

	// The next command knows what the one before read, unasked to read.
	second := topologyJSON(t, "--no-sample")
	if dlq, noDLQ := ordersDLQ(second); dlq != "orders.graveyard" || noDLQ {
		t.Fatalf("second topology: dlq %q, no-dlq %v: want orders.graveyard, learned by the command before", dlq, noDLQ)
	}
	for _, l := range second.Ladders {
		if l.Main.Name == "orders" && (!strings.Contains(l.DLQFrom, "failed in orders") || l.DLQ.Unconfirmed) {
			t.Errorf("orders' DLQ linked by %q (unconfirmed %v), want the messages seen, confirmed", l.DLQFrom, l.DLQ.Unconfirmed)
		}
	}

	// --fresh forgets (and reads nothing here).
	if dlq, noDLQ := ordersDLQ(topologyJSON(t, "--fresh", "--no-sample")); dlq != "" || !noDLQ {
		t.Errorf("--fresh: dlq %q, no-dlq %v: want what was learned forgotten", dlq, noDLQ)
	}
	if free {
		// Unasked reads are said.
		code, out, errOut := runLadder(t, "topology", "--fresh")
		if code != exitOK || !strings.Contains(out, "sampled 3 messages of orders.graveyard (free on this broker)") {
			t.Errorf("topology --fresh on 4.3: exit %d, want the sample said:\n%s%s", code, out, errOut)
		}
	}

	// What is kept says where messages failed, never what they held.
	found := 0
	err := filepath.WalkDir(cache, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.HasSuffix(path, ".lock") {
			if len(b) != 0 {
				t.Errorf("lock file %s holds %s", path, b)
			}
			return nil
		}
		found++
		if strings.Contains(string(b), secretBody) || strings.Contains(string(b), "payment provider") || !strings.Contains(string(b), "orders.graveyard") {
			t.Errorf("%s holds %s", path, b)
		}
		return nil
	})
	if err != nil || found != 1 {
		t.Errorf("cache files %d (%v), want the broker's one", found, err)
	}
}
