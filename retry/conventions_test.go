package retry

import (
	"strings"
	"testing"
	"time"
)

// Messages as each framework writes them, from the source its Convention
// cites; what ReadState and OriginOf must read from them.
func TestConventionsReadEachFramework(t *testing.T) {
	at := time.Date(2024, 3, 1, 10, 20, 30, 0, time.UTC)
	tests := []struct {
		name string
		h    Headers
		// want
		framework, source    string
		count                int64
		errText, errSrc, typ string
		when                 time.Time
		trace                string
		failedQueue          string
		origin               Origin
		originOK             bool
	}{{
		// spring-rabbit .../retry/RepublishMessageRecoverer.java: the
		// exception message and stack trace, and the exchange and key the
		// message was received with. No count of its own: none here.
		name: "Spring RepublishMessageRecoverer",
		h: Headers{"x-exception-message": "Order A-1 rejected", "x-exception-stacktrace": "org.springframework.amqp.rabbit.support.ListenerExecutionFailedException: Listener threw\n\tat x.y(Z.java:1)\nCaused by: java.lang.IllegalStateException: Order A-1 rejected",
			"x-original-exchange": "orders", "x-original-routingKey": "orders.billing"},
		framework: "Spring AMQP / Spring Cloud Stream", source: SourceNone,
		errText: "Order A-1 rejected", errSrc: "x-exception-message",
		trace:  "org.springframework.amqp.rabbit.support.ListenerExecutionFailedException: Listener threw\n\tat x.y(Z.java:1)\nCaused by: java.lang.IllegalStateException: Order A-1 rejected",
		origin: Origin{Exchange: "orders", RoutingKey: "orders.billing", By: "x-original-exchange"}, originOK: true,
	}, {
		// spring-amqp MessageProperties.RETRY_COUNT (3.2): the binder's
		// republishes counted in retry-count, read before x-death (which
		// 4.x leaves at 1 on a republished message).
		name: "Spring retry-count",
		h: Headers{"x-exception-message": "Order A-1 rejected", "retry-count": int64(3),
			"x-death": []any{map[string]any{"queue": "orders.billing.dlq", "reason": "expired", "count": int64(1)}}},
		framework: "Spring AMQP / Spring Cloud Stream", source: "retry-count", count: 3,
		errText: "Order A-1 rejected", errSrc: "x-exception-message",
	}, {
		// A retry-count of someone else's (no Spring exception header)
		// is not Spring's: it is read as a guess (guess_test.go).
		name: "retry-count alone",
		h:    Headers{"retry-count": int64(3)}, source: "retry-count", count: 3,
	}, {
		// MassTransit src/MassTransit/SendContextExtensions.cs
		// (SetExceptionHeaders): MT-Fault-* on the _error copy; the
		// retry count only when retries were made; the input address is
		// the endpoint URI.
		name: "MassTransit fault",
		h: Headers{"MT-Reason": "fault", "MT-Fault-ExceptionType": "System.InvalidOperationException", "MT-Fault-InputAddress": "rabbitmq://localhost/shop/submit-order?bind=true",
			"MT-Fault-Message": "Order A-2 rejected", "MT-Fault-Timestamp": "2024-03-01T10:20:30.0000000Z", "MT-Fault-StackTrace": "   at Shop.Consume()", "MT-Fault-RetryCount": int32(2)},
		framework: "MassTransit", source: "MT-Fault-RetryCount", count: 2,
		errText: "Order A-2 rejected", errSrc: "MT-Fault-Message", typ: "System.InvalidOperationException", when: at,
		trace: "   at Shop.Consume()", failedQueue: "submit-order",
		origin: Origin{RoutingKey: "submit-order", By: "MT-Fault-InputAddress"}, originOK: true,
	}, {
		// Redelivered through the delayed exchange: MT-Redelivery-Count
		// (ApplyRedeliveryOptions) counts before the immediate retries.
		name:      "MassTransit redelivery",
		h:         Headers{"MT-Redelivery-Count": int32(3), "MT-Fault-RetryCount": int32(2), "MT-Fault-InputAddress": "queue:submit-order"},
		framework: "MassTransit", source: SourceMassTransit, count: 3, failedQueue: "submit-order",
		origin: Origin{RoutingKey: "submit-order", By: "MT-Fault-InputAddress"}, originOK: true,
	}, {
		// NServiceBus Headers.cs (NServiceBus.Retries), FaultsHeaderKeys.cs
		// (FailedQ), AddExceptionHeadersBehavior.cs (ExceptionInfo.*,
		// TimeOfFailure in its wire format).
		name: "NServiceBus error queue",
		h: Headers{"NServiceBus.Retries": "2", "NServiceBus.FailedQ": "Sales", "NServiceBus.ExceptionInfo.ExceptionType": "System.TimeoutException",
			"NServiceBus.ExceptionInfo.Message": "db down", "NServiceBus.ExceptionInfo.StackTrace": "at Sales.Handle()", "NServiceBus.TimeOfFailure": "2024-03-01 10:20:30:000000 Z"},
		framework: "NServiceBus", source: SourceNServiceBus, count: 2,
		errText: "db down", errSrc: "NServiceBus.ExceptionInfo.Message", typ: "System.TimeoutException", when: at,
		trace: "at Sales.Handle()", failedQueue: "Sales",
		origin: Origin{RoutingKey: "Sales", By: "NServiceBus.FailedQ"}, originOK: true,
	}, {
		// celery/app/amqp.py as_task_v2: task, id, retries, eta; no error
		// text (it lives in the result backend).
		name:      "Celery retried task",
		h:         Headers{"lang": "py", "task": "shop.charge", "id": "5b0c", "retries": int64(2), "eta": "2024-03-01T10:25:30+00:00", "origin": "gen1@host"},
		framework: "Celery", source: "retries", count: 2,
	}, {
		// lib/sneakers/handlers/maxretry.rb: retry_info JSON, num_attempts
		// counting this failure, the exception's class, message, time and
		// the first backtrace lines.
		name: "Sneakers error queue",
		h: Headers{"retry_info": `{"error":"boom","num_attempts":6,"failed_at":"2024-03-01T10:20:30+00:00","properties":{"headers":{}},` +
			`"error_class":"RuntimeError","error_message":"Order A-3 rejected","backtrace":["worker.rb:3:in 'work'","sneakers.rb:9"]}`},
		framework: "Sneakers", source: "retry_info.num_attempts", count: 5,
		errText: "Order A-3 rejected", errSrc: "retry_info.error_message", typ: "RuntimeError", when: at,
		trace: "worker.rb:3:in 'work'\nsneakers.rb:9",
	}, {
		// A message that failed before keeps the older records behind the
		// newest: an array, newest first.
		name:      "Sneakers twice failed",
		h:         Headers{"retry_info": []byte(`[{"error":"reject","num_attempts":3,"failed_at":"2024-03-01T10:20:30Z"},{"error":"timeout","num_attempts":3}]`)},
		framework: "Sneakers", source: "retry_info.num_attempts", count: 2,
		errText: "reject", errSrc: "retry_info.error", when: at,
	}, {
		// lib/amqp/SubscriberError.js (republish: recovery.<queue>.republished,
		// originalExchange/RoutingKey, error.message/code) and
		// lib/amqp/Subscription.js (originalQueue): one nested table.
		name: "rascal republished",
		h: Headers{"rascal": map[string]any{"originalQueue": "q1", "originalVhost": "/", "originalExchange": "e1", "originalRoutingKey": "k1",
			"recovery": map[string]any{"q1": map[string]any{"republished": int32(4)}},
			"error":    map[string]any{"message": "Order A-4 rejected", "code": "E_ORDER"}}},
		framework: "rascal", source: "rascal.recovery.q1.republished", count: 4,
		errText: "Order A-4 rejected", errSrc: "rascal.error.message", typ: "E_ORDER", failedQueue: "q1",
		origin: Origin{Exchange: "e1", RoutingKey: "k1", By: "rascal.originalExchange"}, originOK: true,
	}, {
		// Forwarded (through a delay publication: rascal's README's retry
		// loop) counts as republished does: each is one recovery attempt.
		name:      "rascal forwarded",
		h:         Headers{"rascal": map[string]any{"originalQueue": "q1", "recovery": map[string]any{"q1": map[string]any{"forwarded": int32(1)}}, "error": map[string]any{"message": "nope"}}},
		framework: "rascal", source: "rascal.recovery.q1.forwarded", count: 1, errText: "nope", errSrc: "rascal.error.message", failedQueue: "q1",
		origin: Origin{RoutingKey: "q1", By: "rascal.originalQueue"}, originOK: true,
	}, {
		// Each strategy counts its own attempts: republished once, then
		// forwarded twice is three retries.
		name:      "rascal republished and forwarded",
		h:         Headers{"rascal": map[string]any{"originalQueue": "q1", "recovery": map[string]any{"q1": map[string]any{"republished": int32(1), "forwarded": int64(2)}}, "error": map[string]any{"message": "nope"}}},
		framework: "rascal", source: "rascal.recovery.q1.republished + rascal.recovery.q1.forwarded", count: 3, errText: "nope", errSrc: "rascal.error.message", failedQueue: "q1",
		origin: Origin{RoutingKey: "q1", By: "rascal.originalQueue"}, originOK: true,
	}, {
		// symfony/messenger Serializer.php: one X-Message-Stamp-<class>
		// header per stamp class, a JSON array oldest first;
		// SendFailedMessageForRetryListener appends RedeliveryStamp(n),
		// AddErrorDetailsStampListener an ErrorDetailsStamp (whose
		// flattenException FlattenExceptionNormalizer writes). Waiting in
		// no queue: the retried message back in its queue.
		name: "Symfony Messenger retried",
		h: Headers{"type": `App\Message\ChargeCard`,
			symfonyRedelivery: `[{"retryCount":1,"redeliveredAt":"2024-03-01T10:20:00+00:00"},{"retryCount":2,"redeliveredAt":"2024-03-01T10:20:30+00:00"}]`,
			symfonyErrorDetails: `[{"exceptionClass":"App\\Exception\\CardDeclined","exceptionCode":0,"exceptionMessage":"Card A-5 declined",` +
				`"flattenException":{"message":"Card A-5 declined","code":0,"headers":[],"class":"App\\Exception\\CardDeclined","file":"/app/src/ChargeHandler.php","line":41,` +
				`"previous":null,"status":500,"status_text":"Internal Server Error","trace":[],"trace_as_string":"#0 /app/src/Worker.php(9): ChargeHandler->__invoke()\n#1 {main}"}}]`,
			`X-Message-Stamp-Symfony\Component\Messenger\Stamp\DelayStamp`: `[{"delay":2000}]`},
		framework: "Symfony Messenger", source: symfonyRedelivery + ".retryCount", count: 2,
		errText: "Card A-5 declined", errSrc: symfonyErrorDetails + ".exceptionMessage", typ: `App\Exception\CardDeclined`, when: at,
		trace: "#0 /app/src/Worker.php(9): ChargeHandler->__invoke()\n#1 {main}",
	}, {
		// SendFailedMessageToFailureTransportListener appends
		// RedeliveryStamp(0) on its way to the failure transport: the
		// retries made are the largest count; the newest error (the
		// array's last) is the one that sent it there.
		name: "Symfony Messenger failure transport",
		h: Headers{
			symfonyRedelivery: `[{"retryCount":1,"redeliveredAt":"2024-03-01T10:19:00+00:00"},{"retryCount":2,"redeliveredAt":"2024-03-01T10:19:30+00:00"},` +
				`{"retryCount":3,"redeliveredAt":"2024-03-01T10:20:00+00:00"},{"retryCount":0,"redeliveredAt":"2024-03-01T10:20:30+00:00"}]`,
			symfonyErrorDetails:  `[{"exceptionClass":"RuntimeException","exceptionCode":0,"exceptionMessage":"timeout"},{"exceptionClass":"LogicException","exceptionCode":7,"exceptionMessage":"Order A-6 rejected"}]`,
			symfonySentToFailure: `[{"originalReceiverName":"async"}]`},
		framework: "Symfony Messenger", source: symfonyRedelivery + ".retryCount", count: 3,
		errText: "Order A-6 rejected", errSrc: symfonyErrorDetails + ".exceptionMessage", typ: "LogicException", when: at,
	}, {
		// watermill poison.go: the error and where it was subscribed, as
		// metadata; watermill-amqp marshaler.go writes metadata as headers
		// beside the message UUID. No count: Retry retried in the handler.
		name: "Watermill poisoned",
		h: Headers{"_watermill_message_uuid": "7b1c", "reason_poisoned": "order A-7: payment service unavailable",
			"topic_poisoned": "orders", "handler_poisoned": "charge", "subscriber_poisoned": "amqp.Subscriber"},
		framework: "Watermill", source: SourceNone,
		errText: "order A-7: payment service unavailable", errSrc: "reason_poisoned", failedQueue: "orders",
		origin: Origin{RoutingKey: "orders", By: "topic_poisoned"}, originOK: true,
	}, {
		// moleculer-channels amqp.js: a retry is republished to
		// <group>.<channel> with x-redelivered-count, headers kept.
		name:      "Moleculer Channels redelivered",
		h:         Headers{"x-redelivered-count": int32(2)},
		framework: "Moleculer Channels", source: "x-redelivered-count", count: 2,
	}, {
		// moveToDeadLetter: new headers, the channel and group and
		// transformErrorToHeaders' x-error-* (stack base64, timestamp
		// Date.now() as text); no count.
		name: "Moleculer Channels dead letter",
		h: Headers{"x-original-channel": "order.created", "x-original-group": "billing",
			"x-error-message": "Order A-8 rejected", "x-error-name": "MoleculerRetryableError", "x-error-type": "ORDER_REJECTED", "x-error-code": "500",
			"x-error-retryable": "true", "x-error-timestamp": "1709288430000",
			"x-error-stack": "TW9sZWN1bGVyUmV0cnlhYmxlRXJyb3I6IE9yZGVyIEEtOCByZWplY3RlZAogICAgYXQgYmlsbGluZy5qczo0Mg=="},
		framework: "Moleculer Channels", source: SourceNone,
		errText: "Order A-8 rejected", errSrc: "x-error-message", typ: "MoleculerRetryableError", when: at,
		trace: "MoleculerRetryableError: Order A-8 rejected\n    at billing.js:42", failedQueue: "billing.order.created",
		origin: Origin{RoutingKey: "billing.order.created", By: "x-original-group + x-original-channel"}, originOK: true,
	}, {
		// A generic "retries" header without Celery's task headers is not
		// Celery's: it is read as a guess (guess_test.go).
		name: "retries alone", h: Headers{"retries": int32(7)}, source: "retries", count: 7,
	}, {
		// Rebus DeadletterQueueErrorHandler.cs: the error details and the
		// input queue added to the message's own rbs2-* headers; its
		// delivery attempts were counted in memory, so no count.
		name: "Rebus error queue",
		h: Headers{"rbs2-msg-id": "9c1f", "rbs2-intent": "p2p", "rbs2-source-queue": "orders",
			"rbs2-error-details": "Order A-9 rejected: System.InvalidOperationException: Order A-9 rejected\n   at Shop.Handler.Handle()"},
		framework: "Rebus", source: SourceNone,
		errText: "Order A-9 rejected: System.InvalidOperationException: Order A-9 rejected\n   at Shop.Handler.Handle()", errSrc: "rbs2-error-details",
		failedQueue: "orders", origin: Origin{RoutingKey: "orders", By: "rbs2-source-queue"}, originOK: true,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := ReadState(tt.h, nil)
			if len(st.Invalid) != 0 {
				t.Errorf("invalid: %v", st.Invalid)
			}
			if st.Framework != tt.framework || st.Source != tt.source || st.Count != tt.count {
				t.Errorf("framework %q count %d from %q, want %q %d from %q", st.Framework, st.Count, st.Source, tt.framework, tt.count, tt.source)
			}
			if st.LastError != tt.errText || st.ErrorSource != tt.errSrc || st.ErrorType != tt.typ || !st.LastErrorTime.Equal(tt.when) || st.StackTrace != tt.trace {
				t.Errorf("error %q from %q type %q at %v trace %q; want %q from %q type %q at %v trace %q",
					st.LastError, st.ErrorSource, st.ErrorType, st.LastErrorTime, st.StackTrace, tt.errText, tt.errSrc, tt.typ, tt.when, tt.trace)
			}
			if st.FailedQueue != tt.failedQueue {
				t.Errorf("failed queue %q, want %q", st.FailedQueue, tt.failedQueue)
			}
			o, ok := OriginOf(DecodeXDeath(tt.h), st, map[string]bool{"main": true})
			if ok != tt.originOK || o != tt.origin {
				t.Errorf("origin %+v %v, want %+v %v", o, ok, tt.origin, tt.originOK)
			}
		})
	}
}

