package ui

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/broker/rabbit"
	"github.com/ladder-tui/ladder/broker/usecase"
)

// Issue 32 in the terminal UI, on the broker: a DLQ of 3,000 dead letters
// of three causes (1,650/950/400), opened (the peek reads 1,000) and
// grouped with g, shows the whole queue's counts, says it is the whole
// queue and which time FIRST and LAST are; the view before the scan is
// done says it is partial. A queue above usecase.GroupWholeLimit is not
// scanned by default, and its groups say they are partial.
func TestGroupViewIsWholeByDefaultOnTheBroker(t *testing.T) {
	r := brokertest.OwnVhost(t)
	ch := brokertest.Channel(t, r, "test whole groups")
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	counts := [brokertest.CauseKinds]int{1650, 950, 400}
	if err := brokertest.CausesDLQ(context.Background(), ch, "work", "work.dlq", counts, 32); err != nil {
		t.Fatal(err)
	}
	n := usecase.GroupWholeLimit + 500
	if _, err := ch.QueueDeclare("big.dlq", true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	if err := brokertest.PublishConfirmed(context.Background(), ch, "", "big.dlq", brokertest.Publishings(brokertest.CauseMessages(n, 33, time.Now()))); err != nil {
		t.Fatal(err)
	}
	if !brokertest.WaitFor(time.Minute, func() bool {
		q, err := ch.QueueDeclarePassive("work.dlq", true, false, false, false, nil)
		return err == nil && q.Messages == 3000
	}) {
		t.Fatal("work.dlq never held 3000")
	}
	live, err := rabbit.NewLive(r, "test whole groups")
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()

	h := newHarnessOn(t, live, Options{}, 200, 40).start()
	h.send(openQueueMsg{queue: "work.dlq", confirmed: true})
	h.mustContain("peeked 1000 of 3000")
	_, cmd := h.m.Update(keyMsg("g"))
	if c := h.m.browser.groupCoverage(); !h.m.browser.gscan.running {
		t.Fatalf("g started no scan: %q", c)
	}
	h.mustContain("below, partial: the peek's first 1000")
	h.runSlow(cmd, 2*time.Minute)
	h.mustContain("grouped 3000 of 3000 ready messages by error · the whole queue", "FIRST/LAST: when they reached work.dlq")
	got := map[string]int{}
	for _, g := range h.m.browser.groups {
		got[g.Type] = g.Count
	}
	for i, c := range counts {
		if got[brokertest.CauseTypes[i]] != c {
			t.Errorf("group of %s: %d, want %d (groups %v)", brokertest.CauseTypes[i], got[brokertest.CauseTypes[i]], c, got)
		}
	}

	h.key("esc", "esc")
	h.send(openQueueMsg{queue: "big.dlq", confirmed: true})
	h.mustContain(fmt.Sprintf("peeked 1000 of %d", n))
	h.key("g")
	if h.m.browser.gscan.running {
		t.Fatal("a queue above the bound was scanned by default")
	}
	h.mustContain(fmt.Sprintf("grouped 1000 of %d ready messages by error · partial: the peek's first 1000 (more than the %d grouped whole by default)", n, usecase.GroupWholeLimit))
}
