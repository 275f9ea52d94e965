package broker_test

import (
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/dumpfile"
	"github.com/ladder-tui/ladder/broker/usecase"
	"github.com/ladder-tui/ladder/retry/moveplan"
	"github.com/ladder-tui/ladder/retry/topology"
)

// Every source's message reaches the planner by one rule: the timestamp in
// whole seconds, UTC (what AMQP and a dump keep); the body's digest the one
// the source knows, else worked out from a whole body when it is read.
func TestMoveInputIsOneRule(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 5, 700_000_000, time.FixedZone("x", 3600))
	body := []byte(`{"id":1}`)
	m := broker.MoveInput{Position: 2, MessageID: "m2", Timestamp: &at, Body: body}.Message(false)
	if want := time.Date(2026, 3, 1, 11, 0, 5, 0, time.UTC); !m.Timestamp.Equal(want) || m.Timestamp.Location() != time.UTC || m.Timestamp.Nanosecond() != 0 {
		t.Errorf("timestamp %v, want %v", m.Timestamp, want)
	}
	if m.BodyDigest != "" || m.BodySize != len(body) {
		t.Errorf("a message with an id, digest not read: %q, size %d", m.BodyDigest, m.BodySize)
	}
	if m := (broker.MoveInput{Body: body}).Message(false); m.BodyDigest != moveplan.BodyDigest(body) {
		t.Errorf("no id: digest %q", m.BodyDigest)
	}
	if m := (broker.MoveInput{MessageID: "m", Body: body}).Message(true); m.BodyDigest != moveplan.BodyDigest(body) {
		t.Errorf("digest read: %q", m.BodyDigest)
	}
	var zero time.Time
	if m := (broker.MoveInput{Timestamp: &zero}).Message(false); !m.Timestamp.IsZero() {
		t.Errorf("a zero timestamp is none: %v", m.Timestamp)
	}
	// A peek keeps a preview of the body and the whole body's digest.
	peeked := broker.Message{Position: 1, Properties: broker.Properties{MessageID: "p", Timestamp: &at}, Body: body[:1], BodySize: len(body), BodyDigest: moveplan.BodyDigest(body)}
	if m := peeked.MoveInput().Message(true); m.BodyDigest != moveplan.BodyDigest(body) || m.BodySize != len(body) || !m.Timestamp.Equal(at.Truncate(time.Second)) {
		t.Errorf("peeked: %+v", m)
	}
	peeked.BodyDigest = ""
	if m := peeked.MoveInput().Message(true); m.BodyDigest != "" {
		t.Errorf("a preview taken for the whole body: %q", m.BodyDigest)
	}
	// A dump line: its timestamp in seconds, the same instant.
	sec := at.Unix()
	rec := dumpfile.Record{Properties: dumpfile.Properties{MessageID: "d", Timestamp: &sec}, Body: body}
	if m := usecase.RecordInput(&rec, 7).Message(true); m.Position != 7 || !m.Timestamp.Equal(at.Truncate(time.Second)) || m.Timestamp.Location() != time.UTC || m.BodyDigest != moveplan.BodyDigest(body) {
		t.Errorf("dump line: %+v", m)
	}
}

// Book is how every mover books a route: unmatched counted only; a stay
// counted, listed, with its digest; a move counted and listed in a dry run
// only.
func TestBookRoute(t *testing.T) {
	body := []byte("b")
	msg := broker.MoveInput{MessageID: "m", Body: body}.Message(false)
	for _, dry := range []bool{true, false} {
		rep := broker.NewMoveReport(broker.MoveRequest{DryRun: dry})
		rep.Book(msg, moveplan.Route{Unmatched: true})
		stay := rep.Book(msg, moveplan.Route{MessageID: "m", Skip: "why", Note: "n"})
		rep.Book(msg, moveplan.Route{MessageID: "m", Via: topology.ViaDirect, CrashRisk: "risk"})
		if rep.Unmatched != 1 || rep.Skipped != 1 || stay.BodyDigest != moveplan.BodyDigest(body) {
			t.Errorf("dry %v: %+v, stay %+v", dry, rep, stay)
		}
		wantPlanned, wantVia := 1, 0
		if dry {
			wantPlanned, wantVia = 2, 1
		}
		if len(rep.Planned) != wantPlanned || rep.Via[topology.ViaDirect] != wantVia || len(rep.Notes) != 2 {
			t.Errorf("dry %v: planned %d via %v notes %q", dry, len(rep.Planned), rep.Via, rep.Notes)
		}
	}
}
