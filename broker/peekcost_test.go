package broker

import (
	"errors"
	"strings"
	"testing"

	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/topology"
)

// The cost told before a peek follows the browse each version allows: a
// quorum queue on 4.3+ is browsed over AMQP 1.0 and counts nothing toward
// its limit (x-acquired-count only); before 4.3 a peek counts a delivery,
// toward the queue's own limit on any version, from 4.0 a default of 20,
// none when the limit is disabled; streams cost nothing.
func TestPeekCostOf(t *testing.T) {
	for _, tc := range []struct {
		name    string
		q       topology.Queue
		version string
		want    PeekCost
		felt    bool
	}{
		{"classic unconsumed", topology.Queue{Type: topology.QueueClassic}, "4.1.0", PeekCost{Redelivered: true}, false},
		{"classic consumed", topology.Queue{Type: topology.QueueClassic, Consumers: 3}, "4.1.0", PeekCost{Consumers: 3, Redelivered: true}, true},
		{"unknown consumers", topology.Queue{Type: topology.QueueClassic, ConsumersUnknown: true}, "3.13.7", PeekCost{ConsumersUnknown: true, Redelivered: true}, true},
		{"quorum 4.0–4.2 default", topology.Queue{Type: topology.QueueQuorum}, "4.2.1", PeekCost{Redelivered: true, Counted: true, Limited: true, DeliveryLimit: 20, DefaultLimit: true}, true},
		{"quorum 3 no limit", topology.Queue{Type: topology.QueueQuorum}, "3.13.7", PeekCost{Redelivered: true, Counted: true}, false},
		{"quorum 3 own limit", topology.Queue{Type: topology.QueueQuorum, Arguments: map[string]any{"x-delivery-limit": int64(4)}}, "3.13.7",
			PeekCost{Redelivered: true, Counted: true, Limited: true, DeliveryLimit: 4}, true},
		{"quorum 4.3 policy limit", topology.Queue{Type: topology.QueueQuorum, Policy: map[string]any{"delivery-limit": int64(9)}}, "4.3.0",
			PeekCost{Redelivered: true, Acquired: true}, false},
		{"quorum 4.3 consumed", topology.Queue{Type: topology.QueueQuorum, Consumers: 2}, "4.3.6", PeekCost{Consumers: 2, Redelivered: true, Acquired: true}, true},
		{"quorum unlimited", topology.Queue{Type: topology.QueueQuorum, Arguments: map[string]any{"x-delivery-limit": int64(-1)}}, "4.1.0", PeekCost{Redelivered: true, Counted: true}, false},
		{"stream", topology.Queue{Type: topology.QueueStream, Consumers: 5}, "4.1.0", PeekCost{}, false},
	} {
		got := PeekCostOf(tc.q, tc.version)
		if got != tc.want || got.Felt() != tc.felt {
			t.Errorf("%s: %+v (felt %v), want %+v (felt %v)", tc.name, got, got.Felt(), tc.want, tc.felt)
		}
	}
}

