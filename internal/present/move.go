package present

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/moveplan"
	"github.com/ladder-tui/ladder/retry/topology"
)

// Plural is "1 message", "3 messages".
func Plural(n int, one, many string) string { return topology.Plural(n, one, many) }

// Publish names where a publish goes: "queue Q" (default exchange),
// "X → key", or NoValue for nothing.
func Publish(exchange, key string) string {
	switch {
	case exchange == "" && key == "":
		return NoValue
	case exchange == "":
		return "queue " + key
	}
	return exchange + " → " + key
}

// Target says where a move sends n messages. For origin, planned (a dry
// run's plan, may be nil) names the queue when the messages share one: the
// queue each failed in, which is what origin reaches.
func Target(t moveplan.Target, n int, planned []moveplan.Route) string {
	switch t.Kind {
	case moveplan.TargetQueue:
		return "queue " + t.Name
	case moveplan.TargetExchange:
		switch {
		case t.HasKey:
			return "exchange " + t.Name + " with key " + strconv.Quote(t.RoutingKey)
		case n == 1:
			return "exchange " + t.Name + " with its own routing key"
		}
		return "exchange " + t.Name + ", each with its own routing key"
	}
	origin := "their origin"
	if n == 1 {
		origin = "its origin"
	}
	places := map[string]bool{}
	one := ""
	for _, p := range planned {
		if p.Moves() {
			one = strings.Join(p.Reaches, " + ")
			places[one] = true
		}
	}
	switch len(places) {
	case 0:
		return origin
	case 1:
		return origin + " (" + one + ")"
	}
	return fmt.Sprintf("their origins (%d queues)", len(places))
}

// maxReachGroups is how many distinct sets of reached queues Reaches names
// before "… N more".
const maxReachGroups = 4

// Reaches names every queue the moving messages of a plan reach:
// "orders.audit", "orders.audit + orders.billing" when they share the
// queues, else per set with its count: "2 → orders.audit, 1 → orders.audit
// + orders.billing". "" when nothing moves.
func Reaches(planned []moveplan.Route) string {
	var order []string
	count := map[string]int{}
	for _, p := range planned {
		if !p.Moves() {
			continue
		}
		k := strings.Join(p.Reaches, " + ")
		if k == "" {
			continue // a route ladder cannot resolve: its note says so
		}
		if count[k] == 0 {
			order = append(order, k)
		}
		count[k]++
	}
	switch len(order) {
	case 0:
		return ""
	case 1:
		return order[0]
	}
	parts := make([]string, 0, maxReachGroups+1)
	for i, k := range order {
		if i == maxReachGroups {
			parts = append(parts, fmt.Sprintf("… %d more", len(order)-i))
			break
		}
		parts = append(parts, strconv.Itoa(count[k])+" → "+k)
	}
	return strings.Join(parts, ", ")
}

// CrashRisk counts the moving messages a broker crash during their wait
// can lose: "a broker crash during the wait can lose 3 of them". "" when
// none.
func CrashRisk(planned []moveplan.Route) string {
	n, moving := 0, 0
	for _, p := range planned {
		if p.Moves() {
			moving++
			if p.CrashRisk != "" {
				n++
			}
		}
	}
	switch {
	case n == 0:
		return ""
	case n == moving && n == 1:
		return "a broker crash during the wait can lose it"
	case n == moving:
		return "a broker crash during the wait can lose them"
	}
	return "a broker crash during the wait can lose " + strconv.Itoa(n) + " of them"
}

// Pace is a --rate in words: "at most 50 a second", "at most 6 a minute".
func Pace(perSecond float64) string {
	if perSecond <= 0 {
		return ""
	}
	if perSecond < 1 {
		return "at most " + strconv.FormatFloat(perSecond*60, 'f', -1, 64) + " a minute"
	}
	return "at most " + strconv.FormatFloat(perSecond, 'f', -1, 64) + " a second"
}

// Chosen is a --where in words: "chosen by --where reason=rejected --where
// age>1h". "" without one.
func Chosen(exprs []string) string {
	if len(exprs) == 0 {
		return ""
	}
	return "chosen by --where " + strings.Join(exprs, " --where ")
}

// Delay is "no delay" or "delay 5s".
func Delay(d time.Duration) string {
	if d <= 0 {
		return "no delay"
	}
	return "delay " + retry.FormatDelay(d)
}

// Unblock is ladder unblock's plan in one line, for the CLI and the TUI.
func Unblock(u moveplan.UnblockPlan) string {
	if len(u.Picks) == 0 && u.Kept > 0 {
		// Some do, but none can be given its remaining delay (the notes
		// say why): nothing to move is not "nothing holds others back".
		verb := "hold"
		if u.Kept == 1 {
			verb = "holds"
		}
		return u.Queue + ": " + Plural(u.Kept, "message", "messages") + " " + verb + " others back but cannot be moved (as of " + Clock(u.At) + "): nothing to do, see the notes"
	}
	if len(u.Picks) == 0 {
		return u.Queue + ": no message holds others back (as of " + Clock(u.At) + ")"
	}
	verb := "hold"
	if len(u.Picks) == 1 {
		verb = "holds"
	}
	longest := time.Duration(0)
	for _, p := range u.Picks {
		longest = max(longest, p.Remaining)
	}
	return u.Queue + ": " + Plural(len(u.Picks), "message", "messages") + " " + verb + " back " + Plural(u.Behind, "message", "messages") +
		" (as of " + Clock(u.At) + "); each waits out its remaining delay (up to " + retry.FormatDelay(longest) + ") in a wait queue chosen as it is published (the dry run shows it as of then), then goes to " + u.To
}

