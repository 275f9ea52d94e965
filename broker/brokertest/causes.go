package brokertest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/retry"
)

// CauseMessage is a dead letter as Spring AMQP's RepublishMessageRecoverer
// leaves it in a DLQ: the stack trace and the cause's message in
// x-exception-*, the original exchange and key, a JSON body. Cause numbers
// which of CauseKinds broke it; ids, amounts, hosts, UUIDs, line and column
// numbers differ from message to message, as in production.
type CauseMessage struct {
	ID      string
	Cause   int
	Headers map[string]any // strings only: any client carries them as is
	Body    []byte
	At      time.Time
}

// CauseKinds is how many causes CauseMessages draws from.
const CauseKinds = 3

// CauseTypes are the exception types of the causes, in Cause order.
var CauseTypes = [CauseKinds]string{
	"org.springframework.web.client.ResourceAccessException",
	"org.springframework.messaging.handler.annotation.support.MethodArgumentNotValidException",
	"com.fasterxml.jackson.core.JsonParseException",
}

// CauseMessages is n dead letters of CauseKinds causes (roughly 5:3:2),
// the same for the same seed, timestamped over the hour before end.
func CauseMessages(n int, seed uint64, end time.Time) []CauseMessage {
	r := rand.New(rand.NewPCG(seed, 7))
	base := end.Add(-time.Hour).Truncate(time.Second)
	out := make([]CauseMessage, n)
	for i := range out {
		order := fmt.Sprintf("ORD-2025-%06d", r.IntN(1_000_000))
		req := uuid(r)
		at := base.Add(time.Duration(i) * time.Hour / time.Duration(n)).Truncate(time.Second)
		cause := 0
		switch x := r.IntN(10); {
		case x >= 8:
			cause = 2
		case x >= 5:
			cause = 1
		}
		var msg, trace string
		switch cause {
		case 0:
			pod := fmt.Sprintf("payments-%x-%s", r.Uint32()&0xfffff, string(rune('a'+r.IntN(26)))+string(rune('a'+r.IntN(26)))+"x"+fmt.Sprint(r.IntN(10)))
			msg = fmt.Sprintf(`I/O error on POST request for "http://%s:8080/v1/charges/%s?attempt=%d": Connect timed out after %dms (request-id %s); nested exception is java.net.SocketTimeoutException: Connect timed out`,
				pod, order, 1+r.IntN(5), 1000+r.IntN(9000), req)
		case 1:
			amount := -float64(r.IntN(100000)) / 100
			msg = fmt.Sprintf(`Could not resolve method parameter at index 0 in public void com.acme.payments.PaymentListener.onPayment(com.acme.payments.Payment): 1 error(s): [Field error in object 'payment' on field 'amount': rejected value [%.2f]; codes [Positive.payment.amount,Positive.amount,Positive.java.math.BigDecimal,Positive]; arguments [org.springframework.context.support.DefaultMessageSourceResolvable: codes [payment.amount,amount]; arguments []; default message [amount]]; default message [must be greater than 0]] for order %s, customer cus_%d`,
				amount, order, 10000+r.IntN(90000))
		case 2:
			col := 20 + r.IntN(400)
			msg = fmt.Sprintf(`Unexpected character ('}' (code 125)): was expecting double-quote to start field name
 at [Source: (String)"{"orderId":"%s","amount":%d.%02d,"currency":"EUR",}"; line: 1, column: %d]`, order, r.IntN(500), r.IntN(100), col)
		}
		trace = fmt.Sprintf("org.springframework.amqp.rabbit.support.ListenerExecutionFailedException: Listener method 'public void com.acme.payments.PaymentListener.onPayment(com.acme.payments.Payment)' threw exception\n"+
			"\tat org.springframework.amqp.rabbit.listener.adapter.MessagingMessageListenerAdapter.invokeHandler(MessagingMessageListenerAdapter.java:%d)\n"+
			"\tat org.springframework.amqp.rabbit.listener.AbstractMessageListenerContainer.doInvokeListener(AbstractMessageListenerContainer.java:1663)\n"+
			"\tat java.base/java.lang.Thread.run(Thread.java:833)\n"+
			"Caused by: %s: %s\n"+
			"\tat com.acme.payments.PaymentListener.onPayment(PaymentListener.java:%d)\n"+
			"\t... %d more\n", 250+r.IntN(40), CauseTypes[cause], msg, 30+r.IntN(60), 10+r.IntN(20))
		id := fmt.Sprintf("msg-%s", uuid(r))
		out[i] = CauseMessage{ID: id, Cause: cause, At: at,
			Headers: map[string]any{
				"x-exception-message":    msg,
				"x-exception-stacktrace": trace,
				"x-original-exchange":    "payments",
				"x-original-routingKey":  "payments.charge",
				"order-id":               order,
			},
			Body: fmt.Appendf(nil, `{"orderId":%q,"requestId":%q,"amount":%d.%02d,"currency":"EUR"}`, order, req, r.IntN(500), r.IntN(100)),
		}
	}
	return out
}