// x-death stays first: a framework's record of the origin never overrides
// the queue the broker saw the message die in.
func TestOriginOfPrefersXDeath(t *testing.T) {
	h := Headers{
		"x-death": []any{map[string]any{"count": int64(1), "reason": "rejected", "queue": "main", "exchange": "work", "routing-keys": []any{"main.key"}}},
		"rascal":  map[string]any{"originalQueue": "elsewhere"},
	}
	st := ReadState(h, map[string]bool{"main": true})
	o, ok := OriginOf(DecodeXDeath(h), st, map[string]bool{"main": true})
	if !ok || o != (Origin{Exchange: "work", RoutingKey: "main.key"}) {
		t.Errorf("got %+v %v, want x-death's route", o, ok)
	}
	// Counts too: rascal wrote none, so x-death counts.
	if st.Source != SourceXDeath || st.Count != 1 || st.Framework != "rascal" {
		t.Errorf("got %+v", st)
	}
}

// Shapes no framework writes are reported, never read as counts or errors.
func TestConventionsMalformed(t *testing.T) {
	for _, tt := range []struct {
		name string
		h    Headers
		path string
	}{
		{"retry_info not JSON", Headers{"retry_info": "{num_attempts: 6"}, "retry_info"},
		{"retry_info not text", Headers{"retry_info": int32(6)}, "retry_info"},
		{"num_attempts zero", Headers{"retry_info": `{"num_attempts":0}`}, "retry_info.num_attempts"},
		{"num_attempts fraction", Headers{"retry_info": `{"num_attempts":1.5}`}, "retry_info.num_attempts"},
		{"rascal not a table", Headers{"rascal": "x"}, "rascal"},
		{"rascal recovery not a table", Headers{"rascal": map[string]any{"originalQueue": "q", "recovery": int32(1)}}, "rascal.recovery"},
		{"MassTransit address without queue", Headers{"MT-Fault-InputAddress": "rabbitmq://host/"}, "MT-Fault-InputAddress"},
		{"Symfony stamps not JSON", Headers{symfonyRedelivery: `[{retryCount:1}`}, symfonyRedelivery},
		{"Symfony retryCount never a count", Headers{symfonyRedelivery: `[{"retryCount":"x"},{"retryCount":-1}]`}, symfonyRedelivery + ".retryCount"},
		{"Moleculer group not text", Headers{"x-original-group": int32(3), "x-original-channel": "c"}, "x-original-group"},
	} {
		st := ReadState(tt.h, nil)
		if st.Source != SourceNone || st.Count != 0 || st.LastError != "" {
			t.Errorf("%s: read %+v", tt.name, st)
		}
		if len(st.Invalid) != 1 || st.Invalid[0].Path != tt.path {
			t.Errorf("%s: invalid %v, want %s", tt.name, st.Invalid, tt.path)
		}
	}
}

