package conformance

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker/brokertest"
)

// A framework nobody here has met (testdata/unknown/republish.py, an
// application's own retry code on Debian's python3-pika) keeps its count
// and error in headers of its own naming, or in the JSON body. ladder
// reads them by what their names say, and says how it knows: guessed,
// from which header or body field. A move chosen by the guessed count says
// so in its plan.
func TestUnknownFrameworkCountAndErrorAreGuessedAndSaid(t *testing.T) {
	t.Parallel()
	python := requireLibrary(t, "pika for Python 3 (Debian's python3-pika)", func(bin string) *exec.Cmd {
		return exec.Command(bin, "-c", "import pika")
	}, "/usr/bin/python3", "python3")
	r := brokertest.OwnVhost(t)
	const (
		queue    = "invoices"
		grave    = queue + "-graveyard"
		n        = 3
		attempts = 3
	)
	runScript(t, testdata(t, "unknown"), []string{
		"CONFORMANCE_URL=" + scriptURL(t, r), "CONFORMANCE_QUEUE=" + queue,
		fmt.Sprint("CONFORMANCE_COUNT=", n), fmt.Sprint("CONFORMANCE_ATTEMPTS=", attempts),
	}, python, "republish.py")
	ch := brokertest.Channel(t, r, "conformance test")
	waitDepth(t, ch, grave, 2*n, 30*time.Second)

	var pk struct {
		Messages []peekMessage `json:"messages"`
	}
	ladderJSON(t, r, &pk, "peek", grave, "-n", fmt.Sprint(2*n))
	if len(pk.Messages) != 2*n {
		t.Fatalf("peek %s shows %d messages, want %d", grave, len(pk.Messages), 2*n)
	}
	for _, m := range pk.Messages {
		id, rs := m.Properties.MessageID, m.Retry
		var want struct{ source, label, errSource string }
		var fields []string
		switch {
		case strings.Contains(id, "-h-"):
			want.source, want.label, want.errSource = "x-attempts", "header x-attempts (guessed: attempts made, less the first)", "x-error"
			fields = []string{"count", "error", "error_type", "error_time"}
			if rs.ErrorType != "PaymentTimeout" {
				t.Errorf("%s: error type %q, want PaymentTimeout from x-error-class", id, rs.ErrorType)
			}
		case strings.Contains(id, "-b-"):
			want.source, want.label, want.errSource = "body meta.retryCount", "body meta.retryCount (guessed)", "body meta.lastError"
			fields = []string{"count", "error"}
		default:
			t.Errorf("unexpected message %q", id)
			continue
		}
		if rs.Count != attempts-1 || rs.Source != want.source || rs.CountSource != want.label {
			t.Errorf("%s: count %d from %q (%q), want %d from %q (%q)", id, rs.Count, rs.Source, rs.CountSource, attempts-1, want.source, want.label)
		}
		if !strings.HasPrefix(rs.LastError, "payment service unavailable") || m.Retry.ErrorSource != want.errSource {
			t.Errorf("%s: last error %q from %q, want the handler's from %s", id, rs.LastError, m.Retry.ErrorSource, want.errSource)
		}
		for _, f := range fields {
			if !slices.Contains(rs.Guessed, f) {
				t.Errorf("%s: guessed %v lacks %s", id, rs.Guessed, f)
			}
		}
		if rs.Framework != "" {
			t.Errorf("%s: framework %q: a guess names none", id, rs.Framework)
		}
	}

	// The text face says it too.
	code, out, errOut := runLadder(t, r, "peek", grave, "-n", fmt.Sprint(2*n))
	if code != 0 || !strings.Contains(out, "(x-attempts, guessed)") || !strings.Contains(out, "(body meta.retryCount, guessed)") {
		t.Errorf("peek text: exit %d, want each count's source marked guessed\n%s%s", code, out, errOut)
	}

	// A move chosen by the guessed count says so, per message, before it
	// runs; and then moves exactly those.
	var plan struct {
		Planned []struct {
			MessageID string `json:"message_id"`
			Note      string `json:"note"`
			Skip      string `json:"skip"`
		} `json:"planned"`
	}
	code, raw, errOut := runLadder(t, r, "move", "--from", grave, "--to", "queue:"+queue, "--where", fmt.Sprint("retries>=", attempts-1), "--dry-run", "-o", "json")
	if code != 0 {
		t.Fatalf("move --dry-run: exit %d: %s", code, errOut)
	}
	if err := json.Unmarshal([]byte(raw), &plan); err != nil {
		t.Fatalf("move --dry-run -o json: %v\n%s", err, tail(raw, 2000))
	}
	chosen := 0
	for _, rt := range plan.Planned {
		if rt.Skip != "" {
			continue
		}
		chosen++
		if !strings.Contains(rt.Note, "chosen by --where on count") || !strings.Contains(rt.Note, "(guessed") {
			t.Errorf("%s: note %q does not say the count it was chosen by was guessed", rt.MessageID, rt.Note)
		}
	}
	if chosen != 2*n {
		t.Errorf("the plan chose %d of %d: %s", chosen, 2*n, raw)
	}
	if code, out, errOut := runLadder(t, r, "move", "--from", grave, "--to", "queue:"+queue, "--where", fmt.Sprint("retries>=", attempts-1), "--yes"); code != 0 {
		t.Fatalf("move: exit %d\n%s%s", code, out, errOut)
	}
	waitDepth(t, ch, queue, 2*n, 30*time.Second)
	waitDepth(t, ch, grave, 0, 30*time.Second)
}
