package topology

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/retry"
)

// Each framework's topology as its own code declares it (the source file is
// named on each fixture), read by Discover and Findings as a whole.

func fwQueue(name string, consumers int, args map[string]any) Queue {
	return Queue{Name: name, Type: QueueClassic, Consumers: consumers, Arguments: args}
}

func fwBind(src, dst, key string) Binding {
	return Binding{Source: src, Destination: dst, DestinationType: "queue", RoutingKey: key}
}

func fwBindX(src, dst, key string) Binding {
	return Binding{Source: src, Destination: dst, DestinationType: "exchange", RoutingKey: key}
}

// nsbVhost is NServiceBus's RabbitMQ transport with endpoints Sales and
// Billing: Particular/NServiceBus.RabbitMQ
// src/NServiceBus.Transport.RabbitMQ/DelayedDelivery/DelayInfrastructure.cs
// (levels 27…0: a topic exchange and a queue nsb.v2.delay-level-NN each,
// x-message-ttl 2^NN s, dead-lettering into the next lower level's exchange
// and, at level 00, into nsb.v2.delay-delivery; the queue bound with
// "<*. × (27−NN)>1.#", the next level's exchange with "…0.#"; each endpoint's
// exchange bound to nsb.v2.delay-delivery with "#.<endpoint>") and
// Routing/ConventionalRoutingTopology.cs (a fanout exchange per endpoint
// bound to its queue; "error" and "audit" queues, no dead-letter exchange).
func nsbVhost() *Vhost {
	v := &Vhost{Name: "/"}
	level := func(n int) string { return fmt.Sprintf("nsb.v2.delay-level-%02d", n) }
	for n := 27; n >= 0; n-- {
		dlx := "nsb.v2.delay-delivery"
		if n > 0 {
			dlx = level(n - 1)
		}
		v.Exchanges = append(v.Exchanges, Exchange{Name: level(n), Type: ExchangeTopic})
		v.Queues = append(v.Queues, fwQueue(level(n), 0, map[string]any{
			"x-queue-mode": "lazy", "x-message-ttl": int64(math.Pow(2, float64(n)) * 1000), "x-dead-letter-exchange": dlx}))
		prefix := strings.Repeat("*.", 27-n)
		v.Bindings = append(v.Bindings, fwBind(level(n), level(n), prefix+"1.#"))
		if n > 0 {
			v.Bindings = append(v.Bindings, fwBindX(level(n), level(n-1), prefix+"0.#"))
		} else {
			v.Bindings = append(v.Bindings, fwBindX(level(0), "nsb.v2.delay-delivery", prefix+"0.#"))
		}
	}
	v.Exchanges = append(v.Exchanges, Exchange{Name: "nsb.v2.delay-delivery", Type: ExchangeTopic})
	for _, ep := range []string{"Sales", "Billing"} {
		v.Exchanges = append(v.Exchanges, Exchange{Name: ep, Type: ExchangeFanout})
		v.Queues = append(v.Queues, fwQueue(ep, 1, nil))
		v.Bindings = append(v.Bindings, fwBind(ep, ep, ""), fwBindX("nsb.v2.delay-delivery", ep, "#."+ep))
	}
	for _, q := range []string{"error", "audit"} {
		v.Exchanges = append(v.Exchanges, Exchange{Name: q, Type: ExchangeFanout})
		v.Queues = append(v.Queues, fwQueue(q, 0, nil))
		v.Bindings = append(v.Bindings, fwBind(q, q, ""))
	}
	return v
}

// mtVhost is MassTransit's RabbitMQ transport for endpoints submit-order
// and order-accepted: MassTransit/MassTransit
// src/Transports/MassTransit.RabbitMqTransport/RabbitMqTransport/Topology
// (a fanout exchange per endpoint bound to its queue, the same for
// <queue>_error and <queue>_skipped; no dead-letter exchange: faults are
// published to the error exchange).
func mtVhost() *Vhost {
	v := &Vhost{Name: "/"}
	for _, ep := range []string{"submit-order", "order-accepted"} {
		for _, q := range []string{ep, ep + "_error", ep + "_skipped"} {
			c := 0
			if q == ep {
				c = 2
			}
			v.Exchanges = append(v.Exchanges, Exchange{Name: q, Type: ExchangeFanout})
			v.Queues = append(v.Queues, fwQueue(q, c, map[string]any{"x-queue-type": "classic"}))
			v.Bindings = append(v.Bindings, fwBind(q, q, ""))
		}
	}
	return v
}