// Moleculer's stack trace is base64 and its time Unix milliseconds: a
// value of neither shape is reported and the rest still read.
func TestMoleculerMalformedStackAndTime(t *testing.T) {
	st := ReadState(Headers{"x-original-group": "g", "x-original-channel": "c", "x-error-message": "boom",
		"x-error-stack": "not base64!", "x-error-timestamp": "yesterday"}, nil)
	if st.LastError != "boom" || st.StackTrace != "" || !st.LastErrorTime.IsZero() || st.FailedQueue != "g.c" {
		t.Errorf("read %+v", st)
	}
	var paths []string
	for _, e := range st.Invalid {
		paths = append(paths, e.Path)
	}
	if strings.Join(paths, " ") != "x-error-timestamp x-error-stack" {
		t.Errorf("invalid %v, want x-error-timestamp and x-error-stack", st.Invalid)
	}
}

// Dramatiq writes no headers (dramatiq/brokers/rabbitmq.py publishes
// with delivery mode and priority only): a message in <queue>.XQ
// carries the broker's x-death of its rejection in <queue>, and that is
// all ladder reads; the retries in the body's options are not.
func TestDramatiqDeadLetterReadsXDeath(t *testing.T) {
	h := Headers{"x-death": []any{map[string]any{"count": int64(1), "reason": "rejected", "queue": "default", "exchange": "", "routing-keys": []any{"default"}}}}
	queues := map[string]bool{"default": true}
	st := ReadState(h, queues)
	if st.Framework != "" || st.Source != SourceXDeath || st.Count != 1 || st.LastError != "" {
		t.Errorf("read %+v", st)
	}
	if o, ok := OriginOf(DecodeXDeath(h), st, queues); !ok || o != (Origin{RoutingKey: "default"}) {
		t.Errorf("origin %+v %v, want the default exchange to default", o, ok)
	}
}

