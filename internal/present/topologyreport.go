package present

import (
	"slices"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/usecase"
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/topology"
)

// TopologyReport is `ladder topology -o json`; its field names are a contract.
type TopologyReport struct {
	Vhost         string `json:"vhost"`
	BrokerVersion string `json:"broker_version"`
	// RatesFrom: management, prometheus (stats off on the broker) or
	// unavailable, with RatesNote saying why.
	RatesFrom string             `json:"rates_from"`
	RatesNote string             `json:"rates_note,omitempty"`
	Ladders   []LadderReport     `json:"ladders"`
	Findings  []topology.Finding `json:"findings"`
	Other     []QueueReport      `json:"other_queues"`

	// OverMS, with topology --over, is how far apart the two reads were
	// whose changes the inflows and dlq-growing findings come from.
	OverMS int64 `json:"over_ms,omitempty"`
	// ClusterName and Nodes are the cluster and its nodes (absent when
	// the broker did not say: a user without the monitoring tag).
	ClusterName string          `json:"cluster_name,omitempty"`
	Nodes       []topology.Node `json:"nodes,omitempty"`
	// Sampled, with topology --sample, is what was read of the queues no
	// ladder explained, before the read reported here.
	Sampled *usecase.SampleReport `json:"sampled,omitempty"`
}

// LadderReport is one ladder with its queues' figures.
type LadderReport struct {
	Main             QueueReport             `json:"main"`
	Tiers            []TierReport            `json:"tiers"`
	WaitQueues       []QueueReport           `json:"wait_queues"`
	DelayedExchanges []DelayedExchangeReport `json:"delayed_exchanges"`
	DLQ              *QueueReport            `json:"dlq"`
	// DelayQueues are ladder's own per-delay wait queues returning to the
	// main queue (owned_by_ladder): not tiers of the ladder's design.
	DelayQueues []QueueReport `json:"delay_queues"`
	// InferredFrom says what discovery rested on where it had to guess
	// which queue waits (wait_queues); empty when the topology was plain.
	InferredFrom []string `json:"inferred_from"`
	// DLQFrom is "" when the DLQ is on the main queue's dead-letter route,
	// else the framework naming that linked it ("MassTransit:
	// {queue}_error"): failures are published there.
	DLQFrom string `json:"dlq_from"`
	// ErrorQueues are further error queues by a framework's naming.
	ErrorQueues []QueueReport `json:"error_queues"`
	// Delays are shared delay infrastructures delivering into the main
	// queue (NServiceBus's delay levels).
	Delays []DelayReport `json:"delays"`
	// RetriesInConsumer: nothing makes messages wait; failures go straight
	// to the DLQ, so any retrying happens in the consumer.
	RetriesInConsumer bool `json:"retries_in_consumer"`
}

// DelayReport is one shared delay infrastructure: its queues, their TTLs
// and how many messages wait in them in all.
type DelayReport struct {
	Name     string   `json:"name"`
	Queues   []string `json:"queues"`
	MinTTLMS int64    `json:"min_ttl_ms"`
	MaxTTLMS int64    `json:"max_ttl_ms"`
	Messages int64    `json:"messages"`
	// HeldByConsumers: the framework's workers hold each message until it
	// is due (Dramatiq's {queue}.DQ); no TTL.
	HeldByConsumers bool `json:"held_by_consumers"`
	// Levels are the chain's queues whose dead letters reach the main
	// queue, with their TTLs, shortest first.
	Levels []DelayLevelReport `json:"levels"`
	// PerMessageTTL: a shared wait queue (no TTL: messages wait for their
	// own expiration) and its ready queue, whose router sends messages
	// back by header (amqplib-retry); From says which messages tied it.
	PerMessageTTL bool   `json:"per_message_ttl"`
	From          string `json:"from"`
}

// DelayLevelReport is one level of a delay chain.
type DelayLevelReport struct {
	Queue string `json:"queue"`
	TTLMS int64  `json:"ttl_ms"`
}

