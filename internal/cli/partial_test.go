package cli

import (
	"strings"
	"testing"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/usecase"
)

// ladder peek's text says a partial view is partial and why, on a line of
// its own (present.PeekPartial, the TUI's banner says the same).
func TestPeekTextSaysItIsPartial(t *testing.T) {
	res := &broker.PeekResult{Queue: "orders.dlq", Type: "classic", Total: 3000, Ready: 1799,
		Messages: []broker.Message{{Position: 0, Properties: broker.Properties{MessageID: "m-91"}}},
		Others:   &broker.PeekOthers{Consumers: 1, Unacked: 1201},
		Partial:  []string{"held by another reader (1 other consumer reading, 1201 unacknowledged when it began): positions count among the messages ready to ladder, not from the queue's head"}}
	out := renderPeek(&usecase.GroupedPeek{PeekResult: res}, 0)
	if !strings.Contains(out, "! partial: held by another reader") || !strings.Contains(out, "not from the queue's head") {
		t.Errorf("no partial line:\n%s", out)
	}
	res.Others, res.Partial = nil, nil
	if out := renderPeek(&usecase.GroupedPeek{PeekResult: res}, 0); strings.Contains(out, "partial") {
		t.Errorf("a whole view says partial:\n%s", out)
	}
}