// Every entry cites the source it follows, and every path is well formed.
func TestConventionsCiteTheirSource(t *testing.T) {
	for _, c := range Conventions() {
		if c.Name == "" || !strings.Contains(c.Source, ": ") || !strings.Contains(c.Source, "/") {
			t.Errorf("%q: source %q should be repo: file path", c.Name, c.Source)
		}
		for _, paths := range [][]string{c.Count, c.Error, c.ErrorType, c.ErrorTime, c.StackTrace, c.OriginQueue, c.OriginExchange, c.OriginRoutingKey} {
			for _, p := range paths {
				if p == "" || strings.Count(p, "#") > 1 || strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/") {
					t.Errorf("%q: bad path %q", c.Name, p)
				}
				// An array selector is one lookup knows.
				if _, field, ok := strings.Cut(p, "#"); ok && strings.HasPrefix(field, "[") {
					if sel, _, _ := strings.Cut(field, "."); sel != selLast && sel != selMax {
						t.Errorf("%q: unknown array selector in %q", c.Name, p)
					}
				}
			}
		}
		for _, q := range c.ErrorQueues {
			// NServiceBus's "error" and Symfony's failure transport are one
			// queue for every work queue, named by their documentation.
			if !strings.Contains(q, "{queue}") && len(c.OriginQueue) == 0 && c.Name != "NServiceBus" && c.Name != "Symfony Messenger" {
				t.Errorf("%q: error queue %q names no work queue", c.Name, q)
			}
		}
	}
}

