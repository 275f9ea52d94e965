package sim

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/broker/dumpfile"
	"github.com/ladder-tui/ladder/broker/usecase"
)

// browseSeen is what a browse showed, in a form both sides share.
type browseSeen struct {
	ids        []string
	positions  []int
	kept       int // messages in the result (none with Each)
	incomplete string
	first      broker.PeekProgress
	last       broker.PeekProgress
	err        error
}

func browse(c broker.Client, opt broker.PeekOptions, stopAfter int) browseSeen {
	var s browseSeen
	reports := 0
	opt.Progress = func(p broker.PeekProgress) {
		if reports == 0 {
			s.first = p
		}
		reports++
		s.last = p
	}
	if stopAfter >= 0 {
		opt.Each = func(m *broker.Message) error {
			s.ids = append(s.ids, m.Properties.MessageID)
			s.positions = append(s.positions, m.Position)
			if len(s.ids) == stopAfter {
				return broker.ErrStopBrowse
			}
			return nil
		}
	}
	res, err := c.Peek(context.Background(), OrdersDLQ, opt)
	s.err = err
	if res != nil {
		s.kept, s.incomplete = len(res.Messages), res.Incomplete
		for _, m := range res.Messages {
			s.ids = append(s.ids, m.Properties.MessageID)
			s.positions = append(s.positions, m.Position)
		}
	}
	// Elapsed is the clock's, not a behaviour.
	s.first.Elapsed, s.last.Elapsed = 0, 0
	return s
}

// A browse reads to the same bounds on the simulation and the live broker:
// the limit or the depth it began with, whichever is less; messages kept or
// handed to Each in queue order, positions from 0; Each's ErrStopBrowse
// ends it early and complete; progress starts at 0 of that bound and ends
// Done; a dump writes the same lines.
func TestBrowseBoundsSimulationAndLiveBrokerAgree(t *testing.T) {
	brokertest.Require(t)
	l, _ := equivLive(t, false)
	s := equivSim(t, false, brokerVersion(t, l))
	cases := []struct {
		name      string
		opt       broker.PeekOptions
		stopAfter int // -1: no Each
	}{
		{"limit below the depth", broker.PeekOptions{Limit: 3}, -1},
		{"limit above the depth", broker.PeekOptions{Limit: 10}, -1},
		{"each, every message", broker.PeekOptions{Limit: 10}, 0},
		{"each, stopped after two", broker.PeekOptions{Limit: 10}, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			live, sim := browse(l, tc.opt, tc.stopAfter), browse(s, tc.opt, tc.stopAfter)
			if fmt.Sprintf("%+v", live) != fmt.Sprintf("%+v", sim) {
				t.Errorf("live %+v\nsim  %+v", live, sim)
			}
			if live.err != nil || live.incomplete != "" || len(live.ids) == 0 || !live.last.Done || live.first.Read != 0 {
				t.Errorf("live %+v", live)
			}
			waitLiveDepth(t, l.Resolved(), OrdersDLQ, 4)
		})
	}
	// A dump, through the same Peek: the same messages, line for line (the
	// headers the brokers' dead-lettering wrote differ by version: not here).
	var lines [2][]string
	for i, c := range []broker.Client{l, s} {
		var w bufWriter
		rep, err := usecase.Dump(context.Background(), c, usecase.DumpOptions{Queue: OrdersDLQ, Limit: 3}, &w)
		if err != nil || rep.Written != 3 {
			t.Fatalf("dump %d: %v %+v", i, err, rep)
		}
		_, ls, bad, err := dumpfile.Read(bytes.NewReader(w.Bytes()))
		if err != nil || len(bad) > 0 {
			t.Fatal(err, bad)
		}
		for _, dl := range ls {
			r := dl.Record
			lines[i] = append(lines[i], fmt.Sprintf("%d %s %s/%s %s", r.Position, r.Properties.MessageID, r.Exchange, r.RoutingKey, r.Body))
		}
	}
	if fmt.Sprint(lines[0]) != fmt.Sprint(lines[1]) {
		t.Errorf("dump lines differ:\nlive %+v\nsim  %+v", lines[0], lines[1])
	}
	if _, err := s.Peek(context.Background(), OrdersDLQ, broker.PeekOptions{Each: func(*broker.Message) error { return errors.New("disk full") }}); err == nil {
		t.Error("the simulation swallowed Each's error")
	}
}

type bufWriter struct{ bytes.Buffer }

func (*bufWriter) Sync() error { return nil }
