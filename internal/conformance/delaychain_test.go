package conformance

import (
	"os/exec"
	"slices"
	"testing"

	"github.com/ladder-tui/ladder/broker/brokertest"
)

// A shared chain of delay levels (testdata/delaychain/levels.py on
// Debian's python3-pika: queues delay.level-N, TTL 2^N s, dead-lettering
// down the chain, level 0 into a topic exchange routing to each endpoint
// by key), one set for every endpoint, after a message went down it into
// each. ladder draws no ladder of the levels: each endpoint is a ladder
// whose one delay is the chain, listing the levels that deliver to it,
// with their TTLs; no finding on a level.
func TestSharedDelayChainLevelsInEachEndpoint(t *testing.T) {
	t.Parallel()
	python := requireLibrary(t, "pika for Python 3 (Debian's python3-pika)", func(bin string) *exec.Cmd {
		return exec.Command(bin, "-c", "import pika")
	}, "/usr/bin/python3", "python3")
	r := brokertest.OwnVhost(t)
	endpoints := []string{"billing", "orders"}
	levels := []string{"delay.level-0", "delay.level-1", "delay.level-2"}
	runScript(t, testdata(t, "delaychain"), []string{
		"CONFORMANCE_URL=" + scriptURL(t, r), "CONFORMANCE_ENDPOINTS=billing,orders", "CONFORMANCE_LEVELS=3",
	}, python, "levels.py")

	rep := topology(t, r)
	if got := rep.mains(t); !slices.Equal(got, endpoints) {
		t.Errorf("mains %q, want %q: the levels are no ladders of their own", got, endpoints)
	}
	for _, ep := range endpoints {
		l := rep.ladderOf(t, ep)
		if l == nil {
			continue
		}
		if len(l.Delays) != 1 || !slices.Equal(names(t, l.Delays[0].Queues), levels) {
			t.Errorf("%s: delays %+v, want the chain %q", ep, l.Delays, levels)
			continue
		}
		var got []string
		var ttls []int64
		for _, lv := range l.Delays[0].Levels {
			got, ttls = append(got, lv.Queue), append(ttls, lv.TTLMS)
		}
		if !slices.Equal(got, levels) || !slices.Equal(ttls, []int64{1000, 2000, 4000}) {
			t.Errorf("%s: levels %q with TTLs %v ms, want %q with 1000, 2000, 4000", ep, got, ttls, levels)
		}
		if len(l.Tiers) != 0 || l.RetriesInConsumer {
			t.Errorf("%s: tiers %+v, retries in consumer %v: the levels are its delay, not tiers", ep, l.Tiers, l.RetriesInConsumer)
		}
	}
	for _, q := range levels {
		for _, f := range rep.findingsOn(q) {
			t.Errorf("finding on level %s: %s", q, f)
		}
	}
}
