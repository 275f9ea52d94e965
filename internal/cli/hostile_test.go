package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/broker/dumpfile"
)

// terminalSafe fails when s could act on a terminal: an ESC, a BEL, a C1
// control, any other control but newline (and the tab tables do not use),
// or bytes that are not UTF-8.
func terminalSafe(t *testing.T, where, s string) {
	t.Helper()
	if !utf8.ValidString(s) {
		i := 0
		for i < len(s) {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			i += n
		}
		t.Fatalf("%s: invalid UTF-8 at byte %d: %q", where, i, s[max(0, i-40):min(len(s), i+40)])
	}
	for i, r := range s {
		if r == '\n' {
			continue
		}
		if unicode.IsControl(r) || r == '\u202e' {
			t.Fatalf("%s: control %U at byte %d: %q", where, r, i, s[max(0, i-40):min(len(s), i+40)])
		}
	}
}

// The hostile messages through peek (table and JSON) and dump, from a real
// broker: every output is terminal-safe and says what the message holds.
func TestHostileMessagesPeekAndDump(t *testing.T) {
	r := brokerEnv(t)
	q := brokertest.Name(t, "hostile")
	huge := brokertest.HugeBody
	msgs := brokertest.HostileMessages(huge)
	brokertest.PublishHostile(t, r, q, msgs)

	// A huge body read on a busy machine can outlast the default deadline:
	// the test's bound is generous (what is asserted is the output).
	code, out, errOut := runLadder(t, "peek", q, "--max-time", "5m")
	if code != exitOK {
		t.Fatalf("peek: exit %d: %s", code, errOut)
	}
	terminalSafe(t, "peek", out)
	terminalSafe(t, "peek stderr", errOut)
	for _, want := range []string{`id\x1b]0;pwned\x07\x1b[2J\u009b31m`, `rk\x1b]0;pwned`, `id` + `bad\xff\xfe\xc3(\xc0\x80`, "many", "nested", "huge", fmt.Sprint(huge)} {
		if !strings.Contains(out, want) {
			t.Errorf("peek table lacks %q:\n%s", want, out)
		}
	}
	if len(out) > 64<<10 {
		t.Errorf("peek table is %d bytes", len(out))
	}

	code, out, errOut = runLadder(t, "peek", q, "-o", "json", "--max-time", "5m")
	if code != exitOK {
		t.Fatalf("peek -o json: exit %d: %s", code, errOut)
	}
	terminalSafe(t, "peek -o json", out)
	var res broker.PeekResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Messages) != len(msgs) {
		t.Fatalf("peek -o json: %d messages, want %d", len(res.Messages), len(msgs))
	}
	for i, m := range res.Messages {
		if want := len(msgs[i].Msg.Body); m.BodySize != want {
			t.Errorf("%s: body_size %d, want %d", msgs[i].Name, m.BodySize, want)
		}
		if len(m.BodyPreview) > 2*broker.DefaultBodyPreview+8 {
			t.Errorf("%s: body_preview is %d bytes", msgs[i].Name, len(m.BodyPreview))
		}
	}
	if n := len(res.Messages[2].Headers); n != brokertest.ClientMaxFields {
		t.Errorf("many-headers: %d headers in JSON", n)
	}
	if res.Messages[2].Retry.Count != 7 {
		t.Errorf("many-headers: retry count %d", res.Messages[2].Retry.Count)
	}

	// dump to a file: every message, bit for bit where JSON can say it.
	file := filepath.Join(t.TempDir(), "hostile.jsonl")
	code, out, errOut = runLadder(t, "dump", q, "--out", file)
	terminalSafe(t, "dump stdout", out)
	terminalSafe(t, "dump stderr", errOut)
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 128<<20)
	var recs []dumpfile.Record
	for i := 0; sc.Scan(); i++ {
		if i == 0 {
			continue
		}
		rec, err := dumpfile.UnmarshalRecord(sc.Bytes())
		if err != nil {
			t.Fatalf("dump line %d: %v", i, err)
		}
		recs = append(recs, rec)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	// The routing key that is not UTF-8 cannot be kept exactly by the
	// format: that message is skipped (it stays queued), the rest written.
	if code != exitPartial || !strings.Contains(errOut, ": 1 message skipped (they stay queued)") || !strings.Contains(errOut, "not valid UTF-8") {
		t.Errorf("dump: exit %d, want %d naming the skipped message: %s", code, exitPartial, errOut)
	}
	got := map[string]dumpfile.Record{}
	for _, rec := range recs {
		got[rec.Properties.MessageID] = rec
	}
	for _, h := range msgs {
		rec, ok := got[h.Msg.MessageId]
		if h.Name == "bad-utf8" {
			if ok {
				t.Errorf("dump kept a routing key that is not UTF-8: %q", rec.RoutingKey)
			}
			continue
		}
		if !ok {
			t.Errorf("dump lacks %s", h.Name)
			continue
		}
		if !bytes.Equal(rec.Body, h.Msg.Body) {
			t.Errorf("%s: body changed in the dump (%d bytes, want %d)", h.Name, len(rec.Body), len(h.Msg.Body))
		}
		if rec.RoutingKey != h.RoutingKey {
			t.Errorf("%s: routing key %q, want %q", h.Name, rec.RoutingKey, h.RoutingKey)
		}
		if len(rec.Headers) != len(h.Msg.Headers) {
			t.Errorf("%s: %d headers, want %d", h.Name, len(rec.Headers), len(h.Msg.Headers))
		}
	}
	if depthOf(t, r, q) != len(msgs) {
		t.Errorf("peek or dump removed messages")
	}
}

