package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker/brokertest"
)

// A team teaches ladder its own convention in the config file: its count
// (an attempt number in a header), its error (in the JSON body), the queue
// a message failed in (a header) and its error queue's naming. ladder
// lists it, links the error queue to its work queue by that naming alone,
// reads each message by it (saying so), and moves every message back to
// the queue it failed in, by id.
func TestDeclaredConventionReadsAndMovesByIt(t *testing.T) {
	r := vhostEnv(t)
	cfg := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(cfg, []byte(`
[conventions.acme]
marks            = ["x-acme-tries"]
count            = "header:x-acme-tries"
count-is-attempt = true
error            = "body:meta.lastError"
origin-queue     = "header:x-acme-queue"
error-queues     = ["{queue}.graveyard"]
`), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runLadder(t, "--config", cfg, "conventions", "-o", "json")
	var list struct {
		Conventions []struct{ Name, From string } `json:"conventions"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil || len(list.Conventions) == 0 ||
		list.Conventions[0].Name != "acme" || list.Conventions[0].From != "config file "+cfg {
		t.Fatalf("conventions: exit %d, want acme first, from %s\n%s%s", code, cfg, out, errOut)
	}

	ch := brokertest.Channel(t, r, "test conventions")
	const work, grave, n = "billing", "billing.graveyard", 4
	for _, q := range []string{work, grave, "audit"} {
		if _, err := ch.QueueDeclare(q, true, false, false, false, nil); err != nil {
			t.Fatal(err)
		}
	}
	var ids []string
	for i := range n {
		id := fmt.Sprint("acme-", i)
		ids = append(ids, id)
		body := fmt.Sprintf(`{"invoice":%d,"meta":{"lastError":"card declined (%d)"}}`, i, i)
		if err := ch.Publish("", grave, false, false, amqp.Publishing{MessageId: id, ContentType: "application/json", Body: []byte(body),
			Headers: amqp.Table{"x-acme-tries": int32(3), "x-acme-queue": work}}); err != nil {
			t.Fatal(err)
		}
	}
	waitDepth(t, r, grave, n)

	// The naming alone links the graveyard to billing's ladder.
	code, out, errOut = runLadder(t, "--config", cfg, "topology", "-o", "json")
	if code != 0 {
		t.Fatalf("topology: exit %d\n%s", code, errOut)
	}
	if !ladderHasErrorQueue(t, out, work, grave) {
		t.Errorf("topology does not make %s %s's error queue by acme's naming:\n%s", grave, work, out)
	}
	// Without the file, it is not.
	if _, plain, _ := runLadder(t, "topology", "-o", "json"); ladderHasErrorQueue(t, plain, work, grave) {
		t.Errorf("topology links %s without the convention: the test proves nothing", grave)
	}

	code, out, errOut = runLadder(t, "--config", cfg, "peek", grave, "-o", "json")
	if code != 0 {
		t.Fatalf("peek: exit %d\n%s", code, errOut)
	}
	var pk struct {
		Messages []struct {
			Properties struct {
				MessageID string `json:"message_id"`
			} `json:"properties"`
			Retry struct {
				Count       int64    `json:"count"`
				CountSource string   `json:"count_source"`
				Framework   string   `json:"framework"`
				LastError   string   `json:"last_error"`
				ErrorSource string   `json:"error_source"`
				FailedQueue string   `json:"failed_queue"`
				Guessed     []string `json:"guessed"`
			} `json:"retry"`
		} `json:"messages"`
	}
	if err := json.Unmarshal([]byte(out), &pk); err != nil || len(pk.Messages) != n {
		t.Fatalf("peek: %v, %d messages\n%s", err, len(pk.Messages), out)
	}
	for _, m := range pk.Messages {
		rs := m.Retry
		if rs.Count != 2 || rs.CountSource != "header x-acme-tries (acme)" || rs.Framework != "acme" || len(rs.Guessed) != 0 {
			t.Errorf("%s: count %d (%q), framework %q, guessed %v; want 2 by acme's x-acme-tries", m.Properties.MessageID, rs.Count, rs.CountSource, rs.Framework, rs.Guessed)
		}
		if !strings.HasPrefix(rs.LastError, "card declined") || rs.ErrorSource != "body meta.lastError" || rs.FailedQueue != work {
			t.Errorf("%s: error %q from %q, failed in %q", m.Properties.MessageID, rs.LastError, rs.ErrorSource, rs.FailedQueue)
		}
	}

	if code, out, errOut := runLadder(t, "--config", cfg, "move", "--from", grave, "--to", "origin", "--yes"); code != 0 {
		t.Fatalf("move --to origin: exit %d\n%s%s", code, out, errOut)
	}
	waitDepth(t, r, work, n)
	seen := map[string]int{}
	drainIDs(t, ch, work, seen)
	for _, id := range ids {
		if seen[id] != 1 {
			t.Errorf("%s is in %s %d times, want once", id, work, seen[id])
		}
	}
	for _, q := range []string{grave, "audit"} {
		if d := depthOf(t, r, q); d != 0 {
			t.Errorf("%s holds %d after the move, want 0", q, d)
		}
	}
}

// ladderHasErrorQueue says whether topology JSON out has a ladder of main
// whose DLQ or error queues include q.
func ladderHasErrorQueue(t *testing.T, out, main, q string) bool {
	t.Helper()
	var top struct {
		Ladders []struct {
			Main struct {
				Name string `json:"name"`
			} `json:"main"`
			DLQ *struct {
				Name string `json:"name"`
			} `json:"dlq"`
			ErrorQueues []struct {
				Name string `json:"name"`
			} `json:"error_queues"`
		} `json:"ladders"`
	}
	if err := json.Unmarshal([]byte(out), &top); err != nil {
		t.Fatalf("topology -o json: %v\n%s", err, out)
	}
	for _, l := range top.Ladders {
		if l.Main.Name != main {
			continue
		}
		if l.DLQ != nil && l.DLQ.Name == q || slices.ContainsFunc(l.ErrorQueues, func(e struct {
			Name string `json:"name"`
		}) bool {
			return e.Name == q
		}) {
			return true
		}
	}
	return false
}
