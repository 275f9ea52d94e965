package sim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/retry"
)

// Workload shape. Rates are per simulated second.
const (
	ordersEvery     = 400 * time.Millisecond // 2.5 orders events/s
	ordersFailShare = 0.30                   // transient failures, retried
	ordersPoison    = 0.004                  // orders without a customer: rejected at once
	// OrdersMaxRetries is the Go seed's MaxRetries: the 4th failure parks.
	OrdersMaxRetries = 3

	paymentsEvery      = 2 * time.Second
	paymentsFailShare  = 0.50
	paymentsMaxRetries = 3

	invoicesEvery     = 5 * time.Second
	invoicesFailShare = 0.20

	notifyEvery     = 4 * time.Second
	notifyFailShare = 0.25
)

// GoSeedPolicy is the Go seed's backoff: 5^n s (5s, 25s, 125s).
var GoSeedPolicy = retry.Policy{Backoff: retry.BackoffExponential, Base: 5 * time.Second, Factor: 5}

// paymentDelays are the retry-after hints the payment provider answers
// with; mixing them in one TTL-less wait queue is what blocks.
var paymentDelays = []time.Duration{2 * time.Second, 10 * time.Second, 45 * time.Second, 2 * time.Minute}

// Every paymentsLongEvery (the first paymentsLongFirst into the simulation)
// the provider answers one failure with a long retry-after: once it reaches
// the head of payments.wait it holds back every shorter one behind it for
// most of paymentsLongDelay. The first one is timed so that `ladder demo`
// (10 minutes of warm-up) opens on a queue already blocked for two minutes
// that stays blocked for a quarter of an hour: the hol-blocked finding and
// the unblock action have something to show at once.
const (
	paymentsLongFirst = 6 * time.Minute
	paymentsLongEvery = 30 * time.Minute
	paymentsLongDelay = 20 * time.Minute
)

var orderErrors = []string{
	"external payment gateway timeout (503)",
	"inventory service unavailable",
	"database deadlock detected",
}

func (s *Sim) startWorkload() {
	add := func(every time.Duration, emit func(*Sim)) {
		s.producers = append(s.producers, &producer{every: every, next: s.now.Add(every), emit: emit})
	}
	add(ordersEvery, (*Sim).produceOrder)
	add(paymentsEvery, (*Sim).producePayment)
	add(invoicesEvery, (*Sim).produceInvoice)
	add(notifyEvery, (*Sim).produceNotification)
	work := func(queue string, prefetch int, service time.Duration, h func(*Sim, *message) outcome) {
		s.workers = append(s.workers, &worker{queue: queue, prefetch: prefetch, service: service, handle: h})
		s.byName[queue].consumers++
	}
	work(OrdersMain, 8, 250*time.Millisecond, (*Sim).handleOrder)
	work(PaymentsMain, 2, 500*time.Millisecond, (*Sim).handlePayment)
	work(InvoicesMain, 1, 300*time.Millisecond, (*Sim).handleInvoice)
	work(NotifyMain, 1, 200*time.Millisecond, (*Sim).handleNotification)
	s.topo = nil
}

// props are what the demo publishers set: a message id, a timestamp
// (seconds, as AMQP carries it), JSON, persistent.
func (s *Sim) props(id string) broker.Properties {
	ts := s.now.Truncate(time.Second)
	return broker.Properties{MessageID: id, Timestamp: &ts, ContentType: "application/json", DeliveryMode: 2, AppID: "ladder-demo"}
}

func (s *Sim) jsonBody(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // plain structs: cannot fail
	}
	return b
}

type orderEvent struct {
	OrderID    string  `json:"order_id"`
	Event      string  `json:"event"`
	CustomerID string  `json:"customer_id"`
	Amount     float64 `json:"amount"`
	At         string  `json:"at"`
}

func (s *Sim) produceOrder() {
	n := s.seq + 1
	key := "orders.created"
	if s.rng.Float64() < 0.3 {
		key = "orders.paid"
	}
	ev := orderEvent{
		OrderID: fmt.Sprintf("ord-%06d", n), Event: key, CustomerID: fmt.Sprintf("cus-%04d", s.rng.IntN(5000)),
		Amount: float64(500+s.rng.IntN(50_000)) / 100, At: s.now.UTC().Format(time.RFC3339),
	}
	if s.rng.Float64() < ordersPoison {
		ev.CustomerID = ""
	}
	s.mustPublish(OrdersExchange, key, s.props(fmt.Sprintf("msg-%08d", n)), nil, s.jsonBody(ev))
}

// handleOrder is the Go seed's worker, planned by the retry engine: on a
// transient failure read the state, Plan with the seed's policy on the
// discovered ladder, publish to the tier it names, then ack; once retries
// are exhausted Plan says park, and the nack sends it to orders.dlq.
func (s *Sim) handleOrder(m *message) outcome {
	if bytes.Contains(m.body, []byte(`"customer_id":""`)) {
		return reject // permanent: retrying cannot help
	}
	if s.rng.Float64() >= ordersFailShare {
		return ack
	}
	l := s.ladderOf(OrdersMain)
	if l == nil {
		return reject
	}
	st := retry.ReadState(m.headers, retry.DeathQueues(l))
	a, err := retry.Plan(m.headers, st, retry.PlanOptions{Policy: GoSeedPolicy, MaxAttempts: OrdersMaxRetries, Ladder: l})
	if err != nil {
		return reject
	}
	switch a.Kind {
	case retry.ActionPark:
		return reject
	case retry.ActionDrop:
		return ack
	}
	a.Headers["x-last-error"] = orderErrors[s.rng.IntN(len(orderErrors))]
	if err := s.applyAction(a, m.routingKey, s.republishProps(m), m.body); err != nil {
		return reject // the seed nacks to the DLQ when the retry publish fails
	}
	return ack
}

