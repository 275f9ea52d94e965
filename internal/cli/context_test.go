package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/rabbit"
	"github.com/ladder-tui/ladder/broker/sim"
)

// The config file of these tests: staging (password from a variable) and
// prod (read-only, password from a file, its own audit log).
func contextsFile(t *testing.T) (cfg, pwFile, auditLog string) {
	t.Helper()
	dir := t.TempDir()
	pwFile = filepath.Join(dir, "prod.password")
	if err := os.WriteFile(pwFile, []byte("pr0d-s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	auditLog = filepath.Join(dir, "staging-audit.jsonl")
	cfg = filepath.Join(dir, "config.toml")
	body := `current-context = "staging"

[contexts.staging]
amqp-url = "amqp://ops@rabbit.staging:5672/"
vhost = "orders"
password-env = "LADDER_TEST_STAGING_PW"
audit-log = "staging-audit.jsonl"

[contexts.prod]
amqp-url = "amqps://ops@rabbit.prod:5671/"
api-url = "https://rabbit.prod:15671"
vhost = "billing"
read-only = true
password-file = "prod.password"
`
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return cfg, pwFile, auditLog
}

// runContexts runs ladder on the simulation and returns the configuration
// the command asked a client for (zero when it asked for none).
func runContexts(t *testing.T, s *sim.Sim, args ...string) (code int, stdout, stderr string, got rabbit.Config) {
	t.Helper()
	var out, errb bytes.Buffer
	connect := func(cfg rabbit.Config, _ string) (broker.Client, func(), error) {
		got = cfg
		return s, func() {}, nil
	}
	code = run(args, strings.NewReader(""), &out, &errb, Build{Version: "dev"}, connect)
	return code, out.String(), errb.String(), got
}

func clearLadderEnv(t *testing.T) {
	for _, e := range globalEnv {
		t.Setenv(e.env, "")
	}
	t.Setenv("LADDER_TEST_STAGING_PW", "")
}

// cfgPassword is the password cfg gives a connection now ("" for none).
func cfgPassword(t *testing.T, cfg rabbit.Config) string {
	t.Helper()
	if cfg.Secret == nil {
		return cfg.Password
	}
	_, pw, err := cfg.Secret.Credentials(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return pw
}

func TestContextFillsWhatFlagsAndEnvironmentLeave(t *testing.T) {
	clearLadderEnv(t)
	cfg, _, _ := contextsFile(t)
	s := newSim(t)

	// prod by --context: its URLs, vhost, read-only and password file.
	code, _, errOut, got := runContexts(t, s, "--config", cfg, "--context", "prod", "topology")
	if code != exitOK {
		t.Fatalf("--context prod topology: exit %d %s", code, errOut)
	}
	if got.AMQPURL != "amqps://ops@rabbit.prod:5671/" || got.APIURL != "https://rabbit.prod:15671" || got.Vhost != "billing" ||
		!got.ReadOnly || cfgPassword(t, got) != "pr0d-s3cret" {
		t.Errorf("prod's configuration: %+v", got)
	}
	// The current context without --context; LADDER_CONTEXT picks too.
	t.Setenv("LADDER_TEST_STAGING_PW", "st4ging-s3cret")
	if _, _, errOut, got = runContexts(t, s, "--config", cfg, "topology"); got.Vhost != "orders" || cfgPassword(t, got) != "st4ging-s3cret" || got.ReadOnly {
		t.Errorf("current-context staging: %+v %s", got, errOut)
	}
	t.Setenv("LADDER_CONTEXT", "prod")
	if _, _, _, got = runContexts(t, s, "--config", cfg, "topology"); got.Vhost != "billing" {
		t.Errorf("LADDER_CONTEXT=prod: vhost %q", got.Vhost)
	}
	t.Setenv("LADDER_CONTEXT", "")
	// A flag wins over the file, and so does the environment.
	if _, _, _, got = runContexts(t, s, "--config", cfg, "--context", "prod", "--vhost", "other", "topology"); got.Vhost != "other" || got.AMQPURL != "amqps://ops@rabbit.prod:5671/" {
		t.Errorf("--vhost other: %+v", got)
	}
	t.Setenv("LADDER_VHOST", "fromenv")
	if _, _, _, got = runContexts(t, s, "--config", cfg, "--context", "prod", "topology"); got.Vhost != "fromenv" {
		t.Errorf("LADDER_VHOST=fromenv: vhost %q", got.Vhost)
	}
	t.Setenv("LADDER_VHOST", "")
	// No config file and no --context: ladder as before.
	if code, _, errOut, got = runContexts(t, s, "--config", filepath.Join(t.TempDir(), "none.toml"), "topology"); code != exitOK || got.AMQPURL != rabbit.DefaultAMQPURL {
		t.Errorf("no config file: exit %d %s, %+v", code, errOut, got)
	}
}

func TestContextRefusals(t *testing.T) {
	clearLadderEnv(t)
	cfg, pwFile, _ := contextsFile(t)
	s := newSim(t)
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown context", []string{"--context", "qa", "topology"}, `--context qa: no context "qa" in ` + cfg + ` (it has prod, staging)`},
		{"no file", []string{"--config", "/nonexistent/ladder.toml", "--context", "prod", "topology"}, "--context prod: no config file /nonexistent/ladder.toml"},
		// A read-only context stays read-only, whatever the flags say.
		{"read-only lifted by a flag", []string{"--context", "prod", "--read-only=false", "topology"}, "context prod is read-only: --read-only=false cannot lift that"},
		{"read-only refuses a move", []string{"--context", "prod", "move", "--from", sim.OrdersDLQ, "--to", "origin", "--yes"}, "read-only"},
		{"password variable unset", []string{"--context", "staging", "topology"}, "context staging: $LADDER_TEST_STAGING_PW (its password-env) is not set"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"--config", cfg}, tt.args...)
			code, out, errOut, _ := runContexts(t, s, args...)
			if code == exitOK || !strings.Contains(errOut, tt.want) || strings.Count(errOut, "\n") != 1 {
				t.Errorf("exit %d, stderr %q (stdout %q), want one line with %q", code, errOut, out, tt.want)
			}
		})
	}
	// LADDER_READ_ONLY=false cannot lift it either.
	t.Setenv("LADDER_READ_ONLY", "false")
	if code, _, errOut, _ := runContexts(t, s, "--config", cfg, "--context", "prod", "topology"); code != exitUsage || !strings.Contains(errOut, "is read-only") {
		t.Errorf("LADDER_READ_ONLY=false with a read-only context: exit %d %q", code, errOut)
	}
	t.Setenv("LADDER_READ_ONLY", "")
	// A password file others may read is refused, its content never shown.
	if err := os.Chmod(pwFile, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut, _ := runContexts(t, s, "--config", cfg, "--context", "prod", "topology")
	if code != exitUsage || !strings.Contains(errOut, "permissions 0644") || !strings.Contains(errOut, pwFile) || strings.Contains(out+errOut, "pr0d-s3cret") {
		t.Errorf("password file 0644: exit %d %q %q", code, out, errOut)
	}
}