// FuzzConventionHeaders feeds arbitrary text to the JSON and table
// conventions: ReadState never panics, and a count it reads is never
// negative.
func FuzzConventionHeaders(f *testing.F) {
	f.Add(`{"num_attempts":6,"error":"x","backtrace":["a","b"]}`, "q")
	f.Add(`[{"num_attempts":1e3}]`, "")
	f.Add(`[]`, "{origin}")
	f.Add(`{"num_attempts":"7","failed_at":12}`, "rabbitmq://h/v/q?x=%zz")
	f.Add(`[{"retryCount":3,"redeliveredAt":"2024-03-01T10:20:00+00:00"},{"retryCount":0}]`, "1709288430000")
	f.Add(`[{"exceptionMessage":"x","exceptionClass":"E","flattenException":{"trace_as_string":"t"}},{"retryCount":"9"}]`, "{")
	f.Add(`[{"retryCount":null},{}]`, "TW9sZWN1bGVy")
	f.Fuzz(func(t *testing.T, info, s string) {
		for _, h := range []Headers{
			{"retry_info": info},
			{"retry_info": []byte(info), "MT-Fault-InputAddress": s, "NServiceBus.FailedQ": s},
			{"rascal": map[string]any{"originalQueue": s, "recovery": map[string]any{s: map[string]any{"republished": info}}, "error": map[string]any{"message": info, "code": s}}},
			{symfonyRedelivery: info, symfonyErrorDetails: []byte(info), symfonySentToFailure: s},
			{"x-original-group": s, "x-original-channel": info, "x-error-message": s, "x-error-stack": info, "x-error-timestamp": s, "x-redelivered-count": info},
			{"reason_poisoned": info, "topic_poisoned": s},
		} {
			st := ReadState(h, map[string]bool{s: true})
			if st.Count < 0 {
				t.Fatalf("negative count %d from %v", st.Count, h)
			}
			_, _ = OriginOf(DecodeXDeath(h), st, nil)
		}
	})
}

