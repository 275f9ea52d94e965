package topology

import (
	"time"

	"github.com/ladder-tui/ladder/retry"
)

// Vhost is a broker-neutral description of one virtual host: what discovery
// and findings need, adapted by package broker from the management API.
type Vhost struct {
	Name      string
	Queues    []Queue
	Exchanges []Exchange
	Bindings  []Binding
	// RatesFrom says where the queues' rates came from; RatesNote why
	// there are none when RatesFrom is RatesUnavailable.
	RatesFrom string
	RatesNote string
	// FullReadAt is when queues' arguments, policies, types, head-message
	// timestamps and dead-letter counts, exchanges (messages_delayed
	// included) and bindings were last read from the management API. A
	// steady refresh between full reads takes depths, consumers and rate
	// counters from Prometheus and keeps the rest from that read, so it
	// can be older than the depths (at most the refresh's TTL, 30 s).
	FullReadAt time.Time
	// Nodes are the cluster's nodes (nil when the broker did not say);
	// ClusterName is its name.
	Nodes       []Node
	ClusterName string
	// Conventions are the retry conventions its messages are read by:
	// the user's declared ones first (the zero Table: the built-in ones).
	// The client that reads the vhost sets it; discovery, decoding and
	// the planner read through it.
	Conventions retry.Table `json:"-"`
}

// Sources of rates.
const (
	RatesFromManagement = "management"
	RatesFromPrometheus = "prometheus"
	RatesUnavailable    = "unavailable"
)

// Queue types as RabbitMQ names them.
const (
	QueueClassic = "classic"
	QueueQuorum  = "quorum"
	QueueStream  = "stream"
)

// Queue is one queue with its arguments, effective policy and counters.
type Queue struct {
	Name string
	Type string // classic | quorum | stream
	// Arguments are the queue's x-arguments (x-message-ttl, x-dead-letter-exchange…).
	Arguments map[string]any
	// Policy is the effective policy definition (message-ttl, dead-letter-exchange…).
	Policy    map[string]any
	Consumers int
	// ConsumersUnknown: the broker did not say (management stats off and
	// no Prometheus); Consumers is then 0 and means nothing.
	ConsumersUnknown bool
	Messages         int64 // ready + unacked
	Ready            int64
	Unacked          int64
	Rates            Rates
	// ReadyBytes is the body bytes of the ready messages (what
	// x-max-length-bytes limits); 0 when the broker did not say.
	ReadyBytes int64
	// HeadMessageTimestamp is the head message's timestamp when the broker
	// reports one (classic queues, publisher-set timestamp); zero otherwise.
	HeadMessageTimestamp time.Time
	// MessagesDLX counts a quorum queue's dead letters awaiting at-least-once
	// delivery to its dead-letter target.
	MessagesDLX int64
	// Transient: neither durable nor exclusive (4.3 denies such queues).
	Transient bool
	// Node is where the queue lives: a classic queue's node, a quorum
	// queue's leader ("" when the broker did not say). Members are a
	// quorum queue's members, Online those of them online.
	Node    string
	Members []string
	Online  []string
	// Seen is what messages read so far showed about this queue (see
	// Vhost.Observe); zero when nobody looked. Discovery weighs it above
	// the graph's guesses.
	Seen Seen
}

// Rates are messages per second; Known is false when neither the server nor
// client-side deltas produced a figure.
type Rates struct {
	Known     bool
	Publish   float64
	Deliver   float64
	Ack       float64
	Redeliver float64
	// Net is the change of depth per second between two polls (negative:
	// draining); NetKnown is false until there were two polls.
	Net      float64
	NetKnown bool
	// Arrived is what came in per second as the depth tells it: the
	// depth's change plus what consumers took for good (acknowledged, or
	// delivered or fetched without acknowledgement), over the last polls
	// (ten seconds or more once there were that many). It sees what the
	// broker does not count as published, dead-lettered arrivals, but not
	// what left otherwise (expired, rejected, dead-lettered onward,
	// dropped at a max length): a lower bound. ArrivedKnown from the
	// second poll on.
	Arrived      float64
	ArrivedKnown bool
	// In is the inflow ladder shows, and InSource how it was found (one
	// of InFrom*): see Inflow. InKnown is false when nothing tells.
	In       float64
	InSource string
	InKnown  bool
}

// Exchange types ladder reasons about.
const (
	ExchangeDirect  = "direct"
	ExchangeFanout  = "fanout"
	ExchangeTopic   = "topic"
	ExchangeHeaders = "headers"
	ExchangeDelayed = "x-delayed-message"
)

// Exchange is one exchange; the default exchange has Name "".
type Exchange struct {
	Name      string
	Type      string
	Arguments map[string]any
	// MessagesDelayed is the delayed-message exchange's held count (-1 unknown).
	MessagesDelayed int64
}

// Binding routes from an exchange to a queue or another exchange.
type Binding struct {
	Source          string
	Destination     string
	DestinationType string // "queue" | "exchange"
	RoutingKey      string
	Arguments       map[string]any
}

// Queue returns the named queue.
func (v *Vhost) Queue(name string) (Queue, bool) {
	for _, q := range v.Queues {
		if q.Name == name {
			return q, true
		}
	}
	return Queue{}, false
}