// Refused before the queue is touched: read-only refuses any peek that
// counts a delivery; otherwise one counting toward a limit needs --force.
// The line names the queue and the cost; 4.3's browse is never refused.
func TestPeekRefusalOf(t *testing.T) {
	dlq := "orders.dlq"
	limited := topology.Queue{Name: "orders.q", Type: topology.QueueQuorum, Arguments: map[string]any{
		"x-delivery-limit": int64(3), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": dlq}}
	unlimited := topology.Queue{Name: "plain.q", Type: topology.QueueQuorum}
	for _, tc := range []struct {
		name     string
		q        topology.Queue
		version  string
		readOnly bool
		kind     error // nil: allowed
		says     []string
	}{
		{"4.3 read-only", limited, "4.3.6", true, nil, nil},
		{"4.3", limited, "4.3.6", false, nil, nil},
		{"4.0 read-only", limited, "4.0.5", true, ErrReadOnly, []string{"peek orders.q: read-only:", "x-delivery-count +1", "delivery limit of 3", "RabbitMQ 4.0.5 has no peek that leaves it unchanged"}},
		{"4.0", limited, "4.0.5", false, ErrPeekCostsDelivery, []string{"peek orders.q:", "delivery limit of 3", "delivered 3 times would be dead-lettered to queue orders.dlq"}},
		{"4.0 default limit", unlimited, "4.0.5", false, ErrPeekCostsDelivery, []string{"default delivery limit of 20", "dropped (no dead-letter exchange)"}},
		{"3.10 no limit", unlimited, "3.10.8", false, nil, nil},
		{"3.10 no limit read-only", unlimited, "3.10.8", true, ErrReadOnly, []string{"read-only: a peek of this quorum queue counts a delivery (x-delivery-count +1); RabbitMQ 3.10.8"}},
		{"classic read-only", topology.Queue{Name: "c", Type: topology.QueueClassic}, "3.10.8", true, nil, nil},
	} {
		r := PeekRefusal(tc.q, tc.version, PeekCostOf(tc.q, tc.version), tc.readOnly, false, "")
		if tc.kind == nil {
			if r != nil {
				t.Errorf("%s: refused: %v", tc.name, r)
			}
			continue
		}
		if r == nil || !errors.Is(r, tc.kind) {
			t.Errorf("%s: %v, want %v", tc.name, r, tc.kind)
			continue
		}
		for _, s := range tc.says {
			if !strings.Contains(r.Error(), s) {
				t.Errorf("%s: %q lacks %q", tc.name, r.Error(), s)
			}
		}
		if strings.Contains(r.Error(), "\n") || strings.Contains(r.Error(), "--force") {
			t.Errorf("%s: not one line, or names a flag the terminal UI lacks: %q", tc.name, r.Error())
		}
	}
	// Forced, it runs (never under read-only).
	c := PeekCostOf(limited, "4.0.5")
	if r := PeekRefusal(limited, "4.0.5", c, false, true, ""); r != nil {
		t.Errorf("forced: %v", r)
	}
	if r := PeekRefusal(limited, "4.0.5", c, true, true, ""); r == nil || !errors.Is(r, ErrReadOnly) {
		t.Errorf("forced under read-only: %v", r)
	}
}

// What a peek says it cost follows how it browsed.
func TestPeekSideEffectsByMode(t *testing.T) {
	for _, tc := range []struct {
		typ, version string
		want, not    string
	}{
		{topology.QueueQuorum, "4.3.6", "x-delivery-count and the delivery limit are untouched", "increments x-delivery-count"},
		{topology.QueueQuorum, "4.0.5", "increments x-delivery-count, which counts toward the delivery limit (20 unless set)", "AMQP 1.0"},
		{topology.QueueQuorum, "3.10.8", "if it has one", "AMQP 1.0"},
		{topology.QueueClassic, "4.3.6", "redelivered flag is now set", "x-delivery-count"},
	} {
		got := strings.Join(PeekSideEffectsVia(PeekModeOf(topology.Queue{Type: tc.typ}, tc.version), tc.typ, tc.version), " ")
		if !strings.Contains(got, tc.want) || strings.Contains(got, tc.not) {
			t.Errorf("%s on %s: %q", tc.typ, tc.version, got)
		}
	}
	if got := PeekSideEffectsVia(PeekModeOf(topology.Queue{Type: topology.QueueStream}, "4.3.6"), topology.QueueStream, "4.3.6"); len(got) != 0 {
		t.Errorf("stream: %v", got)
	}
	// 4.3 without AMQP 1.0 falls back, and says what it costs then.
	got := strings.Join(PeekSideEffectsVia(PeekConsumeClose, topology.QueueQuorum, "4.3.6"), " ")
	if !strings.Contains(got, "AMQP 1.0 was not available") || !strings.Contains(got, "increments x-delivery-count and x-acquired-count") {
		t.Errorf("4.3 fallback: %q", got)
	}
}

// The exact rule a quorum queue's return follows (seen on 3.10.8, 4.0.5,
// 4.3.6 with x-delivery-limit 3: a message delivered with count 3 is
// dead-lettered by its return): the report names those positions.
func TestNoteDeadLettered(t *testing.T) {
	q := topology.Queue{Name: "q", Type: topology.QueueQuorum, Arguments: map[string]any{"x-delivery-limit": int64(3)}}
	res := &PeekResult{Messages: []Message{
		{Position: 0, Headers: retry.Headers{"x-delivery-count": int64(3)}},
		{Position: 1, Headers: retry.Headers{"x-delivery-count": int64(2)}},
		{Position: 2, Headers: retry.Headers{}},
		{Position: 3, Headers: retry.Headers{"x-delivery-count": int64(4)}},
	}}
	NoteDeadLettered(res, q, "4.0.5")
	text := strings.Join(res.SideEffects, " ")
	if res.Released != 2 || res.ReleasedTo != "nowhere (dropped: no dead-letter exchange)" || !strings.Contains(text, "2 messages were dropped (no dead-letter exchange) by this peek (position 0, 3)") {
		t.Fatalf("released %d to %q: %q", res.Released, res.ReleasedTo, text)
	}
	none := &PeekResult{Messages: res.Messages}
	NoteDeadLettered(none, topology.Queue{Name: "c", Type: topology.QueueClassic}, "4.0.5")
	if none.Released != 0 || len(none.SideEffects) != 0 {
		t.Fatalf("classic: %+v", none)
	}
}

// A re-peek is judged from the counts the last peek saw: its own return
// added one, the next adds another.
func TestRepeekDeadLetters(t *testing.T) {
	q := topology.Queue{Name: "q", Type: topology.QueueQuorum, Arguments: map[string]any{"x-delivery-limit": int64(3)}}
	prev := &PeekResult{Messages: []Message{
		{Headers: retry.Headers{"x-delivery-count": int64(2)}},
		{Headers: retry.Headers{"x-delivery-count": int64(1)}},
		{Headers: retry.Headers{}},
	}}
	if n := RepeekDeadLetters(prev, q, "4.0.5"); n != 1 {
		t.Errorf("4.0: %d", n)
	}
	if n := RepeekDeadLetters(prev, q, "4.3.6"); n != 0 {
		t.Errorf("4.3 counts nothing: %d", n)
	}
	if n := RepeekDeadLetters(nil, q, "4.0.5"); n != 0 {
		t.Errorf("no previous peek: %d", n)
	}
}
