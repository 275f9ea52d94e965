package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/broker/sim"
	"github.com/ladder-tui/ladder/broker/usecase"
	"github.com/ladder-tui/ladder/internal/termtext"
)

// causesSim is a quiet simulation whose DLQ holds n dead letters of 3
// causes, each text with its own ids and values.
func causesSim(t *testing.T, n int) *sim.Sim {
	t.Helper()
	s := sim.New(sim.Options{Quiet: true})
	t.Cleanup(func() { s.Close() })
	if err := brokertest.PublishCauses(context.Background(), s, sim.OrdersDLQ, brokertest.CauseMessages(n, 5, s.Now())); err != nil {
		t.Fatal(err)
	}
	return s
}

// peek --group-by error groups the whole queue, not the first -n: 5,000
// messages of 3 causes are 3 groups, and the JSON says it covered 5,000
// of 5,000; the messages listed are still the first 20.
func TestPeekGroupByErrorGroupsTheWholeQueue(t *testing.T) {
	s := causesSim(t, 5000)
	code, out, errOut := runOnSim(t, s, "peek", sim.OrdersDLQ, "--group-by", "error", "-o", "json")
	var res usecase.GroupedPeek
	if code != exitOK || json.Unmarshal([]byte(out), &res) != nil {
		t.Fatalf("exit %d %s", code, errOut)
	}
	g := res.Grouping
	if len(res.Groups) != 3 || g == nil || g.Grouped != 5000 || g.Of != 5000 || g.Capped || len(res.Messages) != 20 {
		t.Fatalf("%d groups, grouping %+v, %d messages", len(res.Groups), g, len(res.Messages))
	}
	for _, gr := range res.Groups {
		if gr.Type == "" || gr.Sample == "" || len(gr.Positions) != gr.Count {
			t.Errorf("group %q: type %q, sample %q, %d positions of %d", gr.Key, gr.Type, gr.Sample, len(gr.Positions), gr.Count)
		}
	}
	// The keys' JSON names stay (docs/json.md's contract), sample and type added.
	for _, field := range []string{`"key"`, `"count"`, `"first_seen"`, `"last_seen"`, `"positions"`, `"sample_ids"`, `"sample"`, `"type"`, `"grouping"`, `"grouped": 5000`, `"of": 5000`} {
		if !strings.Contains(out, field) {
			t.Errorf("JSON lacks %s", field)
		}
	}
	// error-text keeps the exact texts: about one group a message.
	code, out, _ = runOnSim(t, s, "peek", sim.OrdersDLQ, "--group-by", "error-text", "-o", "json")
	if json.Unmarshal([]byte(out), &res) != nil || code != exitOK || len(res.Groups) < 4900 {
		t.Fatalf("error-text: exit %d, %d groups", code, len(res.Groups))
	}
	// -n bounds the scan, and the text says how much it covered.
	code, out, _ = runOnSim(t, s, "peek", sim.OrdersDLQ, "--group-by", "error", "-n", "1000")
	if code != exitOK || !strings.Contains(out, "grouped 1000 of 5000 ready messages by error · partial: the first 1000 of 5000, as -n asked") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

// At 80 columns every line fits, and two causes of one exception type read
// differently: the type's name and both ends of the message stay.
func TestRenderGroupsAt80Columns(t *testing.T) {
	at := time.Date(2025, 3, 14, 4, 0, 0, 0, time.UTC)
	const typ = "org.springframework.web.client.ResourceAccessException"
	res := &usecase.GroupedPeek{PeekResult: &broker.PeekResult{Queue: "payments.dlq", Type: "classic", Total: 5000, Ready: 5000, PeekedAt: at},
		Grouping: &usecase.GroupCoverage{By: "error", Grouped: 5000, LookedAt: 5000, Of: 5000, Bound: usecase.DefaultDumpLimit},
		Groups: []usecase.Group{
			{Key: typ + `: I/O error on POST request for "…": Connect timed out; nested exception is java.net.SocketTimeoutException: Connect timed out`, Count: 2900, Type: typ,
				FirstSeen: at.Add(-2 * time.Hour), LastSeen: at.Add(-3 * time.Minute), SampleIDs: []string{"msg-1"},
				Sample: `I/O error on POST request for "http://payments-7f9c:8080/v1/charges/ORD-2025-000017": Connect timed out; nested exception is java.net.SocketTimeoutException: Connect timed out`},
			{Key: typ + `: I/O error on POST request for "…": Connection refused; nested exception is java.net.ConnectException: Connection refused`, Count: 2100, Type: typ,
				FirstSeen: at.Add(-time.Hour), LastSeen: at.Add(-time.Minute), SampleIDs: []string{"msg-2"}, Sample: "I/O error on POST request for \"http://x\": Connection refused\x1b[2J"},
		}}
	out := renderPeek(res, 80)
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	var rows []string
	for _, l := range lines {
		if termtext.Width(l) > 80 {
			t.Errorf("line of %d cells: %q", termtext.Width(l), l)
		}
		if strings.Contains(l, "ResourceAccessException:") && !strings.Contains(l, "e.g.") {
			rows = append(rows, l)
		}
	}
	if len(rows) != 2 || rows[0][20:] == rows[1][20:] || !strings.Contains(out, "grouped 5000 of 5000 ready messages by error · the whole queue\n") {
		t.Fatalf("rows %q in:\n%s", rows, out)
	}
	if strings.Contains(out, "\x1b") || !strings.Contains(out, `e.g. I/O error on POST request fo…n refused\x1b[2J`) || !strings.Contains(renderPeek(res, 0), "e.g. msg-2: I/O error") {
		t.Fatalf("samples:\n%s", out)
	}
	// Piped (no width), keys and samples are whole.
	if out := renderPeek(res, 0); !strings.Contains(out, res.Groups[0].Key) || !strings.Contains(out, res.Groups[0].Sample) {
		t.Fatalf("a piped key or sample was cut:\n%s", out)
	}
}
