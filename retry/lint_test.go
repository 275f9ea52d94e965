package retry

import (
	"strings"
	"testing"
)

func lintVhost() *Vhost {
	return &Vhost{
		Name: "/",
		Exchanges: []Exchange{
			{Name: "delayed", Type: ExchangeDelayed, Arguments: map[string]any{"x-delayed-type": "direct"}},
			{Name: "plain", Type: ExchangeDirect},
		},
		Queues: []Queue{
			{Name: "lazy", Type: QueueClassic, Arguments: map[string]any{"x-queue-mode": "lazy"}},
			{Name: "lazy-by-policy", Type: QueueClassic, Policy: map[string]any{"queue-mode": "lazy"}},
			{Name: "v1", Type: QueueClassic, Arguments: map[string]any{"x-queue-version": int32(1)}},
			{Name: "v2", Type: QueueClassic, Arguments: map[string]any{"x-queue-version": int32(2)}},
			{Name: "mirrored", Type: QueueClassic, Policy: map[string]any{"ha-mode": "all"}},
			{Name: "qq", Type: QueueQuorum},
			{Name: "qq-dlx", Type: QueueQuorum, Arguments: map[string]any{"x-dead-letter-exchange": "plain"}},
			{Name: "temp", Type: QueueClassic, Transient: true},
			{Name: "fine", Type: QueueClassic},
		},
	}
}

// Each upgrade hazard is found exactly where it is, for the versions it
// concerns.
func TestLintFindsWhatBreaksOnUpgrade(t *testing.T) {
	got := func(target string) string {
		fs, err := Lint(lintVhost(), target)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, f := range fs {
			out = append(out, string(f.Severity)+" "+f.Code+" "+f.Queue+f.Exchange)
		}
		return strings.Join(out, "\n")
	}
	want43 := strings.Join([]string{
		"error queue-mode lazy", "error queue-mode lazy-by-policy", "error queue-version-1 v1",
		"error classic-mirroring mirrored", "error delayed-exchange-plugin delayed",
		"warning quorum-no-dead-letter qq", "warning transient-queue temp",
	}, "\n")
	if g := got("4.3"); g != want43 {
		t.Errorf("4.3:\n%s\nwant\n%s", g, want43)
	}
	want40 := strings.Join([]string{
		"error classic-mirroring mirrored", "warning quorum-no-dead-letter qq", "warning delayed-exchange-plugin delayed",
	}, "\n")
	if g := got("4.0"); g != want40 {
		t.Errorf("4.0:\n%s\nwant\n%s", g, want40)
	}
	if _, err := Lint(lintVhost(), "5"); err == nil || !strings.Contains(err.Error(), `--for "5"`) {
		t.Errorf("bad target: %v", err)
	}
}
