package conformance

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker/brokertest"
)

// Symfony Messenger's AMQP transport with the Symfony Serializer
// (testdata/symfony/messenger.php, on Debian's php-amqplib): the transport
// amqp://…/messages (fanout exchange and queue "messages"), retries
// through delay_messages_messages_<ms>_retry queues (TTL, dead-lettering
// back to messages by the default exchange), and the failure transport
// amqp://…/failed, to which a message that spent its retries is sent with
// its stamps and the x-death of its last wait. ladder must see the delay
// queues as the tiers of the ladder of messages (as
// retry/topology/frameworks_more_test.go's fixture does), read the count,
// error and exception class from the stamp headers, and move every message
// back to messages.
func TestSymfonyMessengerRetryThenFailureTransport(t *testing.T) {
	t.Parallel()
	php := requireLibrary(t, "PHP with php-amqplib (Debian's php-cli, php-amqplib)", func(bin string) *exec.Cmd {
		return exec.Command(bin, "-r", "require '/usr/share/php/PhpAmqpLib/autoload.php'; new PhpAmqpLib\\Wire\\AMQPTable([]);")
	}, "php")
	r := brokertest.OwnVhost(t)
	const (
		queue   = "messages"
		failed  = "failed"
		n       = 4
		retries = 2
		delayMS = 200 // then 400: multiplier 2
	)
	tiers := []tier{
		{Name: fmt.Sprintf("delay_%s_%s_%d_retry", queue, queue, delayMS), TTLMS: delayMS},
		{Name: fmt.Sprintf("delay_%s_%s_%d_retry", queue, queue, 2*delayMS), TTLMS: 2 * delayMS},
	}
	runScript(t, testdata(t, "symfony"), []string{
		"CONFORMANCE_URL=" + scriptURL(t, r), fmt.Sprint("CONFORMANCE_COUNT=", n),
		fmt.Sprint("CONFORMANCE_RETRIES=", retries), fmt.Sprint("CONFORMANCE_DELAY_MS=", delayMS),
	}, php, "messenger.php")
	ch := brokertest.Channel(t, r, "conformance test")
	waitDepth(t, ch, failed, n, 30*time.Second)
	// The delay queues expire 10 s after their last use (x-expires), and
	// with them the ladder. A basic.get renews their lease, as a retry of
	// another message through them would: the test reads them however
	// slowly it runs.
	renew := func() {
		t.Helper()
		for _, tr := range tiers {
			if _, _, err := ch.Get(tr.Name, false); err != nil {
				t.Fatalf("renew the lease of %s: %v", tr.Name, err)
			}
		}
	}
	renew()

	rep := topology(t, r)
	if l := rep.ladderOf(t, queue); l != nil {
		if !slices.EqualFunc(l.Tiers, tiers, func(a, b tier) bool { return a == b }) {
			t.Errorf("tiers %+v, want the delay queues %+v", l.Tiers, tiers)
		}
		if l.DLQ != nil {
			t.Errorf("dlq %+v, want none: the failure transport is fed by publishing, and serves every transport", l.DLQ)
		}
	}
	if mains := rep.mains(t); !slices.Equal(mains, []string{queue}) {
		t.Errorf("ladders of %q, want exactly one, of %s", mains, queue)
	}
	// Not checked on messages: ladder finds no-dlq there until it has
	// read the failure transport's messages (nothing else ties it to the
	// queue).
	for _, q := range []string{tiers[0].Name, tiers[1].Name} {
		if f := rep.findingsOn(q); len(f) != 0 {
			t.Errorf("findings on %s: %q, want none", q, f)
		}
	}

	// The count is the largest retryCount of the RedeliveryStamp history
	// (1, 2, then the 0 the failure transport appends); the error and its
	// class are the ErrorDetailsStamp's.
	ids := seq(queue, n)
	for _, m := range peek(t, r, failed, n).Messages {
		id := symfonyInvoice(t, m.BodyPreview)
		if !slices.Contains(ids, id) {
			t.Errorf("unexpected message %q in %s", id, failed)
			continue
		}
		if m.Retry.Framework != "Symfony Messenger" || m.Retry.Count != retries {
			t.Errorf("%s: framework %q, count %d from %q; want Symfony Messenger, %d", id, m.Retry.Framework, m.Retry.Count, m.Retry.Source, retries)
		}
		if want := "Invoice " + id + ": payment gateway refused"; m.Retry.LastError != want || m.Retry.ErrorType != "RuntimeException" {
			t.Errorf("%s: error %q of type %q, want %q of type RuntimeException", id, m.Retry.LastError, m.Retry.ErrorType, want)
		}
		// Its last wait's expiry first; 3.x adds it to the copied x-death
		// of the first wait, 4.x interprets no x-death a client sent and
		// keeps only its own.
		if len(m.Deaths) == 0 || m.Deaths[0].Queue != tiers[1].Name || m.Deaths[0].Reason != "expired" ||
			len(m.Deaths) > 1 && (len(m.Deaths) != 2 || m.Deaths[1].Queue != tiers[0].Name) {
			t.Errorf("%s: deaths %+v, want the expiry in %s (then, on 3.x, the one in %s)", id, m.Deaths, tiers[1].Name, tiers[0].Name)
		}
	}

	// The failure transport serves every transport; read, its messages
	// say they failed in messages: its ladder ends there, no-dlq gone.
	assertSampledLadder(t, r, queue, failed, n, false)

	// Expected (issue 23): where it failed is read from the x-death of
	// its last wait, delay_messages_messages_400_retry, by Symfony's
	// naming (delay_{exchange}_{queue}_{delay}_retry) even once that
	// queue has expired, 10 s after its last use, as it has whenever
	// someone looks at failed later than that. Deleting the delay queues
	// is what their x-expires does.
	for _, tr := range tiers {
		if _, err := ch.QueueDelete(tr.Name, false, false, false); err != nil {
			t.Fatalf("delete %s (as its x-expires would): %v", tr.Name, err)
		}
	}
	out := moveToOrigin(t, r, failed, n)
	t.Logf("move: %s", strings.TrimSpace(out))
	waitDepth(t, ch, queue, n, 30*time.Second)
	assertAllIn(t, idsByQueue(t, r, ch, func(d amqp.Delivery) string { return symfonyInvoice(t, string(d.Body)) }), queue, ids)
}

// symfonyInvoice is the id in the script's message body, the JSON of its
// App\Message\SendInvoice: Symfony sets no message_id.
func symfonyInvoice(t *testing.T, body string) string {
	t.Helper()
	var m struct {
		InvoiceID string `json:"invoiceId"`
	}
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Errorf("not the script's message: %v: %.200s", err, body)
	}
	return m.InvoiceID
}
