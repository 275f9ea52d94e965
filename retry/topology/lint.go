package topology

import (
	"fmt"
	"github.com/ladder-tui/ladder/retry/internal/amqpfield"
	"sort"
	"strconv"
	"strings"
)

// Upgrade-lint finding codes (ladder lint): what breaks or changes when the
// broker moves to a newer RabbitMQ.
const (
	CodeQueueMode       = "queue-mode"
	CodeQueueVersion1   = "queue-version-1"
	CodeDelayedPlugin   = "delayed-exchange-plugin"
	CodeQuorumNoDLX     = "quorum-no-dead-letter"
	CodeTransientQueue  = "transient-queue"
	CodeClassicMirrored = "classic-mirroring"
	CodeClientXDeath    = "client-published-x-death"
)

// LintTargets are the versions ladder lint knows.
var LintTargets = []string{"4.0", "4.3"}

// Lint lists what will break or change in v on upgrading to version target
// ("4.0" or "4.3"; later ones read as 4.3), one finding a queue or exchange.
// Sources: RabbitMQ's 4.0.1 and 4.3.0 release notes (see README).
func Lint(v *Vhost, target string) ([]Finding, error) {
	minor, err := lintMinor(target)
	if err != nil {
		return nil, err
	}
	var out []Finding
	add := func(f Finding) { out = append(out, f) }
	for i := range v.Queues {
		q := &v.Queues[i]
		if val, ok := setting(q, "x-queue-mode", "queue-mode"); ok {
			// Measured: 4.0.5 and 4.3.6 accept x-queue-mode and ignore it.
			add(Finding{Code: CodeQueueMode, Severity: SeverityWarning, Queue: q.Name,
				Message: fmt.Sprintf("queue mode %v: lazy mode has not applied since 3.12 and 4.x ignores x-queue-mode; remove the argument or policy key before a release refuses it", val)})
		}
		if val, ok := setting(q, "x-queue-version", "queue-version"); ok && minor >= 3 {
			if n, _, err := amqpfield.Int(val); err == nil && n == 1 {
				add(Finding{Code: CodeQueueVersion1, Severity: SeverityError, Queue: q.Name,
					Message: "classic queue version 1: 4.3 refuses x-queue-version 1 (version 2 is the default since 4.0)"})
			}
		}
		if _, ok := setting(q, "", "ha-mode"); ok {
			add(Finding{Code: CodeClassicMirrored, Severity: SeverityError, Queue: q.Name,
				Message: "classic queue mirroring (ha-mode policy) was removed in 4.0: the queue is no longer replicated; use a quorum queue"})
		}
		if q.Type == QueueQuorum {
			if set := EffectiveSettings(q); !set.HasDeadLetterExchange && !(set.HasDeliveryLimit && set.DeliveryLimit < 0) {
				add(Finding{Code: CodeQuorumNoDLX, Severity: SeverityWarning, Queue: q.Name,
					Message: "quorum queue without a dead-letter exchange: from 4.0 a message redelivered 20 times (the default delivery limit) is dropped silently; set a dead-letter target or x-delivery-limit"})
			}
		}
		if q.Transient {
			// Deprecated in 4.0; 4.0.5 and 4.3.6 still permit it by default
			// (GET /api/deprecated-features), an operator may deny it.
			add(Finding{Code: CodeTransientQueue, Severity: SeverityWarning, Queue: q.Name,
				Message: "transient, non-exclusive queue: deprecated since 4.0 (the transient_nonexcl_queues feature); permitted by default on 4.0 and 4.3 but refused where it is denied; declare it durable or exclusive"})
		}
	}
	for _, f := range republishedTiers(v) {
		add(f)
	}
	for _, x := range v.Exchanges {
		if x.Type != ExchangeDelayed {
			continue
		}
		f := Finding{Code: CodeDelayedPlugin, Exchange: x.Name}
		if minor >= 3 {
			f.Severity, f.Message = SeverityError, "delayed-message exchange: the plugin is gone in 4.3 (it needs Mnesia): messages it holds are lost on upgrade; use ladder's delay queues, TTL tiers or 4.3's quorum delayed retry"
		} else {
			f.Severity, f.Message = SeverityWarning, "delayed-message exchange: on 4.0–4.2 disable the plugin before enabling Khepri, or the messages it holds are lost; it is gone in 4.3"
		}
		add(f)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Severity.rank() < out[j].Severity.rank() })
	return out, nil
}

// republishedTiers finds ladders whose tiers the main queue does not
// dead-letter into: the consumer publishes a failed message into a tier
// itself, with the headers it got. Counting retries from that x-death
// works on 3.x, where the broker interprets a client-published x-death;
// from 4.0 it does not, and the count restarts at 1 on every retry.
// Topology cannot show what the consumer counts with, so this warns.
func republishedTiers(v *Vhost) []Finding {
	var out []Finding
	r := NewRouter(v)
	byName := map[string]*Queue{}
	for i := range v.Queues {
		byName[v.Queues[i].Name] = &v.Queues[i]
	}
	for _, l := range Discover(v) {
		main := byName[l.Main]
		if main == nil || len(l.Tiers) == 0 {
			continue
		}
		set := EffectiveSettings(main)
		var entered []string
		for _, t := range l.Tiers {
			if !set.HasDeadLetterExchange || !deadLettersInto(r, v, set, t.Queue) {
				entered = append(entered, t.Queue)
			}
		}
		if len(entered) == 0 {
			continue
		}
		out = append(out, Finding{Code: CodeClientXDeath, Severity: SeverityWarning, Queue: l.Main, Message: fmt.Sprintf(
			"the consumer publishes failed messages into %s itself (the main queue does not dead-letter there): if it counts retries from x-death, from 4.0 that count restarts at 1 on every retry (client-published x-death is no longer interpreted) and messages retry forever; count in a header of your own (x-retry-count)",
			strings.Join(entered, ", "))})
	}
	return out
}

// deadLettersInto reports whether the queue with settings set dead-letters
// into tier: through its dead-letter routing key, or a binding of its
// dead-letter exchange to the tier when messages keep their own keys.
func deadLettersInto(r *Router, v *Vhost, set QueueSettings, tier string) bool {
	if set.HasDeadLetterRoutingKey {
		for _, q := range r.Route(set.DeadLetterExchange, set.DeadLetterRoutingKey, nil).Queues {
			if q == tier {
				return true
			}
		}
		return false
	}
	for _, b := range v.Bindings {
		if b.Source == set.DeadLetterExchange && b.Destination == tier && b.DestinationType != "exchange" {
			return true
		}
	}
	return false
}

func lintMinor(target string) (int, error) {
	major, minor, ok := strings.Cut(target, ".")
	if !ok || major != "4" {
		return 0, fmt.Errorf("--for %q: want 4.0 or 4.3", target)
	}
	n, err := strconv.Atoi(minor)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("--for %q: want 4.0 or 4.3", target)
	}
	return n, nil
}

// setting is a queue argument, else its effective policy's key.
func setting(q *Queue, arg, policy string) (any, bool) {
	if arg != "" {
		if v, ok := q.Arguments[arg]; ok {
			return v, true
		}
	}
	v, ok := q.Policy[policy]
	return v, ok
}
