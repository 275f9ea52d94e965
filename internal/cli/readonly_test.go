package cli

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/ladder-tui/ladder/broker/rabbit"

	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// readOnlyClass is how --read-only treats one command: the runs it must
// refuse (they change the broker), the runs it must allow (reads, dry
// runs), and every flag of the command, each classified, so a flag added
// later fails the test until someone says whether it mutates. {src}, {dst},
// {wait} (a queue that dead-letters to {dst}),
// {file} and {out} are filled in by the test.
type readOnlyClass struct {
	refused [][]string
	allowed [][]string
	// tui: the command is the terminal UI (it needs a terminal); its
	// mutating paths are walked by ui's TestReadOnlyRefusesEveryMutatingPath.
	tui bool
	// flags lists every local flag, mutating or not: "mutates:" marks those
	// that make a run change the broker (covered by refused).
	flags []string
}

var readOnlyClasses = map[string]readOnlyClass{
	"ladder":            {tui: true, flags: []string{"peek-limit", "refresh"}},
	"ladder demo":       {tui: true, refused: [][]string{{"demo", "--real", "--duration", "1s"}}, flags: []string{"duration", "mutates:real", "peek-limit", "refresh", "speed"}},
	"ladder completion": {allowed: [][]string{{"completion", "--help"}}},
	// The context commands read and write the config file, never the
	// broker: read-only allows them ({cfg} holds the context "a").
	"ladder serve":                 {tui: true, flags: []string{"authorized-keys", "files", "host-key", "idle-timeout", "max-sessions", "peek-limit", "metrics", "read-only-dumps", "refresh", "session-quota", "ssh"}},
	"ladder context":               {allowed: [][]string{{"context", "--help"}}},
	"ladder context list":          {allowed: [][]string{{"context", "list", "--config", "{cfg}"}}},
	"ladder context show":          {allowed: [][]string{{"context", "show", "a", "--config", "{cfg}"}}},
	"ladder context use":           {allowed: [][]string{{"context", "use", "a", "--config", "{cfg}"}}},
	"ladder completion bash":       {allowed: [][]string{{"completion", "bash"}}, flags: []string{"no-descriptions"}},
	"ladder completion fish":       {allowed: [][]string{{"completion", "fish"}}, flags: []string{"no-descriptions"}},
	"ladder completion powershell": {allowed: [][]string{{"completion", "powershell"}}, flags: []string{"no-descriptions"}},
	"ladder completion zsh":        {allowed: [][]string{{"completion", "zsh"}}, flags: []string{"no-descriptions"}},
	"ladder help":                  {allowed: [][]string{{"help", "move"}}},
	"ladder version":               {allowed: [][]string{{"version"}}},
	"ladder ping":                  {allowed: [][]string{{"ping"}}},
	"ladder topology":              {allowed: [][]string{{"topology"}, {"topology", "-o", "json"}, {"topology", "--over", "1s"}, {"topology", "--sample", "5"}, {"topology", "--no-sample"}, {"topology", "--all-vhosts"}}, flags: []string{"all-vhosts", "no-sample", "over", "sample"}},
	"ladder lint":                  {allowed: [][]string{{"lint"}}, flags: []string{"for"}},
	"ladder conventions":           {allowed: [][]string{{"conventions"}}},
	"ladder check":                 {allowed: [][]string{{"check"}, {"check", "-o", "json", "--over", "1s"}}, flags: []string{"fail-on", "over"}},
	"ladder schedule":              {allowed: [][]string{{"schedule", "--backoff", "fixed", "--base", "5s"}}, flags: []string{"attempts", "backoff", "base", "cap", "factor", "jitter", "ladder"}},
	"ladder peek":                  {allowed: [][]string{{"peek", "{src}"}, {"peek", "{src}", "-o", "json", "--where", "retries>=0", "--group-by", "error"}}, flags: []string{"body-bytes", "force", "force-peek", "group-by", "limit", "max-time", "where"}},
	// ladder mcp serves over stdin (empty here: it ends at once); its
	// tools' refusals are mcp_broker_test's.
	"ladder mcp": {refused: [][]string{{"mcp", "--allow-moves"}}, allowed: [][]string{{"mcp"}, {"mcp", "--allow-peek-cost"}}, flags: []string{"mutates:allow-moves", "allow-peek-cost", "files"}},
	"ladder dump": {
		refused: [][]string{{"dump", "{src}", "--out", "{out}", "--consume", "--yes"}, {"dump", "{src}", "--out", "{out}", "--consume", "--yes", "--limit", "1", "--force"}},
		allowed: [][]string{{"dump", "{src}", "--out", "-"}},
		flags:   []string{"body", "mutates:consume", "force", "force-peek", "limit", "out", "where", "yes"},
	},
	"ladder move": {
		refused: [][]string{
			{"move", "--from", "{src}", "--to", "queue:{dst}", "--yes"},
			{"move", "--from", "{src}", "--to", "queue:{dst}", "--yes", "--limit", "1", "--delay", "5s", "--reset-retries"},
			{"move", "--from", "{src}", "--to", "origin", "--yes", "--where", "retries>=0", "--rate", "10/s", "--max-moves", "5", "--force"},
		},
		allowed: [][]string{{"move", "--from", "{src}", "--to", "queue:{dst}", "--dry-run"}},
		flags:   []string{"delay", "mutates:dry-run", "force", "force-peek", "from", "limit", "max-moves", "rate", "reset-retries", "to", "where", "yes"},
	},
	"ladder unblock": {
		// Its dry run reads past the head of a wait queue whose messages
		// may carry their own TTLs, which may release overdue ones: a
		// change, refused too (even with --force-peek).
		refused: [][]string{{"unblock", "{wait}", "--yes"}, {"unblock", "{wait}", "--yes", "--look", "5", "--max-moves", "0", "--force"},
			{"unblock", "{wait}", "--dry-run"}, {"unblock", "{wait}", "--dry-run", "--force-peek"}},
		flags: []string{"mutates:dry-run", "force", "force-peek", "look", "max-moves", "yes"},
	},
	"ladder replay": {
		refused: [][]string{
			{"replay", "{file}", "--to", "queue:{dst}", "--yes"},
			{"replay", "{file}", "--to", "original", "--yes", "--resume", "--strict", "--limit", "1", "--delay", "5s", "--reset-retries", "--rate", "10/s", "--max-moves", "5", "--force", "--where", "retries>=0"},
		},
		allowed: [][]string{{"replay", "{file}", "--to", "queue:{dst}", "--dry-run"}},
		flags:   []string{"delay", "mutates:dry-run", "force", "limit", "max-moves", "rate", "reset-retries", "resume", "strict", "to", "where", "yes"},
	},
}