// sneakersVhost is Sneakers' Maxretry handler for queue "downloads":
// jondot/sneakers lib/sneakers/handlers/maxretry.rb (topic exchanges
// downloads-retry, downloads-retry-requeue and downloads-error; queue
// downloads-retry with x-message-ttl 60000 dead-lettering into
// downloads-retry-requeue, which routes back to downloads with "#";
// downloads-error bound with "#"; the work queue's own x-dead-letter-exchange
// downloads-retry, as its README asks).
func sneakersVhost() *Vhost {
	return &Vhost{Name: "/",
		Queues: []Queue{
			fwQueue("downloads", 1, map[string]any{"x-dead-letter-exchange": "downloads-retry"}),
			fwQueue("downloads-retry", 0, map[string]any{"x-dead-letter-exchange": "downloads-retry-requeue", "x-message-ttl": int32(60000)}),
			fwQueue("downloads-error", 0, nil),
		},
		Exchanges: []Exchange{{Name: "sneakers", Type: ExchangeDirect}, {Name: "downloads-retry", Type: ExchangeTopic},
			{Name: "downloads-retry-requeue", Type: ExchangeTopic}, {Name: "downloads-error", Type: ExchangeTopic}},
		Bindings: []Binding{fwBind("sneakers", "downloads", "downloads"), fwBind("downloads-retry", "downloads-retry", "#"),
			fwBind("downloads-retry-requeue", "downloads", "#"), fwBind("downloads-error", "downloads-error", "#")},
	}
}

// celeryVhost is a Celery task queue with the dead-letter exchange Celery's
// documentation adds for Reject(requeue=False) (celery/celery:
// docs/userguide/tasks.rst, "Reject"; kombu declares the queue with
// queue_arguments): retries are re-published by the worker itself.
func celeryVhost() *Vhost {
	return &Vhost{Name: "/",
		Queues: []Queue{
			fwQueue("tasks", 4, map[string]any{"x-dead-letter-exchange": "tasks.dlx", "x-dead-letter-routing-key": "tasks.dlq"}),
			fwQueue("tasks.dlq", 0, nil),
			fwQueue("celeryev.4f1d", 1, nil),
		},
		Exchanges: []Exchange{{Name: "tasks", Type: ExchangeDirect}, {Name: "tasks.dlx", Type: ExchangeDirect}, {Name: "celeryev", Type: ExchangeTopic}},
		Bindings:  []Binding{fwBind("tasks", "tasks", "tasks"), fwBind("tasks.dlx", "tasks.dlq", "tasks.dlq"), fwBind("celeryev", "celeryev.4f1d", "#")},
	}
}

// springVhost is Spring Cloud Stream's RabbitMQ binder for destination
// orders with groups billing (dlqTtl 5000 and dlqDeadLetterExchange "": the
// DLQ is a tier back to the group queue; the application parks a message
// that has expired there too often in orders.billing.parkingLot, as the
// binder's documentation shows) and audit (defaults: autoBindDlq):
// spring-cloud/spring-cloud-stream binders/rabbit-binder/
// spring-cloud-stream-binder-rabbit-core/.../RabbitExchangeQueueProvisioner.java.
func springVhost() *Vhost {
	return &Vhost{Name: "/",
		Queues: []Queue{
			fwQueue("orders.billing", 2, map[string]any{"x-dead-letter-exchange": "DLX", "x-dead-letter-routing-key": "orders.billing"}),
			fwQueue("orders.billing.dlq", 0, map[string]any{"x-message-ttl": int32(5000), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "orders.billing"}),
			fwQueue("orders.billing.parkingLot", 0, nil),
			fwQueue("orders.audit", 1, map[string]any{"x-dead-letter-exchange": "DLX", "x-dead-letter-routing-key": "orders.audit"}),
			fwQueue("orders.audit.dlq", 0, nil),
		},
		Exchanges: []Exchange{{Name: "orders", Type: ExchangeTopic}, {Name: "DLX", Type: ExchangeDirect}},
		Bindings: []Binding{fwBind("orders", "orders.billing", "#"), fwBind("orders", "orders.audit", "#"),
			fwBind("DLX", "orders.billing.dlq", "orders.billing"), fwBind("DLX", "orders.audit.dlq", "orders.audit")},
	}
}

