package cli

import (
	"context"
	"encoding/json"
	"net/url"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/broker/rabbit"
)

// pikaOrigins declares, in the vhost of argv[1], the queues and exchanges
// of the scenario argv[2] and publishes its error queue's messages the way
// a Python application does (pika, publisher confirms):
//
//   - watermill: Watermill's pub/sub configs, the topic "events" a fanout
//     exchange bound to its subscriber's queue events_billing, "shared" a
//     fanout exchange with two subscribers' queues, "other" one elsewhere;
//     PoisonQueue's messages in "poison" record topic_poisoned (the topic,
//     no queue) and reason_poisoned: wm-0..2 from events, sh-0..1 from
//     shared.
//   - failure: "orders" and "orders.failure" holding plain messages (no
//     headers at all) of-0..2.
const pikaOrigins = `
import sys, pika
conn = pika.BlockingConnection(pika.URLParameters(sys.argv[1]))
ch = conn.channel()
ch.confirm_delivery()
def publish(q, mid, headers):
    ch.basic_publish('', q, ('{"id":"%s"}' % mid).encode(), pika.BasicProperties(
        message_id=mid, delivery_mode=2, content_type='application/json', headers=headers), mandatory=True)
if sys.argv[2] == 'watermill':
    for x, qs in (('events', ['events_billing']), ('shared', ['shared_a', 'shared_b']), ('other', ['other_audit'])):
        ch.exchange_declare(x, 'fanout', durable=True)
        for q in qs:
            ch.queue_declare(q, durable=True)
            ch.queue_bind(q, x)
    ch.queue_declare('poison', durable=True)
    for topic, prefix, n in (('events', 'wm', 3), ('shared', 'sh', 2)):
        for i in range(n):
            publish('poison', '%s-%d' % (prefix, i), {'topic_poisoned': topic, 'reason_poisoned': 'card declined',
                'handler_poisoned': 'billing', 'subscriber_poisoned': 'amqp', '_watermill_message_uuid': '%s-uuid-%d' % (prefix, i)})
else:
    ch.queue_declare('orders', durable=True)
    ch.queue_declare('orders.failure', durable=True)
    for i in range(3):
        publish('orders.failure', 'of-%d' % i, None)
conn.close()
`

// runPikaOrigins runs pikaOrigins's scenario in r's vhost (deleted with
// all it holds when the test ends).
func runPikaOrigins(t *testing.T, r *rabbit.Resolved, scenario string) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is missing: scripts/clients.sh installs python3-pika")
	}
	user, pass := brokertest.AMQPLogin(t, r)
	u := url.URL{Scheme: r.AMQP.Scheme, User: url.UserPassword(user, pass), Host: r.AMQP.Host,
		Path: "/" + r.Vhost, RawPath: "/" + url.PathEscape(r.Vhost)}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "/usr/bin/python3", "-c", pikaOrigins, u.String(), scenario).CombinedOutput(); err != nil {
		t.Fatalf("pika: %v\n%s", err, out)
	}
}

// takeIDs takes every message out of q and returns their ids, sorted.
func takeIDs(t *testing.T, r *rabbit.Resolved, q string) []string {
	t.Helper()
	conn, err := r.DialAMQP(context.Background(), "test ids")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for {
		d, ok, err := ch.Get(q, true)
		if err != nil {
			t.Fatalf("get %s: %v", q, err)
		}
		if !ok {
			break
		}
		ids = append(ids, d.MessageId)
	}
	slices.Sort(ids)
	return ids
}

// Issue 34: Watermill's PoisonQueue records the topic a message was
// consumed through (topic_poisoned), which with the pub/sub configs is a
// fanout exchange, not a queue. --to origin sends each message back to
// the one queue that exchange routes to and nowhere else; a topic whose
// exchange has two subscribers' queues is no answer: those messages stay,
// the report names both queues and how to choose.
func TestMoveToOriginThroughARecordedExchange(t *testing.T) {
	r := vhostEnv(t)
	runPikaOrigins(t, r, "watermill")
	code, out, errOut := runLadder(t, "move", "--from", "poison", "--to", "origin", "--yes", "-o", "json")
	if code != exitPartial {
		t.Fatalf("exit %d, want %d (the shared topic's messages stay)\n%s\n%s", code, exitPartial, out, errOut)
	}
	var rep broker.MoveReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if rep.Moved != 3 || rep.Skipped != 2 {
		t.Errorf("moved %d, skipped %d; want 3 and 2\n%s", rep.Moved, rep.Skipped, out)
	}
	for _, p := range rep.Planned {
		if !strings.HasPrefix(p.MessageID, "sh-") {
			t.Errorf("%s left in poison: %s", p.MessageID, p.Skip)
			continue
		}
		for _, s := range []string{"topic_poisoned names exchange shared", "shared_a", "shared_b", "--to queue:"} {
			if !strings.Contains(p.Skip, s) {
				t.Errorf("%s: why it stays (%q) does not say %q", p.MessageID, p.Skip, s)
			}
		}
	}
	if got := takeIDs(t, r, "events_billing"); !slices.Equal(got, []string{"wm-0", "wm-1", "wm-2"}) {
		t.Errorf("events_billing holds %v, want wm-0..2", got)
	}
	for _, q := range []string{"shared_a", "shared_b", "other_audit"} {
		if got := takeIDs(t, r, q); len(got) != 0 {
			t.Errorf("%s holds %v, want nothing", q, got)
		}
	}
	if got := takeIDs(t, r, "poison"); !slices.Equal(got, []string{"sh-0", "sh-1"}) {
		t.Errorf("poison holds %v, want sh-0 and sh-1", got)
	}
}

// Issue 34: a message that records nothing, in orders.failure, failed in
// orders by the name alone: the dry run says the origin is inferred from
// the name and moves nothing; the move puts every message in orders.
func TestMoveToOriginInferredFromTheName(t *testing.T) {
	r := vhostEnv(t)
	runPikaOrigins(t, r, "failure")
	code, out, errOut := runLadder(t, "move", "--from", "orders.failure", "--to", "origin", "--dry-run", "-o", "json")
	if code != exitOK {
		t.Fatalf("dry run: exit %d\n%s\n%s", code, out, errOut)
	}
	var rep broker.MoveReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(rep.Planned) != 3 {
		t.Fatalf("dry run planned %d messages, want 3\n%s", len(rep.Planned), out)
	}
	for _, p := range rep.Planned {
		if !p.Moves() || !slices.Equal(p.Reaches, []string{"orders"}) || !strings.Contains(p.Note, "inferred from the name orders.failure") {
			t.Errorf("dry run plan of %s: reaches %v, note %q, skip %q; want orders, inferred from the name", p.MessageID, p.Reaches, p.Note, p.Skip)
		}
	}
	if d := depthOf(t, r, "orders.failure"); d != 3 {
		t.Errorf("the dry run moved something: %d left in orders.failure", d)
	}
	code, out, errOut = runLadder(t, "move", "--from", "orders.failure", "--to", "origin", "--yes", "-o", "json")
	if code != exitOK {
		t.Fatalf("move: exit %d\n%s\n%s", code, out, errOut)
	}
	if got := takeIDs(t, r, "orders"); !slices.Equal(got, []string{"of-0", "of-1", "of-2"}) {
		t.Errorf("orders holds %v, want of-0..2", got)
	}
	if d := depthOf(t, r, "orders.failure"); d != 0 {
		t.Errorf("%d left in orders.failure", d)
	}
}