// walkCommands is every command of ladder's tree, built as run builds it,
// with cobra's help and completion commands, by command path.
func walkCommands() map[string]*cobra.Command {
	root := newRootCmd(&app{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard})
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	out := map[string]*cobra.Command{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		out[c.CommandPath()] = c
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
	return out
}

// Every command and flag is classified; every refused run of a mutating
// command is refused under --read-only with one line naming read-only, and
// leaves the broker as it was; every read (and dry run) still works.
func TestReadOnlyRefusedByEveryMutatingCommand(t *testing.T) {
	cmds := walkCommands()
	for path, c := range cmds {
		class, ok := readOnlyClasses[path]
		if !ok {
			t.Errorf("%q is not classified in readOnlyClasses: does it change the broker? add its refused and allowed runs", path)
			continue
		}
		var flags, known []string
		c.LocalNonPersistentFlags().VisitAll(func(f *pflag.Flag) { flags = append(flags, f.Name) })
		for _, f := range class.flags {
			known = append(known, strings.TrimPrefix(f, "mutates:"))
		}
		sort.Strings(flags)
		sort.Strings(known)
		if !slices.Equal(flags, known) {
			t.Errorf("%q has flags %q, classified %q: classify every flag (mutates: or not)", path, flags, known)
		}
		if !class.tui && len(class.allowed)+len(class.refused) == 0 {
			t.Errorf("%q has no run to check", path)
		}
	}
	for path := range readOnlyClasses {
		if _, ok := cmds[path]; !ok {
			t.Errorf("readOnlyClasses lists %q, which is no command", path)
		}
	}
	if t.Failed() {
		return
	}

	r := vhostEnv(t)
	src := testQueue(t, r, "src", 3, nil)
	dst := testQueue(t, r, "dst", 0, nil)
	wait := testQueue(t, r, "wait", 2, amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": dst})
	dir := t.TempDir()
	file := filepath.Join(dir, "src.jsonl")
	if code, _, errOut := runLadder(t, "dump", src, "--out", file); code != exitOK {
		t.Fatalf("dump (to have a file to replay): exit %d %s", code, errOut)
	}
	cfg := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(cfg, []byte("[contexts.a]\nvhost = \"x\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fill := func(args []string) []string {
		out := make([]string, len(args))
		for i, a := range args {
			out[i] = strings.NewReplacer("{src}", src, "{wait}", wait, "{dst}", dst, "{file}", file, "{out}", filepath.Join(dir, "out.jsonl"), "{cfg}", cfg).Replace(a)
		}
		return out
	}
	state := func() map[string]int {
		l, err := rabbit.NewLive(r, "test")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		v, err := l.Topology(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		s := map[string]int{}
		for _, q := range v.Queues {
			s[q.Name] = depthOf(t, r, q.Name)
		}
		s["exchanges"] = len(v.Exchanges)
		return s
	}
	before := state()
	paths := make([]string, 0, len(readOnlyClasses))
	for p := range readOnlyClasses {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, path := range paths {
		class := readOnlyClasses[path]
		for _, args := range class.refused {
			args = append([]string{"--read-only"}, fill(args)...)
			code, out, errOut := runLadder(t, args...)
			if code == exitOK || !strings.Contains(errOut, "read-only") || strings.Count(errOut, "\n") != 1 {
				t.Errorf("%s: exit %d, want a refusal on one line naming read-only: %q (stdout %q)", strings.Join(args, " "), code, errOut, out)
			}
			if _, err := os.Stat(filepath.Join(dir, "out.jsonl")); err == nil {
				t.Errorf("%s: wrote its output file", strings.Join(args, " "))
				os.Remove(filepath.Join(dir, "out.jsonl"))
			}
		}
		for _, args := range class.allowed {
			args = append([]string{"--read-only"}, fill(args)...)
			if code, _, errOut := runLadder(t, args...); code != exitOK {
				t.Errorf("%s: exit %d %q: a read must work in --read-only mode", strings.Join(args, " "), code, errOut)
			}
		}
		// LADDER_READ_ONLY=1 is the same switch.
		if len(class.refused) > 0 {
			t.Setenv("LADDER_READ_ONLY", "1")
			if code, _, errOut := runLadder(t, fill(class.refused[0])...); code == exitOK || !strings.Contains(errOut, "read-only") {
				t.Errorf("LADDER_READ_ONLY=1 %s: exit %d %q", strings.Join(class.refused[0], " "), code, errOut)
			}
			os.Unsetenv("LADDER_READ_ONLY")
		}
	}
	after := state()
	for k, v := range before {
		if after[k] != v {
			t.Errorf("%s: %d before, %d after the read-only runs", k, v, after[k])
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			t.Errorf("queue %s appeared during the read-only runs", k)
		}
	}
}
