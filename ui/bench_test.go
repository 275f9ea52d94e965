package ui

import (
	"fmt"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/topology"
)

// benchModel is a root model sized w×h, outside any program.
func benchModel(b *testing.B, fc *fakeClient, w, h int) *Model {
	m := New(Options{Client: fc})
	m.c.now = func() time.Time { return fixedNow }
	m.c.tick = func(time.Duration, func(time.Time) tea.Msg) tea.Cmd { return nil }
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	return m
}

func bigPeek(n int) *broker.PeekResult {
	r := &broker.PeekResult{Queue: "orders.dlq", Type: "classic", Total: int64(n), Ready: int64(n),
		SideEffects: []string{"every browsed message was requeued: its redelivered flag is now set"}}
	base := fixtureMessage(0)
	r.Messages = make([]broker.Message, n)
	for i := range r.Messages {
		m := base
		m.Position = i
		m.Properties.MessageID = fmt.Sprintf("msg-%06d", i)
		hol := *base.HoL
		hol.Position = i
		m.HoL = &hol
		r.Messages[i] = m
	}
	return r
}

// BenchmarkBrowserView10k draws one full frame of the queue browser with
// 10,000 peeked messages loaded, cursor in the middle.
func BenchmarkBrowserView10k(b *testing.B) {
	for _, sz := range [][2]int{{80, 24}, {160, 48}} {
		b.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(b *testing.B) {
			fc := newFake()
			m := benchModel(b, fc, sz[0], sz[1])
			m.Update(snapshotMsg{gen: m.gen, snap: fc.snap, at: fixedNow})
			m.update(openQueueMsg{queue: "orders.dlq"})
			m.Update(peekMsg{id: m.browser.id, queue: "orders.dlq", res: bigPeek(10_000), at: fixedNow})
			for range 5000 {
				m.browser.nav.Step(len(m.browser.view), 1, nil)
			}
			m.browser.fixScroll()
			b.ReportAllocs()
			for b.Loop() {
				_ = m.View()
			}
		})
	}
}

// BenchmarkBrowserLoad10k is the once-per-load cost: rendering every row
// (done in the peek command, off the UI goroutine).
func BenchmarkBrowserLoad10k(b *testing.B) {
	fc := newFake()
	m := benchModel(b, fc, 160, 48)
	m.update(openQueueMsg{queue: "orders.dlq"})
	res := bigPeek(10_000)
	b.ReportAllocs()
	for b.Loop() {
		m.browser.load(res, fixedNow, nil, browserCols{})
	}
}

// fiftyLadders is a snapshot of 50 ladders of 3 tiers and a DLQ each, plus
// 50 other queues, with findings.
func fiftyLadders() *broker.Snapshot {
	s := &broker.Snapshot{Vhost: "/", BrokerVersion: "4.1.0", TakenAt: fixedNow}
	for i := range 50 {
		main := fmt.Sprintf("service-%02d.work", i)
		l := retry.Ladder{Main: main, DLQ: main + ".dlq"}
		s.Topology.Queues = append(s.Topology.Queues, queue(main, int64(100*i), 3, 2, 10, 12), queue(main+".dlq", int64(i), 0, 0, 0.1, 0))
		for j, ttl := range []time.Duration{5 * time.Second, time.Minute, 10 * time.Minute} {
			name := fmt.Sprintf("%s.retry.%d", main, j)
			l.Tiers = append(l.Tiers, retry.Tier{Queue: name, TTL: ttl})
			s.Topology.Queues = append(s.Topology.Queues, queue(name, int64(i+j), 0, 0, 1, 1))
		}
		s.Ladders = append(s.Ladders, l)
		s.Findings = append(s.Findings, topology.Finding{Code: topology.CodeHoLRisk, Severity: topology.SeverityWarning, Queue: l.Tiers[2].Queue, Message: "wait queue relies on per-message expiration"})
		s.Topology.Queues = append(s.Topology.Queues, queue(fmt.Sprintf("other-%02d", i), 1, 0, 1, 1, 1))
	}
	return s
}

// BenchmarkHomeView50 draws one full frame of the home screen with 50
// ladders, a full history behind every sparkline.
func BenchmarkHomeView50(b *testing.B) {
	for _, sz := range [][2]int{{80, 24}, {160, 48}} {
		b.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(b *testing.B) {
			fc := newFake()
			fc.snap = fiftyLadders()
			m := benchModel(b, fc, sz[0], sz[1])
			s := *fc.snap
			s.Trends = map[string]broker.Trend{}
			for _, q := range s.Topology.Queues {
				t := broker.Trend{NetKnown: true, Net: -1}
				for i := range broker.TrendLen {
					t.Depths = append(t.Depths, int64(i*7%50))
				}
				s.Trends[q.Name] = t
			}
			m.Update(snapshotMsg{gen: m.gen, snap: &s, at: s.TakenAt})
			for range 100 {
				m.home.nav.Step(len(m.home.rows), 1, m.home.selectable)
			}
			m.home.fixScroll()
			b.ReportAllocs()
			for b.Loop() {
				_ = m.View()
			}
		})
	}
}
