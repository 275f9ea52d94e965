package topology

import (
	"cmp"
	"fmt"
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/internal/words"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Severity of a Finding.
type Severity string

const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
	SeverityInfo    Severity = "info"
)

// Rank orders severities: 0 for an error, 1 a warning, 2 the rest.
func (s Severity) Rank() int { return s.rank() }

func (s Severity) rank() int {
	switch s {
	case SeverityError:
		return 0
	case SeverityWarning:
		return 1
	}
	return 2
}

// Finding codes.
const (
	CodeUnroutableDeadLetter = "unroutable-dead-letter"
	CodeStuck                = "stuck"
	CodeHoLRisk              = "hol-risk"
	CodeNoDLQ                = "no-dlq"
	CodeDelayQueueSprawl     = "delay-queue-sprawl"
	CodeWaitQueueConsumers   = "wait-queue-consumers"
	CodeDeliveryLimit        = "delivery-limit"
	CodeRequeueStorm         = "requeue-storm"
	CodeNoConsumers          = "no-consumers"
	CodeHoLBlocked           = "hol-blocked"
	CodeDLQGrowing           = "dlq-growing"
)

// Finding is one topology or runtime problem, told in one line.
type Finding struct {
	Code     string   `json:"code"`
	Severity Severity `json:"severity"`
	// Queue and/or Exchange the finding is about ("" exchange is the
	// default exchange when the code concerns a route).
	Queue    string `json:"queue"`
	Exchange string `json:"exchange"`
	// Node is the cluster node a finding about a node concerns.
	Node    string `json:"node,omitempty"`
	Message string `json:"message"`
}

// Thresholds, chosen so that a designed ladder (a handful of tiers, a
// worker that nacks now and then) stays quiet.
const (
	// sprawlPerDelayMin per-delay queues (a tier whose name carries its own
	// TTL in ms, like enqueue's "enqueue.<queue>.<ms>.delayed") make sprawl.
	sprawlPerDelayMin = 5
	// sprawlTiersMin tiers of any names make sprawl: far beyond a designed ladder.
	sprawlTiersMin = 10
	// requeue storm: redeliveries above this rate and this multiple of acks.
	stormRedeliverMin = 10.0
	stormAckFactor    = 5.0
)

// Findings checks v and the ladders discovered in it (Discover(v)). Dead-letter
// routes are checked for every queue; the rest concern the ladders' queues.
// The result is sorted by severity (errors first), queue, exchange, code.
// What peeks saw (Queue.Seen.Look) is weighed without a clock: see
// FindingsAt.
func Findings(v *Vhost, ladders []retry.Ladder) []Finding {
	return FindingsAt(v, ladders, time.Time{})
}