// republishProps keeps the message id and content type and stamps the
// republish time, as the Go seed's worker does.
func (s *Sim) republishProps(m *message) broker.Properties {
	p := s.props(m.props.MessageID)
	p.ContentType, p.AppID = m.props.ContentType, m.props.AppID
	return p
}

// applyAction publishes a planned retry or delay (tier, delayed exchange or
// per-delay queue) with routing key key.
func (s *Sim) applyAction(a retry.Action, key string, p broker.Properties, body []byte) error {
	switch a.Kind {
	case retry.ActionTier:
		x, h, ok := s.intoQueue(a.Queue, key, a.Headers)
		if !ok {
			x, key = "", a.Queue
		}
		_, err := s.publish(x, key, p, h, body)
		return err
	case retry.ActionDelayedExchange:
		_, err := s.publish(a.Exchange, key, p, a.Headers, body)
		return err
	case retry.ActionDelayQueue:
		if err := s.declareQueue(a.Queue, a.QueueArgs); err != nil {
			return err
		}
		_, err := s.publish("", a.Queue, p, a.Headers, body)
		return err
	}
	return s.errorf("cannot apply a %s action", a.Kind)
}

func (s *Sim) mustPublish(exchange, key string, p broker.Properties, h retry.Headers, body []byte) {
	if _, err := s.publish(exchange, key, p, h, body); err != nil {
		panic(err) // the demo's own publishes go to its own topology
	}
}

type paymentEvent struct {
	PaymentID string  `json:"payment_id"`
	OrderID   string  `json:"order_id"`
	Amount    float64 `json:"amount"`
}

func (s *Sim) producePayment() {
	n := s.seq + 1
	ev := paymentEvent{PaymentID: fmt.Sprintf("pay-%06d", n), OrderID: fmt.Sprintf("ord-%06d", s.rng.IntN(int(n)+1)), Amount: float64(500+s.rng.IntN(50_000)) / 100}
	s.mustPublish(PaymentsExchange, "payments.authorize", s.props(fmt.Sprintf("msg-%08d", n)), nil, s.jsonBody(ev))
}

// handlePayment is a hand-written worker that waits out the provider's
// retry-after by publishing to payments.wait with a per-message expiration:
// a long one at the head holds back the short ones behind it.
func (s *Sim) handlePayment(m *message) outcome {
	if s.rng.Float64() >= paymentsFailShare {
		return ack
	}
	st := retry.ReadState(m.headers, retry.DeathQueues(s.ladderOf(PaymentsMain)))
	if st.Count >= paymentsMaxRetries {
		return reject
	}
	d := paymentDelays[s.rng.IntN(len(paymentDelays))]
	if !s.now.Before(s.nextLongRetry) {
		d = paymentsLongDelay
		s.nextLongRetry = s.nextLongRetry.Add(paymentsLongEvery)
	}
	h := retry.SetCount(m.headers, st, st.Count+1)
	h["x-last-error"] = fmt.Sprintf("card issuer busy: retry after %s", retry.FormatDelay(d))
	p := s.republishProps(m)
	p.Expiration = strconv.FormatInt(d.Milliseconds(), 10)
	if _, err := s.publish("", PaymentsWait, p, h, m.body); err != nil {
		return reject
	}
	return ack
}

type invoiceEvent struct {
	InvoiceID string `json:"invoice_id"`
	OrderID   string `json:"order_id"`
}

// produceInvoice publishes with a one-minute expiration, which the invoices
// team took to be the retry delay after a rejection: dead-lettering removes
// it, so rejected invoices wait in invoices.retry forever.
func (s *Sim) produceInvoice() {
	n := s.seq + 1
	p := s.props(fmt.Sprintf("msg-%08d", n))
	p.Expiration = "60000"
	s.mustPublish("", InvoicesMain, p, nil, s.jsonBody(invoiceEvent{InvoiceID: fmt.Sprintf("inv-%06d", n), OrderID: fmt.Sprintf("ord-%06d", s.rng.IntN(int(n)+1))}))
}

func (s *Sim) handleInvoice(*message) outcome {
	if s.rng.Float64() < invoicesFailShare {
		return reject
	}
	return ack
}

type notification struct {
	To       string `json:"to"`
	Template string `json:"template"`
}

func (s *Sim) produceNotification() {
	n := s.seq + 1
	s.mustPublish("", NotifyMain, s.props(fmt.Sprintf("msg-%08d", n)), nil, s.jsonBody(notification{To: fmt.Sprintf("customer-%d@example.com", s.rng.IntN(5000)), Template: "order-confirmation"}))
}

func (s *Sim) handleNotification(*message) outcome {
	if s.rng.Float64() < notifyFailShare {
		return reject
	}
	return ack
}
