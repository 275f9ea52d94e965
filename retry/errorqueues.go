package retry

import (
	"slices"
	"strings"
	"sync"
)

// commonErrorSuffixes are the endings people give a work queue's dead end
// when no framework names it for them (orders → orders.failure): pure
// data, one table. A queue named so is not proof of anything, so what is
// read from it is labelled as inferred from the name.
var commonErrorSuffixes = [...]string{
	".failure", ".failed", ".errors", ".error", "_error", "-error",
	".dlq", "-dlq", "_dlq", ".DLQ", ".parkingLot", ".dead", "_dead_letter",
}

// QueueNaming is one name of a work queue's dead end, {queue} standing for
// the work queue ("{queue}_error"), and who names it so: a convention's
// Name, or "" for a common ending no framework claims.
type QueueNaming struct {
	Pattern   string
	Framework string
}

// ErrorQueueNamings are every name of a work queue's dead end ladder
// knows: each convention's ErrorQueues that hold {queue}, in the table's
// order, then the common endings no convention has already named.
// Discovery links an existing Q.failure to Q by it, and --to origin infers
// Q from a message in Q.failure that records nothing: one table, so the
// two agree.
func ErrorQueueNamings() []QueueNaming { return slices.Clone(errorQueueNamings()) }

// ErrorQueueNamings are ErrorQueueNamings with t's declared conventions'
// namings first.
func (t Table) ErrorQueueNamings() []QueueNaming {
	builtin := errorQueueNamings()
	if len(t.declared) == 0 {
		return slices.Clone(builtin)
	}
	var out []QueueNaming
	seen := map[string]bool{}
	for _, c := range t.declared {
		for _, pat := range c.ErrorQueues {
			if strings.Contains(pat, "{queue}") && !seen[pat] {
				out = append(out, QueueNaming{Pattern: pat, Framework: c.Name})
				seen[pat] = true
			}
		}
	}
	for _, n := range builtin {
		if !seen[n.Pattern] {
			out = append(out, n)
		}
	}
	return out
}

// errorQueueNamings is the table, built once: --to origin may ask for
// every message of a queue.
var errorQueueNamings = sync.OnceValue(func() []QueueNaming {
	var out []QueueNaming
	seen := map[string]bool{}
	for _, c := range conventions {
		for _, pat := range c.ErrorQueues {
			if strings.Contains(pat, "{queue}") {
				out = append(out, QueueNaming{Pattern: pat, Framework: c.Name})
				seen[pat] = true
			}
		}
	}
	for _, s := range commonErrorSuffixes {
		if pat := "{queue}" + s; !seen[pat] {
			out = append(out, QueueNaming{Pattern: pat})
			seen[pat] = true
		}
	}
	return out
})

// NamedAfter is the work queue that name is the dead end of by pattern
// ("orders" for "orders.failure" by "{queue}.failure"); "" when name is
// not so named.
func (n QueueNaming) NamedAfter(name string) string {
	pre, suf, ok := strings.Cut(n.Pattern, "{queue}")
	if !ok {
		return ""
	}
	q, hasPre := strings.CutPrefix(name, pre)
	q, hasSuf := strings.CutSuffix(q, suf)
	if !hasPre || !hasSuf || q == name {
		return ""
	}
	return q
}
