package topology

import (
	"fmt"
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/internal/amqpfield"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
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
// Sources: RabbitMQ's 4.0.1 and 4.3.0 release notes (see docs/versions.md).
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
	for _, f := range xDeathLoops(v, target) {
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

// xDeathLoops finds retry loops whose limit, by the evidence, is read from
// an x-death the application republishes: on a target of 4.0 or later
// (CarriesDeaths) such a limit never trips. RabbitMQ 4.0.1's release notes:
// 4.x no longer interprets an x-death header a client (re-)publishes; seen
// here on 4.0.5 and 4.3.6, the count restarts at 1 after every republish
// (shared/reference/rabbitmq-retry-facts.md, "x-death").
//
// A loop is a queue something consumes (or may: consumers unknown) whose
// dead-letter route reaches a queue with a TTL that dead-letters back to it.
// What says the application republishes into it and counts from x-death is
// Spring Cloud Stream's RabbitMQ binder shape, which only that binder
// declares (spring-cloud/spring-cloud-stream:
// binders/rabbit-binder/spring-cloud-stream-binder-rabbit-core/src/main/java/org/springframework/cloud/stream/binder/rabbit/provisioning/RabbitExchangeQueueProvisioner.java,
// autoBindDLQ and queueArgs): queue Q with x-dead-letter-exchange
// <prefix>DLX and x-dead-letter-routing-key Q, its DLQ Q.dlq bound to that
// exchange, and with dlqTtl and dlqDeadLetterExchange a queue TTL and a
// dead-letter route back to Q. republishToDlq defaults to true: the binder
// then publishes a failed message to the DLX itself, headers and all
// (RabbitMessageChannelBinder.getErrorMessageHandler, even for
// AmqpRejectAndDontRequeueException), and the binder's documentation
// limits the loop by x-death's count (docs/modules/ROOT/pages/rabbit/
// rabbit_overview/rabbitmq-retry.adoc and putting-it-all-together.adoc).
//
// Not loops: queues nothing consumes (a delay level, a parking queue), a
// chain of TTL queues dead-lettering into each other (NServiceBus's delay
// levels: their endpoint queues have no dead-letter route at all), and a
// DLQ without a TTL. Lint reads no messages, so what the application
// really counts with is not known; a newer binder also writes Spring
// AMQP 3.2's retry-count header, but the documented listener reads x-death.
func xDeathLoops(v *Vhost, target string) []Finding {
	if !CarriesDeaths(target) {
		return nil
	}
	r := NewRouter(v)
	var out []Finding
	for i := range v.Queues {
		q := &v.Queues[i]
		if !q.ConsumersUnknown && q.Consumers == 0 {
			continue
		}
		dlq, ttl, ok := springRetryLoop(r, q)
		if !ok {
			continue
		}
		out = append(out, Finding{Code: CodeClientXDeath, Severity: SeverityError, Queue: q.Name, Message: fmt.Sprintf(
			"Spring Cloud Stream retry loop %q → %q (TTL %s) → back: the binder republishes failures (republishToDlq, default true) with their x-death, which 4.x no longer counts (it restarts at 1), so a limit read from x-death never trips and messages loop forever; set republishToDlq=false, count in a header the app owns (x-retry-count, Spring AMQP 3.2's retry-count), or use a quorum delivery-limit or 4.3's delayed retry",
			q.Name, dlq, retry.FormatDelay(ttl))})
	}
	return out
}

// springRetryLoop reports whether q is the work queue of the Spring binder's
// retry loop (see xDeathLoops), and its DLQ and the DLQ's TTL. The route is
// read, not the arguments alone: a DLQ the dead letters do not reach, or
// whose own dead letters go elsewhere (a parking lot), makes no loop.
func springRetryLoop(r *Router, q *Queue) (dlq string, ttl time.Duration, ok bool) {
	set := EffectiveSettings(q)
	if !set.HasDeadLetterExchange || !strings.HasSuffix(set.DeadLetterExchange, springDLX) ||
		!set.HasDeadLetterRoutingKey || set.DeadLetterRoutingKey != q.Name {
		return "", 0, false
	}
	dlq = q.Name + springDLQSuffix
	d := r.QueueIndex(dlq)
	if d < 0 || !slices.Contains(r.DeadLetters(q.Name).Queues, dlq) {
		return "", 0, false
	}
	dset := EffectiveSettings(&r.Vhost().Queues[d])
	if !dset.HasMessageTTL || !slices.Contains(r.DeadLetters(dlq).Queues, q.Name) {
		return "", 0, false
	}
	return dlq, dset.MessageTTL, true
}

// The Spring binder's names (RabbitExchangeQueueProvisioner): its
// dead-letter exchange is <prefix>DLX, a queue's DLQ the queue's name and
// ".dlq".
const (
	springDLX       = "DLX"
	springDLQSuffix = ".dlq"
)

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