// QueueReport is a queue's depth and rates; a rate is null when unknown.
type QueueReport struct {
	Name          string `json:"name"`
	Type          string `json:"type"`
	Messages      int64  `json:"messages"`
	Ready         int64  `json:"ready"`
	Unacked       int64  `json:"unacked"`
	Consumers     *int   `json:"consumers"` // null when the broker does not say
	OwnedByLadder bool   `json:"owned_by_ladder"`
	// DelayedRetry is the queue's built-in delayed retry (4.3), or null.
	DelayedRetry  *DelayedRetryReport `json:"delayed_retry"`
	PublishRate   *float64            `json:"publish_rate"`
	DeliverRate   *float64            `json:"deliver_rate"`
	AckRate       *float64            `json:"ack_rate"`
	RedeliverRate *float64            `json:"redeliver_rate"`
	// InRate is the queue's inflow, dead-lettered arrivals included where
	// they can be seen; InRateSource says how it was found (retry.InFrom*:
	// publish, depth or ttl). Both null when nothing tells.
	InRate       *float64 `json:"in_rate"`
	InRateSource *string  `json:"in_rate_source"`
	// Node is where it lives (a classic queue's node, a quorum queue's
	// leader); Members and Online a quorum queue's members and those
	// online. Absent when the broker did not say.
	Node    string   `json:"node,omitempty"`
	Members []string `json:"members,omitempty"`
	Online  []string `json:"online,omitempty"`
	// Unconfirmed: a DLQ or error queue tied to its main queue by a
	// framework's naming only, where no message read yet said it failed
	// in that queue (a peek or a sample of it confirms the link).
	Unconfirmed bool `json:"unconfirmed,omitempty"`
}

// DelayedRetryReport is a quorum queue's built-in delayed retry.
type DelayedRetryReport struct {
	Type  string `json:"type"`
	MinMS int64  `json:"min_ms"`
	MaxMS int64  `json:"max_ms"`
}

// TierReport is a tier queue with its TTL.
type TierReport struct {
	QueueReport
	TTLMS int64 `json:"ttl_ms"`
}

// DelayedExchangeReport is a delayed-message exchange; messages_delayed is
// null when the broker does not say.
type DelayedExchangeReport struct {
	Name            string `json:"name"`
	MessagesDelayed *int64 `json:"messages_delayed"`
}

