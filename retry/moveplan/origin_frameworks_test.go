package moveplan

import (
	"testing"

	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/topology"
)

// frameworkQueues: work queues and the error queues frameworks publish
// their failures into (no dead-lettering, so no x-death): NServiceBus's
// shared "error", MassTransit's submit-order_error, Sneakers' jobs-error,
// rascal's dead_letters.
func frameworkQueues() *topology.Vhost {
	v := &topology.Vhost{Name: "/", Exchanges: []topology.Exchange{{Name: "jobs-error", Type: topology.ExchangeTopic, MessagesDelayed: -1}}}
	for _, q := range []string{"Sales", "error", "submit-order", "submit-order_error", "jobs", "jobs-error", "q1", "dead_letters"} {
		v.Queues = append(v.Queues, topology.Queue{Name: q, Type: topology.QueueClassic})
	}
	v.Bindings = append(v.Bindings, topology.Binding{Source: "jobs-error", Destination: "jobs-error", DestinationType: "queue", RoutingKey: "#"})
	return v
}

func TestFailedInReadsFrameworkRecords(t *testing.T) {
	v := frameworkQueues()
	r := topology.NewRouter(v)
	ladders := topology.Discover(v)
	for _, tt := range []struct {
		name, in string
		h        retry.Headers
		want, by string
	}{
		// NServiceBus FaultsHeaderKeys.cs: FailedQ.
		{"NServiceBus", "error", retry.Headers{"NServiceBus.FailedQ": "Sales", "NServiceBus.ExceptionInfo.Message": "db down"}, "Sales", "NServiceBus.FailedQ"},
		// MassTransit SetExceptionHeaders: the input address.
		{"MassTransit", "submit-order_error", retry.Headers{"MT-Fault-InputAddress": "rabbitmq://localhost/submit-order", "MT-Fault-Message": "no"}, "submit-order", "MT-Fault-InputAddress"},
		// rascal Subscription.js: originalQueue.
		{"rascal", "dead_letters", retry.Headers{"rascal": map[string]any{"originalQueue": "q1", "error": map[string]any{"message": "no"}}}, "q1", "rascal.originalQueue"},
		// Sneakers maxretry.rb publishes to <q>-error keeping the key the
		// message had; only the naming says which queue.
		{"Sneakers", "jobs-error", retry.Headers{"retry_info": `{"num_attempts":6,"error":"boom"}`}, "jobs", "Sneakers naming"},
		// MassTransit's dead-letter transport moves a message no consumer
		// took to <q>_skipped with MT-Reason and no fault headers: its
		// naming says which queue.
		{"MassTransit skipped", "submit-order_skipped", retry.Headers{"MT-Reason": "skip", "MT-Host-MachineName": "web-1"}, "submit-order", "MassTransit naming"},
		// The same naming without Sneakers' header: only the name says,
		// and the answer says it is inferred.
		{"unmarked", "jobs-error", retry.Headers{"x-other": "1"}, "jobs", "inferred from the name jobs-error"},
		// A name no table knows says nothing.
		{"unknown naming", "jobs-limbo", retry.Headers{"x-other": "1"}, "", ""},
	} {
		f, ok := failedIn(r, ladders, tt.in, tt.h)
		if tt.want == "" {
			if ok {
				t.Errorf("%s: got %+v, want no answer", tt.name, f)
			}
			continue
		}
		if !ok || f.Queue != tt.want || f.By != tt.by {
			t.Errorf("%s: got %+v %v, want %s by %s", tt.name, f, ok, tt.want, tt.by)
		}
	}
}

// frameworksMoreQueues: the four frameworks' work and error queues as
// they declare them. Symfony (symfony/amqp-messenger Connection.php): the
// transport's queue "messages", a retry's delay queue dead-lettering back
// to it through the default exchange, the failure transport's "failed".
// Dramatiq (dramatiq/brokers/rabbitmq.py): "default" dead-letters to
// "default.XQ". Watermill's poison topic and Moleculer's FAILED_MESSAGES
// are published to.
func frameworksMoreQueues() *topology.Vhost {
	v := &topology.Vhost{Name: "/"}
	for _, q := range []string{"messages", "failed", "default.XQ", "orders", "poison_queue", "billing.order.created", "FAILED_MESSAGES"} {
		v.Queues = append(v.Queues, topology.Queue{Name: q, Type: topology.QueueClassic})
	}
	v.Queues = append(v.Queues,
		topology.Queue{Name: "delay_messages_messages_4000_retry", Type: topology.QueueClassic,
			Arguments: map[string]any{"x-message-ttl": int64(4000), "x-expires": int64(14000), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "messages"}},
		topology.Queue{Name: "default", Type: topology.QueueClassic, Consumers: 1,
			Arguments: map[string]any{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "default.XQ"}})
	return v
}

