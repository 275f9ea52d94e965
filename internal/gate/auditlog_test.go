package gate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/retry/moveplan"
)

type fakeMover struct {
	broker.Client
	calls int
	err   error
}

func (f *fakeMover) Move(context.Context, broker.MoveRequest, func(broker.MoveProgress)) (*broker.MoveReport, error) {
	f.calls++
	return &broker.MoveReport{Requested: 2, Moved: 1}, f.err
}
func (f *fakeMover) Vhost() string  { return "/" }
func (f *fakeMover) ReadOnly() bool { return false }

func TestGateWritesStartAndDone(t *testing.T) {
	var buf bytes.Buffer
	fm := &fakeMover{err: errors.New("failed at amqp://u:s3cret@h/")}
	c := New(fm, Options{Broker: "amqp://u:s3cret@h/", Principal: Local("prod", false), Log: NewLog(&buf)})
	_, err := c.Move(context.Background(), broker.MoveRequest{From: "dlq", To: moveplan.Target{Kind: moveplan.TargetOrigin}}, nil)
	if err == nil || fm.calls != 1 {
		t.Fatalf("err %v calls %d", err, fm.calls)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines: %s", len(lines), buf.String())
	}
	var start, done broker.AuditEvent
	_ = json.Unmarshal([]byte(lines[0]), &start)
	_ = json.Unmarshal([]byte(lines[1]), &done)
	if start.Phase != "start" || start.From != "dlq" || start.Target != "origin" || done.Phase != "done" || done.Report.Moved != 1 ||
		start.Context != "prod" || done.Context != "prod" {
		t.Fatalf("%+v %+v", start, done)
	}
	if strings.Contains(buf.String(), "s3cret") {
		t.Fatalf("password in the audit trail: %s", buf.String())
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestGateRefusesWithoutATrail(t *testing.T) {
	fm := &fakeMover{}
	_, err := New(fm, Options{Log: NewLog(failWriter{})}).Move(context.Background(), broker.MoveRequest{From: "q"}, nil)
	if err == nil || fm.calls != 0 {
		t.Fatalf("moved without an audit line: err %v calls %d", err, fm.calls)
	}
	// Dry runs change nothing and are not audited.
	if _, err := New(fm, Options{Log: NewLog(failWriter{})}).Move(context.Background(), broker.MoveRequest{From: "q", DryRun: true}, nil); err != nil || fm.calls != 1 {
		t.Fatalf("dry run: %v", err)
	}
}

// An unblock is audited as one, with the delay of each picked message.
func TestGateNamesAnUnblockAndItsDelays(t *testing.T) {
	var buf bytes.Buffer
	req := broker.MoveRequest{From: "work.delay", To: moveplan.Target{Kind: moveplan.TargetQueue, Name: "work"}, Pick: []moveplan.Pick{
		{Position: 0, Delay: 55 * time.Second}, {Position: 1, Delay: 595 * time.Second}}}
	if _, err := New(&fakeMover{}, Options{Log: NewLog(&buf)}).Move(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var ev broker.AuditEvent
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatal(err)
		}
		if ev.Action != "unblock" || !slices.Equal(ev.DelaysMS, []int64{55000, 595000}) {
			t.Errorf("%s", line)
		}
	}
}

// Queue names are untrusted: a bidi override, a C1 control (U+009B is a
// CSI) or an escape in one reaches the audit log as a JSON escape, never
// raw, and reads back as the same name.
func TestAuditLogEscapesWhatATerminalWouldObey(t *testing.T) {
	var buf bytes.Buffer
	name := "orders\u202edlq\u009b31m\x1b[2J\u2028x\u200f"
	c := New(&fakeMover{}, Options{Log: NewLog(&buf)})
	if _, err := c.Move(context.Background(), broker.MoveRequest{From: name, To: moveplan.Target{Kind: moveplan.TargetQueue, Name: name}}, nil); err != nil {
		t.Fatal(err)
	}
	for _, raw := range []string{"\u202e", "\u009b", "\x1b", "\u2028", "\u200f"} {
		if strings.Contains(buf.String(), raw) {
			t.Errorf("%q written raw: %q", raw, buf.String())
		}
	}
	var ev broker.AuditEvent
	if err := json.Unmarshal([]byte(strings.SplitN(buf.String(), "\n", 2)[0]), &ev); err != nil || ev.From != name {
		t.Fatalf("read back %q, %v", ev.From, err)
	}
}

// fullDisk writes the first room bytes to the file, then fails as a full
// disk does.
type fullDisk struct {
	*os.File
	room int
}

func (d *fullDisk) Write(b []byte) (int, error) {
	n := min(len(b), d.room)
	if _, err := d.File.Write(b[:n]); err != nil {
		return 0, err
	}
	d.room -= n
	if n < len(b) {
		return n, syscall.ENOSPC
	}
	return n, nil
}

// A disk that fills mid-line leaves no half line: the log ends with the
// last whole one, and the move whose start could not be written does not
// start.
func TestAuditLogNeverKeepsHalfALine(t *testing.T) {
	f, err := os.OpenFile(filepath.Join(t.TempDir(), "audit.jsonl"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	disk := &fullDisk{File: f, room: 1 << 20}
	fm := &fakeMover{}
	c := New(fm, Options{Log: NewLog(disk)})
	if _, err := c.Move(context.Background(), broker.MoveRequest{From: "q", To: moveplan.Target{Kind: moveplan.TargetOrigin}}, nil); err != nil {
		t.Fatal(err)
	}
	whole, _ := os.ReadFile(f.Name())
	disk.room = 40 // less than a line
	_, err = c.Move(context.Background(), broker.MoveRequest{From: "q", To: moveplan.Target{Kind: moveplan.TargetOrigin}}, nil)
	if err == nil || !errors.Is(err, syscall.ENOSPC) || fm.calls != 1 {
		t.Fatalf("error %v, %d moves: the second must not start", err, fm.calls)
	}
	after, _ := os.ReadFile(f.Name())
	if !bytes.Equal(after, whole) || !bytes.HasSuffix(after, []byte("\n")) {
		t.Fatalf("the log keeps a partial line:\n%s", after[len(whole):])
	}
}