// FindingsAt is Findings at now: a look's blocked messages count only
// until the message holding them is due (a zero now: as long as the queue
// holds them).
func FindingsAt(v *Vhost, ladders []retry.Ladder, now time.Time) []Finding {
	t := discBuild(v)
	f := &fndSet{seen: map[[4]string]bool{}}

	// Ladder membership by queue index.
	mainOf := make([]bool, len(v.Queues))
	tierOf := make([]bool, len(v.Queues)) // tiers and wait queues: both should only wait
	inLadder := make([]bool, len(v.Queues))
	for _, l := range ladders {
		if m := t.r.QueueIndex(l.Main); m >= 0 {
			mainOf[m], inLadder[m] = true, true
		}
		for _, tr := range l.Tiers {
			if w := t.r.QueueIndex(tr.Queue); w >= 0 {
				tierOf[w], inLadder[w] = true, true
			}
		}
		for _, wq := range l.WaitQueues {
			if w := t.r.QueueIndex(wq); w >= 0 {
				tierOf[w], inLadder[w] = true, true
			}
		}
		for _, q := range append([]string{l.DLQ}, l.ErrorQueues...) {
			if d := t.r.QueueIndex(q); d >= 0 && q != "" {
				inLadder[d] = true
			}
		}
	}

	for qi := range v.Queues {
		if !t.canon[qi] {
			continue
		}
		q := &v.Queues[qi]
		set := &t.set[qi]
		if set.HasDeadLetterExchange && len(t.dl[qi]) == 0 {
			f.add(Finding{Code: CodeUnroutableDeadLetter, Severity: SeverityError,
				Queue: q.Name, Exchange: set.DeadLetterExchange, Message: t.unroutableMessage(qi)})
		}
		backTo := ""
		for _, to := range t.dl[qi] {
			if mainOf[to] {
				backTo = v.Queues[to].Name
				break
			}
		}
		shared := t.sharedOf[qi] >= 0 && t.shared[t.sharedOf[qi]].queues[0] == qi
		if shared {
			// A shared wait's messages wait for their own expirations
			// too, before its ready queue sends them back.
			backTo = v.Queues[t.shared[t.sharedOf[qi]].queues[1]].Name
		}
		if backTo != "" && !mainOf[qi] && (shared || t.waitLike(qi)) {
			for _, lf := range t.waitFindings(qi, backTo, now) {
				f.add(lf)
			}
		}
		if inLadder[qi] && q.Type == QueueQuorum && set.HasDeliveryLimit && set.DeliveryLimit >= 0 {
			// A return beyond the limit dead-letters (seen here on 3.10.8 and
			// 4.3.6: limit 2, the third reject with requeue dead-letters).
			then := "dead-letters"
			if !set.HasDeadLetterExchange {
				then = "drops"
			}
			f.add(Finding{Code: CodeDeliveryLimit, Severity: SeverityInfo, Queue: q.Name, Message: fmt.Sprintf(
				"quorum queue with delivery-limit %d: a message's %s return to it %s the message; every requeue counts (from RabbitMQ 4.3 a nack with requeue does not), and before 4.3 a peek's too",
				set.DeliveryLimit, fndOrdinal(set.DeliveryLimit+1), then)})
		}
		if tierOf[qi] && q.Consumers > 0 {
			f.add(Finding{Code: CodeWaitQueueConsumers, Severity: SeverityWarning, Queue: q.Name, Message: fmt.Sprintf(
				"%d %s read this wait queue: messages are taken before their delay ends instead of waiting",
				q.Consumers, words.Plural(int64(q.Consumers), "consumer", "consumers"))})
		}
	}

	for _, l := range ladders {
		m := t.r.QueueIndex(l.Main)
		if m < 0 {
			continue
		}
		q := &v.Queues[m]
		if l.DLQ == "" {
			f.add(Finding{Code: CodeNoDLQ, Severity: SeverityWarning, Queue: l.Main, Message: t.noDLQMessage(m)})
		}
		if msg := fndSprawl(t, l); msg != "" {
			f.add(Finding{Code: CodeDelayQueueSprawl, Severity: SeverityWarning, Queue: l.Main, Message: msg})
		}
		if q.Consumers == 0 && !q.ConsumersUnknown && q.Ready > 0 {
			// Runtime, not topology: info, so a sound ladder stays clean.
			f.add(Finding{Code: CodeNoConsumers, Severity: SeverityInfo, Queue: l.Main, Message: fmt.Sprintf(
				"%d %s ready and no consumer: nothing is processing this ladder's main queue", q.Ready, words.Plural(q.Ready, "message", "messages"))})
		}
		if r := q.Rates; r.Known && r.Redeliver > stormRedeliverMin && r.Redeliver > stormAckFactor*r.Ack {
			f.add(Finding{Code: CodeRequeueStorm, Severity: SeverityWarning, Queue: l.Main, Message: fmt.Sprintf(
				"redelivering %.1f/s while acking %.1f/s: failed messages are requeued straight back (nack with requeue) instead of waiting in a tier",
				r.Redeliver, r.Ack)})
		}
	}
	for _, c := range ClusterFindings(v) {
		f.add(c)
	}
	SortFindings(f.list)
	return f.list
}

// waitFindings are what a wait queue relying on per-message expiration
// (no queue TTL; its dead letters go back to main queue backTo) risks or
// suffers. A peek's look, while the queue holds what it saw, tells what
// is there: messages blocked behind a longer expiration, messages that
// never expire. Without one only the settings speak, and they say what
// may happen, not what did: a dead-letter route into the queue means
// dead-lettered messages would lose their expiration and stay, but
// publishers may feed it too, with expirations of their own (and a peek
// that saw one says so: Seen.Expiration).
func (t *discTopo) waitFindings(qi int, backTo string, now time.Time) []Finding {
	q := &t.v.Queues[qi]
	fed := len(t.dlFrom[qi]) > 0
	look := q.Seen.Look
	if !look.Holds(q) {
		look = nil
	}
	var out []Finding
	if look != nil {
		out = lookFindings(q, look, backTo, fed, false, now)
	}
	told := func(code string) bool {
		return slices.ContainsFunc(out, func(f Finding) bool { return f.Code == code })
	}
	switch {
	case told(CodeStuck) || told(CodeHoLBlocked):
	case fed && !q.Seen.Expiration && look == nil:
		// A consumer here takes the messages (wait-queue-consumers says
		// so); they still never expire.
		none := " and no consumers"
		if q.Consumers > 0 {
			none = ""
		}
		msg := fmt.Sprintf("messages dead-lettered into this queue never return to %q: dead-lettering strips per-message expiration, and it has no TTL%s",
			backTo, none)
		if q.Messages > 0 {
			msg += fmt.Sprintf("; whether its %s came so or carry an expiration of their own, a peek tells",
				fndCount(q.Messages)+" "+words.Plural(q.Messages, "message", "messages"))
		}
		out = append(out, Finding{Code: CodeStuck, Severity: SeverityWarning, Queue: q.Name, Message: msg})
	default:
		out = append(out, Finding{Code: CodeHoLRisk, Severity: SeverityWarning, Queue: q.Name, Message: fmt.Sprintf(
			"wait queue for %q has no queue TTL, so it relies on per-message expiration: a long delay at the head holds back every shorter one behind it",
			backTo)})
	}
	return out
}

