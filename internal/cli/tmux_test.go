package cli

import (
	"context"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker/brokertest"
)

// colour matches SGR colour parameters (default-colour resets 39/49 are fine).
var colour = regexp.MustCompile(`\x1b\[[0-9;]*?(3[0-8]|4[0-8]|9[0-7]|10[0-7])(;[0-9;]*)?m`)

// tmuxSession runs the real binary in a detached tmux pane of w×h cells.
type tmuxSession struct {
	t    *testing.T
	name string
}

func newTmux(t *testing.T, w, h string, env []string, args ...string) *tmuxSession {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed: apt-get install tmux")
	}
	bin := ladderBinary(t)
	s := &tmuxSession{t: t, name: strings.NewReplacer("/", "-", ".", "-").Replace(brokertest.Name(t, ""))}
	// A pane's command runs in the tmux server's environment, which is
	// the environment of the test that started the server (a test's
	// t.Setenv of LADDER_VHOST, say, while another test's pane ran): the
	// binary gets only PATH, HOME and the pane's TERM, and env.
	cmdline := `env -i PATH="$PATH" HOME="$HOME" TERM="$TERM" ` + strings.Join(env, " ") + " " + bin + " " + strings.Join(args, " ") + "; sleep 30"
	cmd := exec.Command("tmux", "new-session", "-d", "-s", s.name, "-x", w, "-y", h, cmdline)
	cmd.Env = append(os.Environ(), "TERM=xterm-256color")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tmux: %v %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("tmux", "kill-session", "-t", s.name).Run() })
	return s
}

func (s *tmuxSession) keys(keys ...string) {
	s.t.Helper()
	args := append([]string{"send-keys", "-t", s.name}, keys...)
	if out, err := exec.Command("tmux", args...).CombinedOutput(); err != nil {
		s.t.Fatalf("send-keys: %v %s", err, out)
	}
}

func (s *tmuxSession) screen() string {
	out, err := exec.Command("tmux", "capture-pane", "-p", "-e", "-t", s.name).Output()
	if err != nil {
		s.t.Fatalf("capture-pane: %v", err)
	}
	return string(out)
}

// waitFor polls the screen until it shows every text, or fails showing it.
func (s *tmuxSession) waitFor(texts ...string) string {
	s.t.Helper()
	return s.waitWithin(20*time.Second, func(scr string) string { return scr }, texts...)
}

// waitWithin polls the screen, as seen through view, until it shows every
// text, or fails showing it after d.
func (s *tmuxSession) waitWithin(d time.Duration, view func(string) string, texts ...string) string {
	s.t.Helper()
	deadline := time.Now().Add(d)
	for {
		scr := view(s.screen())
		ok := true
		for _, x := range texts {
			ok = ok && strings.Contains(scr, x)
		}
		if ok {
			return scr
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("pane %s never showed %q in %v:\n%s", s.name, texts, d, scr)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// The real binary, in tmux at 80×24 with NO_COLOR, against the real broker:
// a ladder shows on the home screen, its DLQ opens in the browser with the
// peek's side effects, a message opens in the inspector, q quits.
func TestTUIInTmuxAgainstRealBroker(t *testing.T) {
	r := vhostEnv(t)
	p := brokertest.Name(t, "")
	conn, err := r.DialAMQP(context.Background(), "test tui")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, _ := conn.Channel()
	main, dlq, wait := p+".main", p+".dlq", p+".wait"
	for _, q := range []struct {
		name string
		args amqp.Table
	}{
		{dlq, nil},
		{main, amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": dlq}},
		{wait, amqp.Table{"x-message-ttl": int32(60000), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": main}},
	} {
		if _, err := ch.QueueDeclare(q.name, false, true, false, false, q.args); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		c, err := r.DialAMQP(context.Background(), "test cleanup")
		if err == nil {
			defer c.Close()
			cc, _ := c.Channel()
			for _, q := range []string{main, dlq, wait} {
				_, _ = cc.QueueDelete(q, false, false, false)
			}
		}
	})
	if err := ch.PublishWithContext(context.Background(), "", dlq, false, false, amqp.Publishing{
		MessageId: "tmux-msg-1", Body: []byte(`{"order":1}`), ContentType: "application/json",
		Headers: amqp.Table{"x-retry-count": int16(4), "x-last-error": "boom\x1b]0;pwned\x07"},
	}); err != nil {
		t.Fatal(err)
	}
	env := []string{"NO_COLOR=1", "LADDER_AMQP_URL=" + brokertest.Config().AMQPURL, "LADDER_API_URL=" + brokertest.Config().APIURL, "LADDER_VHOST=" + r.Vhost}
	s := newTmux(t, "80", "24", env, "--refresh", "1s", "--read-only")
	scr := s.waitFor(main, "├─"+p[:10])
	if colour.MatchString(scr) {
		t.Errorf("NO_COLOR screen has colour escapes:\n%q", scr)
	}
	if strings.Contains(scr, "move/re-publish") {
		t.Errorf("--read-only still offers move:\n%s", scr)
	}
	s.keys("/")
	s.keys(strings.Split(strings.TrimPrefix(dlq, "ladder-test."), "")...)
	// The filter keeps the matching ladder whole; its DLQ is the last row.
	s.keys("Enter", "G", "Enter")
	s.waitFor("tmux-msg-1", "redelivered")
	s.keys("Enter")
	scr = s.waitFor("Retry", "x-retry-count", "short (int16)")
	if !strings.Contains(scr, `boom\x1b]0;pwned\x07`) {
		t.Errorf("the hostile header was not shown as visible text:\n%s", scr)
	}
	if strings.Contains(scr, "\x07") || strings.Contains(scr, "\x1b]0") {
		t.Errorf("a terminal escape from the broker reached the screen")
	}
	s.keys("q")
	s.waitFor("") // still alive until the shell's sleep
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if !strings.Contains(s.screen(), "ladder ·") {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Errorf("q did not quit:\n%s", s.screen())
}

func TestColourPattern(t *testing.T) {
	for s, want := range map[string]bool{"\x1b[31m": true, "\x1b[1;38;5;4m": true, "\x1b[44m": true, "\x1b[39m\x1b[49m": false, "\x1b[1m\x1b[0m\x1b[7m": false} {
		if colour.MatchString(s) != want {
			t.Errorf("%q: %v", s, !want)
		}
	}
}