// Celery's eta is the message's due time: ISO 8601, None (void) when the
// task runs at once, and a garbled one is reported, not guessed.
func TestCeleryETAIsTheDueTime(t *testing.T) {
	base := Headers{"task": "shop.charge", "id": "5b0c", "retries": int64(1)}
	with := func(eta any) Headers {
		h := base.Clone()
		h["eta"] = eta
		return h
	}
	st := ReadState(with("2024-03-01T10:25:30.123456+00:00"), nil)
	if want := time.Date(2024, 3, 1, 10, 25, 30, 123456000, time.UTC); !st.DueTime.Equal(want) || st.DueSource != "eta" || len(st.Invalid) != 0 {
		t.Errorf("due %v from %q, invalid %v", st.DueTime, st.DueSource, st.Invalid)
	}
	if st := ReadState(with(nil), nil); !st.DueTime.IsZero() || st.DueSource != "" || len(st.Invalid) != 0 {
		t.Errorf("eta None: due %v, invalid %v", st.DueTime, st.Invalid)
	}
	if st := ReadState(with("soon"), nil); !st.DueTime.IsZero() || len(st.Invalid) != 1 || st.Invalid[0].Path != "eta" {
		t.Errorf("eta garbled: due %v, invalid %v", st.DueTime, st.Invalid)
	}
	// An "eta" without Celery's task headers is not Celery's.
	if st := ReadState(Headers{"eta": "2024-03-01T10:25:30Z"}, nil); !st.DueTime.IsZero() {
		t.Errorf("bare eta read as due %v", st.DueTime)
	}
}