// No output of the context commands, and no line of the audit log, holds a
// password; the audit lines name the context.
func TestContextCommandsNeverPrintAPassword(t *testing.T) {
	clearLadderEnv(t)
	cfg, _, auditLog := contextsFile(t)
	t.Setenv("LADDER_TEST_STAGING_PW", "st4ging-s3cret")
	s := newSim(t)
	var all strings.Builder
	for _, args := range [][]string{
		{"context", "list"}, {"context", "list", "-o", "json"}, {"context", "show"}, {"context", "show", "prod"},
		{"context", "show", "staging", "-o", "json"}, {"--context", "prod", "context", "show"},
		{"move", "--from", sim.OrdersDLQ, "--to", "origin", "--yes", "--limit", "1"},
	} {
		code, out, errOut, _ := runContexts(t, s, append([]string{"--config", cfg}, args...)...)
		if code != exitOK {
			t.Errorf("%q: exit %d %s", args, code, errOut)
		}
		all.WriteString(out + errOut)
	}
	audit, err := os.ReadFile(auditLog)
	if err != nil {
		t.Fatalf("the staging context's audit log: %v", err)
	}
	all.Write(audit)
	for _, secret := range []string{"st4ging-s3cret", "pr0d-s3cret"} {
		if strings.Contains(all.String(), secret) {
			t.Errorf("%s in the output or the audit log:\n%s", secret, all.String())
		}
	}
	for _, want := range []string{"$LADDER_TEST_STAGING_PW (set)", "file " + filepath.Join(filepath.Dir(cfg), "prod.password"), "*  "} {
		if !strings.Contains(all.String(), want) {
			t.Errorf("no %q in the context commands' output:\n%s", want, all.String())
		}
	}
	lines := strings.Split(strings.TrimSpace(string(audit)), "\n")
	if len(lines) != 2 {
		t.Fatalf("audit log: %d lines, want start and done:\n%s", len(lines), audit)
	}
	for _, l := range lines {
		var ev broker.AuditEvent
		if err := json.Unmarshal([]byte(l), &ev); err != nil || ev.Context != "staging" {
			t.Errorf("audit line %s: context %q (%v), want staging", l, ev.Context, err)
		}
	}
}

func TestContextUse(t *testing.T) {
	clearLadderEnv(t)
	cfg, _, _ := contextsFile(t)
	s := newSim(t)
	if code, out, errOut, _ := runContexts(t, s, "--config", cfg, "context", "use", "prod"); code != exitOK || !strings.Contains(out, "current context: prod") {
		t.Fatalf("context use prod: exit %d %q %q", code, out, errOut)
	}
	if _, _, _, got := runContexts(t, s, "--config", cfg, "topology"); got.Vhost != "billing" {
		t.Errorf("after use prod: vhost %q", got.Vhost)
	}
	if code, _, errOut, _ := runContexts(t, s, "--config", cfg, "context", "use", "qa"); code != exitUsage || !strings.Contains(errOut, `no context "qa"`) {
		t.Errorf("context use qa: exit %d %q", code, errOut)
	}
	// A file with no current-context: nothing applied, and the TUI's
	// switcher has the contexts to offer.
	noCurrent := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(noCurrent, []byte("[contexts.qa]\nvhost = \"qa\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	a := &app{stdin: strings.NewReader(""), stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}, config: noCurrent}
	root := newRootCmd(a)
	root.SetArgs([]string{"--config", noCurrent, "version"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	seen := a.contextList()
	if a.context != "" || !slices.Equal(seen, []string{"qa"}) {
		t.Errorf("no current-context: context %q, switcher offers %q, want none and [qa]", a.context, seen)
	}
	if err := a.switchContext("qa"); err != nil || a.cfg.Vhost != "qa" {
		t.Errorf("switch to qa: %v, vhost %q", err, a.cfg.Vhost)
	}
	// The context commands still run when the current context is broken.
	t.Setenv("LADDER_CONTEXT", "qa")
	if code, out, errOut, _ := runContexts(t, s, "--config", cfg, "context", "list"); code != exitOK || !strings.Contains(out, "prod") {
		t.Errorf("context list with LADDER_CONTEXT=qa: exit %d %q %q", code, out, errOut)
	}
}
