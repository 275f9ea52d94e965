package sim

import "github.com/ladder-tui/ladder/retry/topology"

// Demo queue and exchange names.
const (
	OrdersExchange = "orders.topic" // topic; orders.# → orders.process
	OrdersRetry    = "orders.retry" // headers; retry-tier=<tier> → that tier
	OrdersDLX      = "orders.dlx"   // fanout → orders.dlq
	OrdersMain     = "orders.process"
	OrdersWait5s   = "orders.wait.5s"
	OrdersWait30s  = "orders.wait.30s"
	OrdersWait5m   = "orders.wait.5m"
	OrdersDLQ      = "orders.dlq"

	PaymentsExchange = "payments" // direct; payments.authorize → payments.process
	PaymentsDLX      = "payments.dlx"
	PaymentsMain     = "payments.process"
	PaymentsWait     = "payments.wait" // no queue TTL: per-message expirations
	PaymentsDLQ      = "payments.dlq"

	InvoicesMain  = "invoices.process"
	InvoicesRetry = "invoices.retry" // fed by dead-lettering, no TTL: stuck

	NotifyMain     = "notifications.main"
	NotifyRetryX   = "notifications.retry"
	NotifyRetryQ   = "notifications.retry_queue" // returns to a queue "main" that does not exist
	notifyReturnTo = "main"

	// TierHeader selects the tier on the orders.retry headers exchange.
	TierHeader = "retry-tier"
)

// OrdersTiers are the orders ladder's wait queues, shortest first.
var OrdersTiers = []string{OrdersWait5s, OrdersWait30s, OrdersWait5m}

// declareDemo declares the demo topology:
//
//   - orders: the Go seed's ladder, finding-free. orders.topic routes
//     orders.# to orders.process, which dead-letters (rejections) through the
//     fanout orders.dlx into orders.dlq. The worker retries by publishing to
//     the headers exchange orders.retry with the message's own routing key
//     and retry-tier=<tier>: the Go seed's tiers dead-letter back to
//     orders.topic without a routing key, so a message must enter the tier
//     with its original key (a direct exchange keyed by tier name would
//     bring it back as "orders.wait.5s").
//   - payments: a wait queue without a queue TTL, fed by publishing with
//     mixed per-message expirations: hol-risk, and blocked messages to see.
//   - invoices: a "retry" queue without TTL fed by dead-lettering, which
//     strips expiration: stuck, and no-dlq on invoices.process.
//   - notifications: the Python seed's shape, a tier returning through the
//     default exchange to a queue "main" that does not exist:
//     unroutable-dead-letter, and no-dlq on notifications.main.
func (s *Sim) declareDemo() {
	must := func(err error) {
		if err != nil {
			panic(err) // the demo topology is fixed: a failure is a bug here
		}
	}
	s.declareExchange(OrdersExchange, topology.ExchangeTopic, nil)
	s.declareExchange(OrdersRetry, topology.ExchangeHeaders, nil)
	s.declareExchange(OrdersDLX, topology.ExchangeFanout, nil)
	must(s.declareQueue(OrdersMain, map[string]any{"x-dead-letter-exchange": OrdersDLX}))
	s.bind(OrdersExchange, OrdersMain, "orders.#", nil)
	for _, t := range []struct {
		name string
		ms   int64
	}{{OrdersWait5s, 5_000}, {OrdersWait30s, 30_000}, {OrdersWait5m, 300_000}} {
		must(s.declareQueue(t.name, map[string]any{"x-message-ttl": t.ms, "x-dead-letter-exchange": OrdersExchange}))
		s.bind(OrdersRetry, t.name, "", map[string]any{"x-match": "all", TierHeader: t.name})
	}
	must(s.declareQueue(OrdersDLQ, nil))
	s.bind(OrdersDLX, OrdersDLQ, "", nil)

	s.declareExchange(PaymentsExchange, topology.ExchangeDirect, nil)
	s.declareExchange(PaymentsDLX, topology.ExchangeFanout, nil)
	must(s.declareQueue(PaymentsMain, map[string]any{"x-dead-letter-exchange": PaymentsDLX}))
	s.bind(PaymentsExchange, PaymentsMain, "payments.authorize", nil)
	must(s.declareQueue(PaymentsWait, map[string]any{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": PaymentsMain}))
	must(s.declareQueue(PaymentsDLQ, nil))
	s.bind(PaymentsDLX, PaymentsDLQ, "", nil)

	must(s.declareQueue(InvoicesMain, map[string]any{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": InvoicesRetry}))
	must(s.declareQueue(InvoicesRetry, map[string]any{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": InvoicesMain}))

	s.declareExchange(NotifyRetryX, topology.ExchangeDirect, nil)
	must(s.declareQueue(NotifyMain, map[string]any{"x-dead-letter-exchange": NotifyRetryX, "x-dead-letter-routing-key": "retry"}))
	must(s.declareQueue(NotifyRetryQ, map[string]any{
		"x-message-ttl": int64(60_000), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": notifyReturnTo,
	}))
	s.bind(NotifyRetryX, NotifyRetryQ, "retry", nil)
}