// rascalVhost is rascal's documented shared delayed retry (onebeyond/rascal:
// README.md "Republishing with delay", lib/config/baseline.js): topic
// exchanges delay, retry and dead_letters; one wait queue delay:1m
// (x-message-ttl 60000, dead-lettering into retry, which routes to each
// work queue by its own name, carried as CC); work queues dead-letter into
// dead_letters.
func rascalVhost() *Vhost {
	return &Vhost{Name: "/",
		Queues: []Queue{
			fwQueue("delay:1m", 0, map[string]any{"x-message-ttl": int32(60000), "x-dead-letter-exchange": "retry"}),
			fwQueue("q1", 1, map[string]any{"x-dead-letter-exchange": "dead_letters"}),
			fwQueue("q2", 1, map[string]any{"x-dead-letter-exchange": "dead_letters"}),
			fwQueue("dead_letters", 0, nil),
		},
		Exchanges: []Exchange{{Name: "delay", Type: ExchangeTopic}, {Name: "retry", Type: ExchangeTopic}, {Name: "dead_letters", Type: ExchangeTopic}, {Name: "e1", Type: ExchangeTopic}},
		Bindings: []Binding{fwBind("delay", "delay:1m", "delay.1m"), fwBind("retry", "q1", "q1.#"), fwBind("retry", "q2", "q2.#"),
			fwBind("dead_letters", "dead_letters", "#"), fwBind("e1", "q1", "a.#"), fwBind("e1", "q2", "b.#")},
	}
}

func TestDiscoverFrameworks(t *testing.T) {
	nsbDelay := retry.Delay{Name: "nsb.v2.delay-level-00…27", MinTTL: time.Second, MaxTTL: (1 << 27) * time.Second}
	for n := range 28 {
		nsbDelay.Queues = append(nsbDelay.Queues, fmt.Sprintf("nsb.v2.delay-level-%02d", n))
		// Every level reaches each endpoint, down the chain.
		nsbDelay.Levels = append(nsbDelay.Levels, retry.DelayLevel{Queue: nsbDelay.Queues[n], TTL: (1 << n) * time.Second})
	}
	rascalTier := []retry.Tier{{Queue: "delay:1m", TTL: time.Minute, ReturnExchange: "retry", KeepsRoutingKey: true}}
	tests := []struct {
		name string
		v    *Vhost
		want []retry.Ladder
	}{
		{"NServiceBus: the delay levels are one delay of each endpoint, error its shared error queue", nsbVhost(), []retry.Ladder{
			{Main: "Billing", Delays: []retry.Delay{nsbDelay}, DLQ: "error", DLQFrom: "NServiceBus: error (shared)"},
			{Main: "Sales", Delays: []retry.Delay{nsbDelay}, DLQ: "error", DLQFrom: "NServiceBus: error (shared)"},
		}},
		{"MassTransit: _error and _skipped by naming, retries in the consumer", mtVhost(), []retry.Ladder{
			{Main: "order-accepted", DLQ: "order-accepted_error", DLQFrom: "MassTransit: {queue}_error", ErrorQueues: []string{"order-accepted_skipped"}, RetriesInConsumer: true},
			{Main: "submit-order", DLQ: "submit-order_error", DLQFrom: "MassTransit: {queue}_error", ErrorQueues: []string{"submit-order_skipped"}, RetriesInConsumer: true},
		}},
		{"Sneakers: the retry tier and the -error queue by naming", sneakersVhost(), []retry.Ladder{
			{Main: "downloads", Tiers: []retry.Tier{{Queue: "downloads-retry", TTL: time.Minute, ReturnExchange: "downloads-retry-requeue", KeepsRoutingKey: true}},
				DLQ: "downloads-error", DLQFrom: "Sneakers: {queue}-error"},
		}},
		{"Celery: a task queue and its DLQ", celeryVhost(), []retry.Ladder{
			{Main: "tasks", DLQ: "tasks.dlq", RetriesInConsumer: true},
		}},
		{"Spring: the DLQ loop is a tier, the parking lot its dead end; a group with defaults is a ladder", springVhost(), []retry.Ladder{
			{Main: "orders.audit", DLQ: "orders.audit.dlq", RetriesInConsumer: true},
			{Main: "orders.billing", Tiers: []retry.Tier{{Queue: "orders.billing.dlq", TTL: 5 * time.Second, ReturnExchange: "", ReturnRoutingKey: "orders.billing"}},
				DLQ: "orders.billing.parkingLot", DLQFrom: "Spring AMQP / Spring Cloud Stream: {queue}.parkingLot"},
		}},
		{"rascal: one shared tier in each work queue's ladder", rascalVhost(), []retry.Ladder{
			{Main: "q1", Tiers: rascalTier, DLQ: "dead_letters"},
			{Main: "q2", Tiers: rascalTier, DLQ: "dead_letters"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Discover(tt.v)
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Discover =\n%+v\nwant\n%+v", got, tt.want)
			}
			// No false finding on a framework's own topology: its delay
			// queues have no consumers by design, its error queues are
			// linked, its tiers have TTLs.
			for _, f := range Findings(tt.v, got) {
				t.Errorf("finding %s on %s: %s", f.Code, f.Queue, f.Message)
			}
		})
	}
}