// Topology adapts a snapshot for JSON: the same values the UI draws.
func Topology(s *broker.Snapshot) TopologyReport {
	byName := make(map[string]topology.Queue, len(s.Topology.Queues))
	for _, q := range s.Topology.Queues {
		byName[q.Name] = q
	}
	in := map[string]bool{}
	rep := TopologyReport{Vhost: s.Vhost, BrokerVersion: s.BrokerVersion, RatesFrom: s.Topology.RatesFrom, RatesNote: s.Topology.RatesNote,
		ClusterName: s.Topology.ClusterName, Nodes: s.Topology.Nodes,
		Ladders: []LadderReport{}, Findings: s.Findings, Other: []QueueReport{}}
	if rep.Findings == nil {
		rep.Findings = []topology.Finding{}
	}
	for _, l := range s.Ladders {
		lr := LadderReport{Main: queueReport(l.Main, byName), Tiers: []TierReport{}, WaitQueues: []QueueReport{}, DelayedExchanges: []DelayedExchangeReport{}, DelayQueues: []QueueReport{},
			InferredFrom: append([]string{}, l.InferredFrom...), DLQFrom: l.DLQFrom, ErrorQueues: []QueueReport{}, Delays: []DelayReport{},
			RetriesInConsumer: l.RetriesInConsumer}
		for _, e := range l.ErrorQueues {
			q := queueReport(e, byName)
			q.Unconfirmed = unconfirmed(e, l.Main, byName)
			lr.ErrorQueues = append(lr.ErrorQueues, q)
			in[e] = true
		}
		for _, d := range l.Delays {
			dr := DelayReport{Name: d.Name, Queues: append([]string{}, d.Queues...), MinTTLMS: d.MinTTL.Milliseconds(), MaxTTLMS: d.MaxTTL.Milliseconds(), HeldByConsumers: d.HeldByConsumers,
				Levels: []DelayLevelReport{}, PerMessageTTL: d.PerMessageTTL, From: d.From}
			for _, lv := range d.Levels {
				dr.Levels = append(dr.Levels, DelayLevelReport{Queue: lv.Queue, TTLMS: lv.TTL.Milliseconds()})
			}
			for _, q := range d.Queues {
				dr.Messages += byName[q].Messages
				in[q] = true
			}
			lr.Delays = append(lr.Delays, dr)
		}
		for _, w := range l.DelayQueues {
			lr.DelayQueues = append(lr.DelayQueues, queueReport(w, byName))
			in[w] = true
		}
		in[l.Main] = true
		for _, t := range l.Tiers {
			lr.Tiers = append(lr.Tiers, TierReport{QueueReport: queueReport(t.Queue, byName), TTLMS: t.TTL.Milliseconds()})
			in[t.Queue] = true
		}
		for _, w := range l.WaitQueues {
			lr.WaitQueues = append(lr.WaitQueues, queueReport(w, byName))
			in[w] = true
		}
		for _, d := range l.DelayedExchanges {
			dr := DelayedExchangeReport{Name: d.Name}
			if d.MessagesDelayed >= 0 {
				n := d.MessagesDelayed
				dr.MessagesDelayed = &n
			}
			lr.DelayedExchanges = append(lr.DelayedExchanges, dr)
		}
		if l.DLQ != "" {
			q := queueReport(l.DLQ, byName)
			// On the dead-letter route, the broker's settings link it.
			q.Unconfirmed = l.DLQFrom != "" && unconfirmed(l.DLQ, l.Main, byName)
			lr.DLQ = &q
			in[l.DLQ] = true
		}
		rep.Ladders = append(rep.Ladders, lr)
	}
	for _, q := range s.Topology.Queues {
		if !in[q.Name] {
			rep.Other = append(rep.Other, queueReport(q.Name, byName))
		}
	}
	return rep
}

// unconfirmed: error queue e, fed by publishing (no dead-letter route
// ties it to main), holds no message read so far that failed in main:
// only a framework's naming links them.
func unconfirmed(e, main string, byName map[string]topology.Queue) bool {
	return !slices.Contains(byName[e].Seen.FailedIn, main)
}

func queueReport(name string, byName map[string]topology.Queue) QueueReport {
	q, ok := byName[name]
	if !ok {
		return QueueReport{Name: name, OwnedByLadder: retry.OwnedByLadder(name)}
	}
	r := QueueReport{Name: q.Name, Type: q.Type, Messages: q.Messages, Ready: q.Ready, Unacked: q.Unacked, OwnedByLadder: retry.OwnedByLadder(q.Name),
		Node: q.Node, Members: q.Members, Online: q.Online}
	if !q.ConsumersUnknown {
		n := q.Consumers
		r.Consumers = &n
	}
	if d := topology.EffectiveSettings(&q).DelayedRetry; d != nil {
		r.DelayedRetry = &DelayedRetryReport{Type: d.Type, MinMS: d.Min.Milliseconds(), MaxMS: d.Max.Milliseconds()}
	}
	if q.Rates.Known {
		r.PublishRate, r.DeliverRate, r.AckRate, r.RedeliverRate = ptr(q.Rates.Publish), ptr(q.Rates.Deliver), ptr(q.Rates.Ack), ptr(q.Rates.Redeliver)
	}
	if q.Rates.InKnown {
		src := q.Rates.InSource
		r.InRate, r.InRateSource = ptr(q.Rates.In), &src
	}
	return r
}

func ptr(f float64) *float64 { return &f }