// Rebus's entry is what names it: without the entry the guess reads the
// same error and failed queue from the names rbs2-error-details and
// rbs2-source-queue, but labelled guessed and with no framework.
func TestRebusEntryNamesWhatTheGuessReads(t *testing.T) {
	h := Headers{"rbs2-msg-id": "9c1f", "rbs2-source-queue": "orders", "rbs2-error-details": "Order A-9 rejected: System.InvalidOperationException"}
	var without []Convention
	for _, c := range conventions {
		if c.Name != "Rebus" {
			without = append(without, c)
		}
	}
	if len(without) == len(conventions) {
		t.Fatal("no Rebus entry in the table")
	}
	guessed := readMessage(without, h, nil, nil)
	known := readMessage(conventions[:], h, nil, nil)
	for _, st := range []RetryState{guessed, known} {
		if st.LastError != "Order A-9 rejected: System.InvalidOperationException" || st.FailedQueue != "orders" {
			t.Errorf("error %q, failed in %q; want rbs2-error-details and rbs2-source-queue read", st.LastError, st.FailedQueue)
		}
	}
	if guessed.Framework != "" || len(guessed.Guessed) == 0 {
		t.Errorf("without the entry: framework %q, guessed %v; want none, a guess", guessed.Framework, guessed.Guessed)
	}
	if known.Framework != "Rebus" || len(known.Guessed) != 0 {
		t.Errorf("with the entry: framework %q, guessed %v; want Rebus, nothing guessed", known.Framework, known.Guessed)
	}
}