// A delay chain needs two links in a row: one tier feeding a work queue
// that expires stale messages into its DLQ (workers down, so nothing tells
// the work queue from a delay stage but the chain's length) stays a tier of
// a ladder.
func TestDiscoverTierIntoAStaleExpiringQueueIsNoDelayChain(t *testing.T) {
	v := &Vhost{Queues: []Queue{
		fwQueue("jobs", 0, map[string]any{"x-message-ttl": int32(86400000), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "jobs.dlq"}),
		fwQueue("jobs.wait", 0, map[string]any{"x-message-ttl": int32(5000), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "jobs"}),
		fwQueue("jobs.wait.long", 0, map[string]any{"x-message-ttl": int32(60000), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "jobs"}),
		fwQueue("jobs.dlq", 0, nil),
	}}
	ls := Discover(v)
	if len(ls) != 1 || ls[0].Main != "jobs" || len(ls[0].Tiers) != 2 || len(ls[0].Delays) != 0 || ls[0].DLQ != "jobs.dlq" {
		t.Fatalf("ladders %+v, want jobs with two tiers and its DLQ", ls)
	}
}

// A chain of consumed TTL queues is work, not a delay infrastructure.
func TestDiscoverConsumedTTLChainIsNoDelay(t *testing.T) {
	v := &Vhost{Queues: []Queue{
		fwQueue("a", 1, map[string]any{"x-message-ttl": int32(1000), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "b"}),
		fwQueue("b", 1, map[string]any{"x-message-ttl": int32(1000), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "c"}),
		fwQueue("c", 1, map[string]any{"x-message-ttl": int32(1000), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "d"}),
		fwQueue("d", 1, nil),
	}}
	for _, l := range Discover(v) {
		if len(l.Delays) > 0 {
			t.Errorf("ladder %s has delays %+v: consumed queues are no delay chain", l.Main, l.Delays)
		}
	}
}

// The naming links an error queue only when that queue exists, and never a
// queue on the main's own loop: Spring's {queue}.dlq with a TTL back to the
// group queue is its tier, not its error queue.
func TestDiscoverNamedErrorQueueNeverATier(t *testing.T) {
	ls := Discover(springVhost())
	i := slices.IndexFunc(ls, func(l retry.Ladder) bool { return l.Main == "orders.billing" })
	if i < 0 || slices.Contains(ls[i].ErrorQueues, "orders.billing.dlq") || ls[i].DLQ == "orders.billing.dlq" {
		t.Fatalf("ladders %+v", ls)
	}
	v := mtVhost()
	v.Queues = slices.DeleteFunc(v.Queues, func(q Queue) bool { return q.Name == "submit-order_error" })
	ls = Discover(v)
	i = slices.IndexFunc(ls, func(l retry.Ladder) bool { return l.Main == "submit-order" })
	if i < 0 || ls[i].DLQ != "submit-order_skipped" || len(ls[i].ErrorQueues) != 0 {
		t.Fatalf("without submit-order_error: ladders %+v", ls)
	}
}

// Where dead letters end, for dlq-growing: the error queues a framework
// publishes into, never the delay levels its delayed messages pass through.
func TestDeadLetterQueuesOfFrameworks(t *testing.T) {
	for _, tt := range []struct {
		v    *Vhost
		want []string
	}{
		{nsbVhost(), []string{"error"}},
		{mtVhost(), []string{"order-accepted_error", "order-accepted_skipped", "submit-order_error", "submit-order_skipped"}},
		{springVhost(), []string{"orders.audit.dlq", "orders.billing.parkingLot"}},
	} {
		if got := DeadLetterQueues(tt.v, Discover(tt.v)); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("DeadLetterQueues = %q, want %q", got, tt.want)
		}
	}
}