// 10,000 headers and tables nested 100 deep: RabbitMQ delivers them, the
// AMQP client refuses to parse them and drops the connection. peek shows
// the messages before, says where and why it stopped, and exits partial;
// dump writes what it read and exits partial; nothing is lost.
func TestUnreadableMessagesStopPeekAndDumpClearly(t *testing.T) {
	r := brokerEnv(t)
	for _, h := range brokertest.UnreadableMessages() {
		t.Run(h.Name, func(t *testing.T) {
			q := brokertest.Name(t, "unreadable")
			ok := brokertest.Hostile{Name: "ok", RoutingKey: "ok", Msg: amqp.Publishing{MessageId: "first", Body: []byte("ok")}}
			brokertest.PublishHostile(t, r, q, []brokertest.Hostile{ok, h, ok})
			code, out, errOut := runLadder(t, "peek", q)
			terminalSafe(t, "peek", out+errOut)
			if code != exitPartial || !strings.Contains(errOut, "stopped after") || !strings.Contains(errOut, "could not read") || strings.Count(errOut, "\n") != 1 {
				t.Fatalf("peek: exit %d, want %d with one line saying where it stopped: %q", code, exitPartial, errOut)
			}
			if !strings.Contains(out, "stopped after") {
				t.Errorf("peek table does not say it stopped:\n%s", out)
			}
			// A dropped connection's messages return in the broker's own
			// time (4.x): each read starts from all three.
			waitDepth(t, r, q, 3)
			code, out, errOut = runLadder(t, "peek", q, "-o", "json")
			terminalSafe(t, "peek -o json", out+errOut)
			var res broker.PeekResult
			if err := json.Unmarshal([]byte(out), &res); err != nil || code != exitPartial || !strings.Contains(res.Incomplete, "stopped after") || len(res.Messages) > 1 || len(res.Messages) == 1 && res.Messages[0].Properties.MessageID != "first" {
				t.Fatalf("peek -o json: exit %d, %v, incomplete %q, %d messages; stderr %q", code, err, res.Incomplete, len(res.Messages), errOut)
			}
			waitDepth(t, r, q, 3)
			code, out, errOut = runLadder(t, "dump", q, "--out", "-")
			terminalSafe(t, "dump", out+errOut)
			if code != exitPartial || strings.Count(out, "\n") > 2 || !strings.Contains(errOut, "stopped after") || strings.Contains(errOut, "moved") {
				t.Fatalf("dump: exit %d, %d lines: %s", code, strings.Count(out, "\n"), errOut)
			}
			waitDepth(t, r, q, 3) // nothing lost: all three back
		})
	}
}

// A 255-byte queue name of emoji (RabbitMQ's longest) holding a hostile
// message: peek, dump to standard output and topology handle it.
func TestEmojiQueueName(t *testing.T) {
	r := brokerEnv(t)
	q := brokertest.EmojiQueueName()
	if len(q) != 255 || !utf8.ValidString(q) {
		t.Fatalf("name of %d bytes", len(q))
	}
	brokertest.PublishHostile(t, r, q, brokertest.HostileMessages(0)[:1])
	code, out, errOut := runLadder(t, "peek", q)
	terminalSafe(t, "peek", out+errOut)
	if code != exitOK || !strings.Contains(out, q) {
		t.Fatalf("peek: exit %d %s\n%s", code, errOut, out)
	}
	code, out, errOut = runLadder(t, "peek", q, "-o", "json")
	terminalSafe(t, "peek -o json", out+errOut)
	var res broker.PeekResult
	if err := json.Unmarshal([]byte(out), &res); code != exitOK || err != nil || res.Queue != q || len(res.Messages) != 1 {
		t.Fatalf("peek -o json: exit %d %v %q", code, err, errOut)
	}
	code, out, errOut = runLadder(t, "dump", q, "--out", "-", "--body", "text")
	terminalSafe(t, "dump", out+errOut)
	if code != exitOK || strings.Count(out, "\n") != 2 || !strings.Contains(out, `\u009b31m`) {
		t.Fatalf("dump: exit %d %s\n%s", code, errOut, out)
	}
	code, _, errOut = runLadder(t, "peek", q+"x")
	terminalSafe(t, "peek of a name too long", errOut)
	if code == exitOK {
		t.Fatal("peek of a 256-byte name succeeded")
	}
}