// SortFindings orders findings by severity (errors first), then queue,
// exchange, code and message, so output is stable.
func SortFindings(fs []Finding) {
	slices.SortStableFunc(fs, func(a, b Finding) int {
		return cmp.Or(
			cmp.Compare(a.Severity.rank(), b.Severity.rank()),
			cmp.Compare(a.Queue, b.Queue),
			cmp.Compare(a.Exchange, b.Exchange),
			cmp.Compare(a.Node, b.Node),
			cmp.Compare(a.Code, b.Code),
			cmp.Compare(a.Message, b.Message),
		)
	})
}

// fndSet keeps one finding per code and subject: a queue can be a tier of
// several ladders.
type fndSet struct {
	seen map[[4]string]bool
	list []Finding
}

func (s *fndSet) add(f Finding) {
	k := [4]string{f.Code, f.Queue, f.Exchange, f.Node}
	if !s.seen[k] {
		s.seen[k] = true
		s.list = append(s.list, f)
	}
}

// unroutableMessage says why queue qi's dead letters reach no queue.
func (t *discTopo) unroutableMessage(qi int) string {
	set := &t.set[qi]
	x, key := set.DeadLetterExchange, set.DeadLetterRoutingKey
	switch {
	case t.dlSelf[qi]:
		return "dead letters only come back into this same queue, and the broker drops such a dead-letter cycle"
	case !t.dlRes[qi].ExchangeExists:
		return fmt.Sprintf("dead letters go to exchange %q, which does not exist: they are dropped", x)
	case x == "" && set.HasDeadLetterRoutingKey:
		return fmt.Sprintf("dead letters go to the default exchange with routing key %q, but no queue is named %q: they are dropped", key, key)
	case x == "":
		return "dead letters keep their routing keys on the default exchange, and none of those keys names another queue: they are dropped"
	case set.HasDeadLetterRoutingKey:
		return fmt.Sprintf("no binding of exchange %q matches dead-letter routing key %q: dead letters are dropped", x, key)
	}
	return fmt.Sprintf("exchange %q has no binding to a queue: dead letters are dropped", x)
}

func (t *discTopo) noDLQMessage(m int) string {
	set := &t.set[m]
	switch {
	case !set.HasDeadLetterExchange:
		return "no dead-letter queue: this queue has no dead-letter exchange, so a message rejected for good (retries exhausted) is dropped"
	case len(t.dl[m]) == 0:
		return "no dead-letter queue: this queue's dead-letter route reaches no queue, so a message rejected for good is dropped"
	}
	return "no dead-letter queue: this queue's dead letters only go back into its retry tiers, so a message rejected for good loops or is dropped"
}

// fndSprawl reports per-delay wait queues piling up for one main queue.
func fndSprawl(t *discTopo, l retry.Ladder) string {
	var perDelay []string
	noExpires := true
	for _, tr := range l.Tiers {
		if tr.TTL >= 0 && strings.Contains(tr.Queue, strconv.FormatInt(tr.TTL.Milliseconds(), 10)) {
			perDelay = append(perDelay, tr.Queue)
		}
		if w := t.r.QueueIndex(tr.Queue); w >= 0 && t.set[w].HasExpires {
			noExpires = false
		}
	}
	fix := "round delays to a few fixed tiers"
	if noExpires {
		fix += ", or let unused ones expire (x-expires)"
	}
	switch {
	case len(perDelay) >= sprawlPerDelayMin:
		return fmt.Sprintf("%d per-delay wait queues (%s …): jittered delays create a queue for every distinct delay; %s",
			len(perDelay), perDelay[0], fix)
	case len(l.Tiers) >= sprawlTiersMin:
		return fmt.Sprintf("%d wait tiers (%s to %s) for one queue; %s",
			len(l.Tiers), fndDuration(l.Tiers[0].TTL), fndDuration(l.Tiers[len(l.Tiers)-1].TTL), fix)
	}
	return ""
}