// Via says in words how one message travels.
func Via(v topology.Via) string {
	switch v {
	case "":
		return ""
	case topology.ViaDirect:
		return "a direct publish"
	case topology.ViaTier:
		return "via tier"
	case topology.ViaDelayedExchange:
		return "via delayed exchange"
	case topology.ViaDelayQueue:
		return "via a ladder delay queue"
	}
	return strings.ReplaceAll(string(v), "_", " ")
}

// Way is a plan's via in words with what it passes (a table's VIA column):
// "tier orders.wait.5s", "delayed exchange orders.delayed", "ladder delay
// queue ladder.delay.5s", "direct". The raw value is JSON's, not a reader's.
func Way(r moveplan.Route) string {
	var way, through string
	switch r.Via {
	case topology.ViaDirect:
		way = "direct"
	case topology.ViaTier:
		way, through = "tier", r.Queue
	case topology.ViaDelayedExchange:
		way, through = "delayed exchange", r.Exchange
	case topology.ViaDelayQueue:
		way, through = "ladder delay queue", r.Queue
	default:
		way, through = strings.ReplaceAll(string(r.Via), "_", " "), r.Queue
	}
	if through == "" {
		return way
	}
	return way + " " + through
}

// Routes says how many messages take which way: "3 via tier pay.wait.3s,
// 3 via a ladder delay queue".
func Routes(counts []moveplan.RouteCount) string {
	parts := make([]string, 0, len(counts))
	// ladder's own delay queues are one way however many delays they keep.
	delayQueues, delayAt := 0, -1
	for _, c := range counts {
		n := strconv.Itoa(c.Count)
		if c.Via == topology.ViaDelayQueue {
			if delayAt < 0 {
				delayAt = len(parts)
				parts = append(parts, "")
			}
			delayQueues += c.Count
			continue
		}
		switch c.Via {
		case topology.ViaDirect:
			parts = append(parts, n+" directly")
		case topology.ViaTier:
			parts = append(parts, n+" via tier "+c.Through)
		case topology.ViaDelayedExchange:
			parts = append(parts, n+" via delayed exchange "+c.Through)
		default:
			parts = append(parts, n+" "+Via(c.Via))
		}
	}
	if delayAt >= 0 {
		parts[delayAt] = strconv.Itoa(delayQueues) + " " + Via(topology.ViaDelayQueue)
	}
	return strings.Join(parts, ", ")
}

// minRateTime is how long a move must have run for its rate to mean
// anything: one message in 26 ms is not "38 msg/s".
const minRateTime = time.Second

// Progress is a running move's or replay's line: "7 of 12 · 3.5 msg/s ·
// 5 left · ETA 2s · moved 7 · failed 0".
func Progress(done, total, moved, failed int, elapsed time.Duration) string {
	var b strings.Builder
	b.WriteString(strconv.Itoa(done))
	if total > 0 {
		b.WriteString(" of " + strconv.Itoa(total))
	}
	if secs := elapsed.Seconds(); elapsed >= minRateTime && done > 0 {
		rate := float64(done) / secs
		b.WriteString(" · " + Rate(rate, true) + " msg/s")
		if total > done {
			eta := time.Duration(float64(total-done) / rate * float64(time.Second))
			b.WriteString(" · " + strconv.Itoa(total-done) + " left · ETA " + Dur(eta.Round(time.Second)))
		}
	}
	b.WriteString(" · moved " + strconv.Itoa(moved) + " · failed " + strconv.Itoa(failed))
	return b.String()
}

// PublishBlocked says a resource alarm holds a move or replay back: "broker is
// blocking publishes (low on memory); waiting". The reason is the broker's
// text: callers sanitise it.
func PublishBlocked(reason string) string {
	return "broker is blocking publishes (" + reason + "); waiting"
}

// PublishUnblocked says the alarm cleared.
const PublishUnblocked = "broker no longer blocks publishes; continuing"

// DelayedRetry is a quorum queue's built-in delayed retry in words:
// "failed, 1s × count ≤ 30s".
func DelayedRetry(d *retry.DelayedRetry) string {
	s := d.Type + ", " + retry.FormatDelay(d.Min) + " × count"
	if d.Max > 0 {
		s += " ≤ " + retry.FormatDelay(d.Max)
	}
	return s
}

// PreviewCapped says that a move's preview planned only its first n
// messages (usecase.PreviewCap).
func PreviewCapped(n int) string {
	return fmt.Sprintf("the first %d were planned, the rest are planned one by one as they move", n)
}
