package cli

import (
	"context"
	"encoding/json"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/broker/rabbit"
	"github.com/ladder-tui/ladder/internal/present"
)

// findingsLadders declares, in r's vhost, queues with findings of several
// kinds that stay as they are: a dead-letter route to nowhere
// (unroutable-dead-letter), a TTL-less retry loop (stuck, said as a risk),
// a wait queue with no TTL fed by publishers (hol-risk), mains without a
// DLQ (no-dlq), and messages nobody consumes (no-consumers).
func findingsLadders(t *testing.T, r *rabbit.Resolved) {
	t.Helper()
	ch := brokertest.Channel(t, r, "test findings fixture")
	dl := func(to string) amqp.Table {
		return amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": to}
	}
	for _, q := range []struct {
		name string
		args amqp.Table
	}{
		{"lost", amqp.Table{"x-dead-letter-exchange": "nowhere"}},
		{"billing", dl("billing.retry")},
		{"billing.retry", dl("billing")},
		{"jobs", nil},
		{"jobs.delay", dl("jobs")},
	} {
		if _, err := ch.QueueDeclare(q.name, true, false, false, false, q.args); err != nil {
			t.Fatal(err)
		}
	}
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"lost": 0, "billing": 1, "billing.retry": 0, "jobs": 1, "jobs.delay": 0}
	for _, q := range []string{"jobs", "billing"} {
		dc, err := ch.PublishWithDeferredConfirmWithContext(context.Background(), "", q, false, false, amqp.Publishing{Body: []byte("work")})
		if err != nil {
			t.Fatal(err)
		}
		if !dc.Wait() {
			t.Fatal("publish not confirmed")
		}
	}
	// Until the management API shows the depths, every publish counted
	// and no rate: then every face reads the same.
	eventually(t, screenWait, "the fixture's depths without rates", func() bool {
		ok, _ := queuesQuiet(r, want)
		return ok
	}, func() string { _, seen := queuesQuiet(r, want); return seen })
}

// findingsView is the findings screen's title count and its findings'
// head lines, as drawn (the selection marker left out).
var findingsTitle = regexp.MustCompile(`Findings \((\d+)\)`)

func findingHeads(screen string) []string {
	var heads []string
	for _, l := range strings.Split(ansi.Strip(screen), "\n") {
		l = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "▸"))
		for _, g := range []string{"✖ ", "▲ ", "ℹ "} {
			if strings.HasPrefix(l, g) && strings.Contains(l, " · ") {
				heads = append(heads, l)
			}
		}
	}
	slices.Sort(heads)
	return heads
}

// One analysis, every face (issue 32): the local TUI, a ladder serve
// session over ssh and topology -o json show the same findings for the
// same vhost — the same count, the same severity, code and queue each.
func TestFindingsAreTheSameInTheTUIServeAndTopology(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed: apt-get install tmux")
	}
	if _, err := exec.LookPath("ssh"); err != nil {
		t.Skip("no ssh client: apt-get install openssh-client")
	}
	r := vhostEnv(t)
	findingsLadders(t, r)
	sv := startServeSSH(t, r)
	t.Cleanup(func() {
		_ = sv.cmd.Process.Kill()
		<-sv.exited
	})

	code, out, errOut := runLadder(t, "topology", "-o", "json")
	if code != exitOK {
		t.Fatalf("topology: exit %d %s", code, errOut)
	}
	var rep present.TopologyReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	codes := map[string]bool{}
	for _, f := range rep.Findings {
		codes[f.Code] = true
	}
	for _, c := range []string{"unroutable-dead-letter", "stuck", "hol-risk", "no-dlq", "no-consumers"} {
		if !codes[c] {
			t.Fatalf("the fixture's topology lacks %s: %+v", c, rep.Findings)
		}
	}

	local := newTmux(t, "200", "50", sv.env, sv.common("local-audit.jsonl")...)
	remote := newTmuxShell(t, 200, 50, "ssh", sv.sshCmd("ssh"))
	for _, s := range []*tmuxSession{local, remote} {
		s.waitLong("jobs.delay", "q quit")
		s.keys("f")
		s.waitLong("Findings (")
	}
	want := strconv.Itoa(len(rep.Findings))
	for name, s := range map[string]*tmuxSession{"local TUI": local, "serve session": remote} {
		scr := s.waitLong("Findings (" + want + ")")
		heads := findingHeads(scr)
		if len(heads) != len(rep.Findings) {
			t.Errorf("%s shows %d findings' heads, topology %d:\n%s", name, len(heads), len(rep.Findings), ansi.Strip(scr))
		}
		for _, f := range rep.Findings {
			if !slices.ContainsFunc(heads, func(h string) bool { return strings.HasSuffix(h, " · "+f.Queue) && headSays(h, string(f.Severity)) }) {
				t.Errorf("%s does not show %s %s on %s:\n%s", name, f.Severity, f.Code, f.Queue, strings.Join(heads, "\n"))
			}
		}
	}
	if l, rm := findingHeads(local.screen()), findingHeads(remote.screen()); !slices.Equal(l, rm) {
		t.Errorf("the local TUI and the serve session differ:\n%q\n%q", l, rm)
	}
	if m := findingsTitle.FindStringSubmatch(ansi.Strip(local.screen())); m == nil || m[1] != want {
		t.Errorf("local findings title %v, topology has %s", m, want)
	}
}

// headSays: the head's glyph is the severity's.
func headSays(head, sev string) bool {
	switch sev {
	case "error":
		return strings.HasPrefix(head, "✖")
	case "warning":
		return strings.HasPrefix(head, "▲")
	}
	return strings.HasPrefix(head, "ℹ")
}
