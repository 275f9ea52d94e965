package broker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/retry"
)

type fakeMover struct {
	Client
	calls int
	err   error
}

func (f *fakeMover) Move(context.Context, MoveRequest, func(MoveProgress)) (*MoveReport, error) {
	f.calls++
	return &MoveReport{Requested: 2, Moved: 1}, f.err
}
func (f *fakeMover) Vhost() string { return "/" }

func TestAuditedWritesStartAndDone(t *testing.T) {
	var buf bytes.Buffer
	fm := &fakeMover{err: errors.New("failed at amqp://u:s3cret@h/")}
	c := Audited(fm, &buf, "amqp://u:s3cret@h/")
	_, err := c.Move(context.Background(), MoveRequest{From: "dlq", To: Target{Kind: TargetOrigin}}, nil)
	if err == nil || fm.calls != 1 {
		t.Fatalf("err %v calls %d", err, fm.calls)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines: %s", len(lines), buf.String())
	}
	var start, done AuditEvent
	_ = json.Unmarshal([]byte(lines[0]), &start)
	_ = json.Unmarshal([]byte(lines[1]), &done)
	if start.Phase != "start" || start.From != "dlq" || start.Target != "origin" || done.Phase != "done" || done.Report.Moved != 1 {
		t.Fatalf("%+v %+v", start, done)
	}
	if strings.Contains(buf.String(), "s3cret") {
		t.Fatalf("password in the audit trail: %s", buf.String())
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestAuditedRefusesWithoutATrail(t *testing.T) {
	fm := &fakeMover{}
	_, err := Audited(fm, failWriter{}, "").Move(context.Background(), MoveRequest{From: "q"}, nil)
	if err == nil || fm.calls != 0 {
		t.Fatalf("moved without an audit line: err %v calls %d", err, fm.calls)
	}
	// Dry runs change nothing and are not audited.
	if _, err := Audited(fm, failWriter{}, "").Move(context.Background(), MoveRequest{From: "q", DryRun: true}, nil); err != nil || fm.calls != 1 {
		t.Fatalf("dry run: %v", err)
	}
}

// An unblock is audited as one, with the delay of each picked message.
func TestAuditedNamesAnUnblockAndItsDelays(t *testing.T) {
	var buf bytes.Buffer
	req := MoveRequest{From: "work.delay", To: Target{Kind: TargetQueue, Name: "work"}, Pick: []retry.Pick{
		{Position: 0, Delay: 55 * time.Second}, {Position: 1, Delay: 595 * time.Second}}}
	if _, err := Audited(&fakeMover{}, &buf, "").Move(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var ev AuditEvent
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatal(err)
		}
		if ev.Action != "unblock" || !slices.Equal(ev.DelaysMS, []int64{55000, 595000}) {
			t.Errorf("%s", line)
		}
	}
}