// A message the application parked in Spring's parking lot after two
// expiries in the DLQ tier counts those two retries: the parking lot is in
// the billing ladder, so its x-death is read against the ladder's tiers.
func TestSpringParkingLotCountsTheTierDeaths(t *testing.T) {
	ls := Discover(springVhost())
	h := retry.Headers{
		"x-death": []any{
			map[string]any{"queue": "orders.billing.dlq", "reason": "expired", "count": int64(2), "exchange": "DLX", "routing-keys": []any{"orders.billing"}},
			map[string]any{"queue": "orders.billing", "reason": "rejected", "count": int64(3), "exchange": "orders", "routing-keys": []any{"orders"}},
		},
		"x-exception-message": "boom",
	}
	st := retry.ReadState(h, retry.DeathQueuesOf(ls, "orders.billing.parkingLot"))
	if st.Count != 2 || st.Source != retry.SourceXDeath {
		t.Fatalf("count %d from %q, want 2 from x-death", st.Count, st.Source)
	}
}

// A library's name in every queue it declares decides nothing: a wait
// queue with no TTL shared by two work queues gets the same ladders and
// the same hol-risk whether the library is called "retry-kit" or "kit";
// and what messages showed (per-message expirations in the shared queue)
// makes it a wait queue whatever the names say.
func TestNamesSharedByBothSidesDecideNothing(t *testing.T) {
	shape := func(lib string) *Vhost {
		return &Vhost{Name: "/",
			Queues: []Queue{
				// The library publishes failures and delayed retries
				// itself: no dead-letter exchange on the work queues.
				fwQueue(lib+".orders", 1, nil),
				fwQueue(lib+".emails", 1, nil),
				fwQueue(lib+".hold", 0, map[string]any{"x-dead-letter-exchange": lib + ".back"}),
			},
			Exchanges: []Exchange{{Name: lib + ".back", Type: ExchangeTopic}, {Name: lib + ".in", Type: ExchangeTopic}, {Name: lib + ".later", Type: ExchangeTopic}},
			Bindings: []Binding{fwBind(lib+".back", lib+".orders", "orders.#"), fwBind(lib+".back", lib+".emails", "emails.#"),
				fwBind(lib+".later", lib+".hold", "#"), fwBind(lib+".in", lib+".orders", "orders.#"), fwBind(lib+".in", lib+".emails", "emails.#")},
		}
	}
	strip := func(v *Vhost, lib string) (mains []string, codes []string) {
		ls := Discover(v)
		for _, l := range ls {
			mains = append(mains, strings.TrimPrefix(l.Main, lib)+" waits in "+strings.Join(l.WaitQueues, ","))
		}
		for _, f := range Findings(v, ls) {
			codes = append(codes, f.Code+" "+strings.TrimPrefix(f.Queue, lib))
		}
		return mains, codes
	}
	plainMains, plainCodes := strip(shape("kit"), "kit")
	if !slices.Contains(plainCodes, CodeHoLRisk+" .hold") {
		t.Fatalf("neutral names: findings %q, want hol-risk on the shared queue", plainCodes)
	}
	for _, lib := range []string{"retry-kit", "kit-retry", "dead-kit"} {
		mains, codes := strip(shape(lib), lib)
		if !reflect.DeepEqual(codes, plainCodes) || len(mains) != len(plainMains) {
			t.Errorf("%s: ladders %q findings %q; under neutral names %q %q", lib, mains, codes, plainMains, plainCodes)
		}
	}
	// Evidence over names: the same queue called "kit.failed" after all.
	v := shape("kit")
	v.Queues[2].Name = "kit.failed"
	if _, codes := strip(v, "kit"); slices.Contains(codes, CodeHoLRisk+".failed") {
		t.Fatalf("a DLQ-like name with nothing seen: %q", codes)
	}
	v.Observe("kit.failed", true, nil)
	if _, codes := strip(v, "kit"); !slices.Contains(codes, CodeHoLRisk+" .failed") {
		t.Errorf("per-message expirations seen in kit.failed: findings %q, want hol-risk", codes)
	}
}