func uuid(r *rand.Rand) string {
	a, b := r.Uint64(), r.Uint64()
	return fmt.Sprintf("%08x-%04x-4%03x-%04x-%012x", a>>32, a>>16&0xffff, a&0xfff, b>>48&0x3fff|0x8000, b&0xffffffffffff)
}

// Publishings are the messages as AMQP publishes them (persistent, with a
// timestamp).
func Publishings(ms []CauseMessage) []amqp.Publishing {
	out := make([]amqp.Publishing, len(ms))
	for i, m := range ms {
		out[i] = amqp.Publishing{MessageId: m.ID, Timestamp: m.At, DeliveryMode: amqp.Persistent, ContentType: "application/json",
			Headers: amqp.Table(m.Headers), Body: m.Body}
	}
	return out
}

// PublishCauses publishes ms to queue through c's loss-free Publish (the
// simulation or a live client), in batches, each confirmed.
func PublishCauses(ctx context.Context, c broker.Publisher, queue string, ms []CauseMessage) error {
	for start := 0; start < len(ms); start += 500 {
		var batch []broker.Outgoing
		for i, m := range ms[start:min(start+500, len(ms))] {
			h := retry.Headers(m.Headers).Clone()
			h[broker.HeaderMoveID] = fmt.Sprint("causes/", start+i)
			at := m.At
			batch = append(batch, broker.Outgoing{RoutingKey: queue, Mandatory: true, Headers: h, Body: m.Body,
				Properties: broker.Properties{MessageID: m.ID, Timestamp: &at, ContentType: "application/json", DeliveryMode: 2}})
		}
		out, err := c.Publish(ctx, batch)
		if err != nil {
			return err
		}
		for i, o := range out {
			if !o.Confirmed {
				return fmt.Errorf("message %d to %s not confirmed: %v", start+i, queue, o.Err)
			}
		}
	}
	return nil
}

// CauseMessagesOf is dead letters of the causes in the counts given
// (counts[i] of CauseTypes[i]), in the order CauseMessages draws them, so
// the first ones are not in the whole's proportions. The same for the same
// seed.
func CauseMessagesOf(counts [CauseKinds]int, seed uint64, end time.Time) []CauseMessage {
	total := 0
	for _, n := range counts {
		total += n
	}
	var out []CauseMessage
	for draw := 3 * total; ; draw *= 2 {
		left, picked := counts, out[:0]
		for _, m := range CauseMessages(draw, seed, end) {
			if left[m.Cause] > 0 {
				left[m.Cause]--
				picked = append(picked, m)
			}
		}
		if len(picked) == total {
			return picked
		}
		out = picked
	}
}

// DeadLetter publishes ps to queue work through the default exchange and
// then rejects each (basic.nack, no requeue) as a worker that gives up
// does: the broker dead-letters them along work's dead-letter route. ch
// must be in confirm mode; it gives up after within.
func DeadLetter(ctx context.Context, ch *amqp.Channel, work string, ps []amqp.Publishing, within time.Duration) error {
	if err := PublishConfirmed(ctx, ch, "", work, ps); err != nil {
		return err
	}
	if err := ch.Qos(500, 0, false); err != nil {
		return fmt.Errorf("qos: %w", err)
	}
	tag := "reject-" + work
	ds, err := ch.Consume(work, tag, false, false, false, false, nil)
	if err != nil {
		return fmt.Errorf("consume %s: %w", work, err)
	}
	defer func() { _ = ch.Cancel(tag, false) }()
	timeout := time.After(within)
	for n := 0; n < len(ps); n++ {
		select {
		case d, ok := <-ds:
			if !ok {
				return fmt.Errorf("consume %s: closed after %d of %d", work, n, len(ps))
			}
			if err := d.Nack(false, false); err != nil {
				return fmt.Errorf("reject: %w", err)
			}
		case <-timeout:
			return fmt.Errorf("rejected %d of %d from %s within %s", n, len(ps), work, within)
		}
	}
	return nil
}

// CausesDLQ declares the queue work, dead-lettering through the default
// exchange into dlq, and dlq, and fills dlq the way workers do: counts'
// dead letters (CauseMessagesOf) published to work and rejected there. ch
// must be in confirm mode. Its messages' x-death says when each reached
// dlq.
func CausesDLQ(ctx context.Context, ch *amqp.Channel, work, dlq string, counts [CauseKinds]int, seed uint64) error {
	if _, err := ch.QueueDeclare(dlq, true, false, false, false, nil); err != nil {
		return fmt.Errorf("declare %s: %w", dlq, err)
	}
	if _, err := ch.QueueDeclare(work, true, false, false, false, amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": dlq}); err != nil {
		return fmt.Errorf("declare %s: %w", work, err)
	}
	return DeadLetter(ctx, ch, work, Publishings(CauseMessagesOf(counts, seed, time.Now())), 2*time.Minute)
}