// fndOrdinal is 1st, 2nd, 3rd, 4th … 11th, 21st.
func fndOrdinal(n int64) string {
	suffix := "th"
	if n%100 < 11 || n%100 > 13 {
		switch n % 10 {
		case 1:
			suffix = "st"
		case 2:
			suffix = "nd"
		case 3:
			suffix = "rd"
		}
	}
	return strconv.FormatInt(n, 10) + suffix
}

// fndDuration prints a duration the way an operator reads it: 1s, 1m30s, 250ms.
func fndDuration(d time.Duration) string {
	switch {
	case d <= 0:
		return "0s"
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	}
	s := d.Round(time.Second).String()
	// "5m0s" → "5m", "1h0m0s" → "1h"; "1h30m0s" keeps "1h30m".
	if t, ok := strings.CutSuffix(s, "m0s"); ok {
		s = t + "m"
	}
	if t, ok := strings.CutSuffix(s, "h0m"); ok {
		s = t + "h"
	}
	return s
}

// Plural is "1 message", "3 messages": counts in every text ladder writes.
func Plural(n int, one, many string) string {
	return strconv.Itoa(n) + " " + words.Plural(int64(n), one, many)
}

// DLQGrowth is what two looks at a dead-letter queue, Over apart, saw.
type DLQGrowth struct {
	Grew    int64 // its depth at the second look less at the first
	Over    time.Duration
	Waiting int64 // its depth at the second look
}

// DLQGrowingWindow is the longest span the UI measures a DLQ's growth
// over: what it grew by in the last five minutes of its history.
const DLQGrowingWindow = 5 * time.Minute

// DLQGrowingFinding reports a dead-letter queue (see DeadLetterQueues)
// whose depth grew between two looks: messages are failing for good now,
// faster than anyone takes them out.
func DLQGrowingFinding(queue string, g DLQGrowth) (Finding, bool) {
	if g.Grew <= 0 || g.Over <= 0 {
		return Finding{}, false
	}
	over := g.Over.Truncate(time.Second)
	if over <= 0 {
		over = g.Over
	}
	return Finding{Code: CodeDLQGrowing, Severity: SeverityWarning, Queue: queue, Message: fmt.Sprintf(
		"grew by %s in %s (%s), %s waiting: messages keep failing for good",
		fndCount(g.Grew), fndDuration(over), fndRate(float64(g.Grew)/g.Over.Seconds()), fndCount(g.Waiting))}, true
}

// fndRate writes a rate the way it is read: 4/s, 12/min, 3/h.
func fndRate(perSec float64) string {
	switch {
	case perSec >= 0.95:
		return strconv.FormatFloat(perSec, 'f', 0, 64) + "/s"
	case perSec*60 >= 0.95:
		return strconv.FormatFloat(perSec*60, 'f', 0, 64) + "/min"
	}
	return strconv.FormatFloat(perSec*3600, 'f', 0, 64) + "/h"
}

// DeadLetterQueues lists, sorted, the queues where dead letters end: every
// ladder's DLQ and error queues, and every other queue something
// dead-letters into that is no ladder's main, tier or wait queue nor part
// of a delay infrastructure (a plain queue's DLQ). ladder's own wait queues
// dead-letter into move targets, which this does not count.
func DeadLetterQueues(v *Vhost, ladders []retry.Ladder) []string {
	t := discBuild(v)
	inLadder := map[string]bool{}
	seen := map[string]bool{}
	var out []string
	for _, l := range ladders {
		inLadder[l.Main] = true
		for _, tr := range l.Tiers {
			inLadder[tr.Queue] = true
		}
		for _, w := range l.WaitQueues {
			inLadder[w] = true
		}
		for _, w := range l.DelayQueues {
			inLadder[w] = true
		}
		for _, d := range l.Delays {
			for _, w := range d.Queues {
				inLadder[w] = true
			}
		}
	}
	for _, l := range ladders {
		for _, q := range append([]string{l.DLQ}, l.ErrorQueues...) {
			if q != "" && !seen[q] {
				seen[q] = true
				out = append(out, q)
			}
		}
	}
	for qi := range v.Queues {
		name := v.Queues[qi].Name
		if t.canon[qi] && len(t.dlFrom[qi]) > 0 && !inLadder[name] && !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}