// Where each of the four says a message failed (or that nothing says).
func TestFailedInReadsMoreFrameworks(t *testing.T) {
	v := frameworksMoreQueues()
	r := topology.NewRouter(v)
	ladders := topology.Discover(v)
	symfonyRetried := retry.Headers{
		`X-Message-Stamp-Symfony\Component\Messenger\Stamp\RedeliveryStamp`: `[{"retryCount":3},{"retryCount":0}]`,
		// AmqpStamp::createFromAmqpEnvelope keeps the headers the message
		// was received with: the x-death of its last wait.
		"x-death": []any{map[string]any{"count": int64(1), "reason": "expired", "queue": "delay_messages_messages_4000_retry", "exchange": "delays",
			"routing-keys": []any{"delay_messages_messages_4000_retry"}}},
	}
	for _, tt := range []struct {
		name, in string
		h        retry.Headers
		want, by string
	}{
		{"Symfony after a wait", "failed", symfonyRetried, "messages", "x-death"},
		// Failed at once (max_retries 0): no wait, no x-death, and its
		// stamps name no queue (SentToFailureTransportStamp names the
		// transport).
		{"Symfony never retried", "failed", retry.Headers{`X-Message-Stamp-Symfony\Component\Messenger\Stamp\SentToFailureTransportStamp`: `[{"originalReceiverName":"async"}]`}, "", ""},
		// Dramatiq: rejected in default, dead-lettered to default.XQ.
		{"Dramatiq", "default.XQ", rejectedIn("default", "", "default"), "default", "x-death"},
		// Watermill poison.go: topic_poisoned, the queue with the queue configs.
		{"Watermill", "poison_queue", retry.Headers{"reason_poisoned": "no", "topic_poisoned": "orders"}, "orders", "topic_poisoned"},
		// moleculer-channels amqp.js moveToDeadLetter: group and channel.
		{"Moleculer Channels", "FAILED_MESSAGES", retry.Headers{"x-original-group": "billing", "x-original-channel": "order.created", "x-error-message": "no"},
			"billing.order.created", "x-original-group + x-original-channel"},
	} {
		f, ok := failedIn(r, ladders, tt.in, tt.h)
		if tt.want == "" {
			if ok {
				t.Errorf("%s: got %+v, want no answer", tt.name, f)
			}
			continue
		}
		if !ok || f.Queue != tt.want || f.By != tt.by {
			t.Errorf("%s: got %+v %v, want %s by %s", tt.name, f, ok, tt.want, tt.by)
		}
	}
}

// A message with x-death moves where it did before: the framework's record
// comes after the broker's.
func TestFailedInKeepsXDeathFirst(t *testing.T) {
	v := frameworkQueues()
	h := rejectedIn("jobs", "", "jobs")
	h["rascal"] = map[string]any{"originalQueue": "q1"}
	h["NServiceBus.FailedQ"] = "Sales"
	f, ok := failedIn(topology.NewRouter(v), topology.Discover(v), "dead_letters", h)
	if !ok || f.Queue != "jobs" || f.By != "x-death" {
		t.Errorf("got %+v %v, want jobs by x-death", f, ok)
	}
}

// Republished with a recorded route that reaches nothing any more: the
// framework's own naming of its dead end names the queue.
func TestFailedInByFrameworkNaming(t *testing.T) {
	v := springGroups()
	v.Bindings = v.Bindings[:0] // the group queues' bindings are gone
	h := springRepublished()
	f, ok := failedIn(topology.NewRouter(v), topology.Discover(v), "orders.billing.dlq", h)
	if !ok || f.Queue != "orders.billing" {
		t.Errorf("got %+v %v, want orders.billing from Spring's Q.dlq naming", f, ok)
	}
}

// --group-by error takes the type the conventions table read when no
// type header of its own says one (Sneakers' error_class, rascal's code).
func TestCauseTakesTheConventionsType(t *testing.T) {
	for _, tt := range []struct {
		h         retry.Headers
		typ, from string
	}{
		{retry.Headers{"retry_info": `{"num_attempts":6,"error_class":"RuntimeError","error_message":"Order A-7 rejected"}`}, "RuntimeError", "retry_info.error_class"},
		{retry.Headers{"rascal": map[string]any{"error": map[string]any{"message": "Order A-8 rejected", "code": "E_ORDER"}}}, "E_ORDER", "rascal.error.code"},
	} {
		c := CauseOf(tt.h, retry.ReadState(tt.h, nil))
		if c.Type != tt.typ || c.TypeFrom != tt.from {
			t.Errorf("got %+v, want type %s from %s", c, tt.typ, tt.from)
		}
	}
}

// Symfony's delay queues expire 10 s after their last use: a message in
// its failure transport still failed in the queue its last delay queue was
// named after (delay_{exchange}_{queue}_{ms}_retry), found among the
// queues that exist, even when the exchange's name holds underscores too.
func TestFailedInReadsAGoneDelayQueuesName(t *testing.T) {
	v := &topology.Vhost{Queues: []topology.Queue{{Name: "messages", Consumers: 1}, {Name: "high_prio", Consumers: 1}, {Name: "failed"}}}
	r := topology.NewRouter(v)
	death := func(q string) retry.Headers {
		return retry.Headers{"x-death": []any{map[string]any{"queue": q, "reason": "expired", "count": int64(1), "exchange": "delays", "routing-keys": []any{q}}}}
	}
	for _, tt := range []struct{ wait, want string }{
		{"delay_messages_messages_400_retry", "messages"},
		{"delay_my_app_high_prio_1000_retry", "high_prio"},
		{"delay_messages_gone_400_retry", "delay_messages_gone_400_retry"}, // no queue it could be: said as it is
		{"delay_messages_messages_retry", "delay_messages_messages_retry"}, // no delay in the name
	} {
		f, ok := failedIn(r, nil, "failed", death(tt.wait))
		if !ok || f.Queue != tt.want {
			t.Errorf("%s: got %+v %v, want %s", tt.wait, f, ok, tt.want)
		}
	}
}
