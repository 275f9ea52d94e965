package broker

import (
	"testing"

	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/topology"
)

// A peek shows the origin --to origin uses: a message MassTransit moved to
// Q_skipped records no origin of its own (MT-Reason, no fault headers), and
// its naming names Q, which exists; the same message in a queue nothing
// names shows none.
func TestDecoderShowsTheOriginAMoveUses(t *testing.T) {
	v := &topology.Vhost{Queues: []topology.Queue{{Name: "submit-order", Consumers: 1}, {Name: "submit-order_error"}, {Name: "submit-order_skipped"}, {Name: "elsewhere"}}}
	ladders := topology.Discover(v)
	h := retry.Headers{"MT-Reason": "dead-letter", "MT-Host-MachineName": "web-1"}
	m := Message{Headers: h}
	NewDecoder(v, ladders, "submit-order_skipped").Decode(&m, []byte("{}"), 64)
	if m.Origin == nil || m.Origin.RoutingKey != "submit-order" || m.Origin.Exchange != "" {
		t.Fatalf("origin %+v, want submit-order through the default exchange", m.Origin)
	}
	m = Message{Headers: h}
	NewDecoder(v, ladders, "elsewhere").Decode(&m, []byte("{}"), 64)
	if m.Origin != nil {
		t.Errorf("in elsewhere: origin %+v, want none", m.Origin)
	}
	var nilDec *Decoder
	m = Message{Headers: h}
	nilDec.Decode(&m, []byte("{}"), 64)
	if m.Origin != nil || m.Retry.Framework != "MassTransit" {
		t.Errorf("nil decoder: origin %+v framework %q", m.Origin, m.Retry.Framework)
	}
}
