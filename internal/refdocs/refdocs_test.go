package refdocs_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ladder-tui/ladder/internal/cli"
	"github.com/ladder-tui/ladder/internal/refdocs"
)

// committed is where make docs writes the pages, from this package.
const committed = "../../docs/commands"

// quiet unsets every variable the generated pages could read, for the
// test's life: the shell's LADDER_* must not reach a test.
func quiet(t *testing.T) {
	t.Helper()
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "LADDER_") || name == "NO_COLOR" || name == "SOURCE_DATE_EPOCH" {
			t.Setenv(name, "") // restored after the test
			os.Unsetenv(name)
		}
	}
}

// generate writes the Markdown pages into a fresh directory and reads
// them back by file name.
func generate(t *testing.T) map[string][]byte {
	t.Helper()
	dir := t.TempDir()
	if err := refdocs.Markdown(cli.Reference(), dir); err != nil {
		t.Fatal(err)
	}
	return readDir(t, dir, ".md")
}

func readDir(t *testing.T, dir, ext string) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	pages := map[string][]byte{}
	for _, e := range entries {
		if e.IsDir() || filepath.Ext(e.Name()) != ext {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		pages[e.Name()] = b
	}
	return pages
}

// The committed pages are what the commands generate now, byte for byte,
// no page missing and none left over from a removed command.
func TestCommittedPagesAreCurrent(t *testing.T) {
	quiet(t)
	want := generate(t)
	got := readDir(t, committed, ".md")
	var stale []string
	for name, w := range want {
		g, ok := got[name]
		switch {
		case !ok:
			stale = append(stale, name+" is missing")
		case !bytes.Equal(g, w):
			stale = append(stale, name+" differs: "+firstDiff(g, w))
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			stale = append(stale, name+" is no command's page")
		}
	}
	if len(stale) > 0 {
		slices.Sort(stale)
		t.Fatalf("docs/commands is stale: run make docs and commit docs/commands\n  %s", strings.Join(stale, "\n  "))
	}
	if len(want) != len(refdocs.Files(cli.Reference())) {
		t.Fatalf("wrote %d pages, Files names %d", len(want), len(refdocs.Files(cli.Reference())))
	}
}

// firstDiff names the first line where the committed page and the
// generated one part.
func firstDiff(committed, generated []byte) string {
	c, g := strings.Split(string(committed), "\n"), strings.Split(string(generated), "\n")
	for i := 0; i < max(len(c), len(g)); i++ {
		var cl, gl string
		if i < len(c) {
			cl = c[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if cl != gl {
			return fmt.Sprintf("line %d is %q, want %q", i+1, cl, gl)
		}
	}
	return "same lines"
}

// The pages depend on nothing of the machine they are made on: every
// variable they name ([$LADDER_…]), the home and config directories, the
// terminal's size and colour and the date source set to other values
// change no byte. (A default read from the environment or $HOME, or help
// wrapped to the terminal, would make make docs differ between machines
// and this test fail.)
func TestPagesIgnoreEnvironment(t *testing.T) {
	quiet(t)
	clean := generate(t)

	vars := map[string]bool{}
	for _, page := range clean {
		for _, m := range regexp.MustCompile(`\[\$(LADDER_[A-Z_]+)\]`).FindAllSubmatch(page, -1) {
			vars[string(m[1])] = true
		}
	}
	if len(vars) < 10 {
		t.Fatalf("found %d [$LADDER_…] variables in the pages, want the global flags' (%v)", len(vars), vars)
	}
	home := t.TempDir()
	for v := range vars {
		t.Setenv(v, "1")
	}
	t.Setenv("LADDER_AMQP_URL", "amqp://someone:secret@elsewhere:5673/other")
	t.Setenv("LADDER_OUTPUT", "json")
	t.Setenv("LADDER_API_TIMEOUT", "3m")
	t.Setenv("LADDER_DEBUG", "1")
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "config"))
	t.Setenv("XDG_CACHE_HOME", filepath.Join(home, "cache"))
	t.Setenv("COLUMNS", "40")
	t.Setenv("LINES", "10")
	t.Setenv("TERM", "dumb")
	t.Setenv("NO_COLOR", "1")
	t.Setenv("SOURCE_DATE_EPOCH", "0")
	t.Chdir(t.TempDir()) // LADDER_DEBUG's log, were it written, lands here

	other := generate(t)
	if len(other) != len(clean) {
		t.Fatalf("%d pages with another environment, %d without", len(other), len(clean))
	}
	for name, c := range clean {
		if !bytes.Equal(other[name], c) {
			t.Errorf("%s depends on the environment: %s", name, firstDiff(other[name], c))
		}
	}
}

// Every command --help lists and every flag it shows (shorthand too) is in
// the reference: the page of the command whose --help it is. The help is
// ladder's own, run as a user runs it (cli.Run with --help), so a flag or
// command the pages left out, or a page cobra's help does not match, fails.
func TestHelpAppearsInReference(t *testing.T) {
	quiet(t)
	t.Chdir(t.TempDir())
	pages := generate(t)

	var paths [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		paths = append(paths, path)
		for _, sub := range refdocs.Available(c) {
			walk(sub, append(slices.Clone(path), sub.Name()))
		}
	}
	walk(cli.Reference(), nil)

	flagLine := regexp.MustCompile(`^\s+(?:(-[A-Za-z0-9]), )?(--[A-Za-z0-9][\w-]*)`)
	commands, flags := 0, 0
	for _, path := range paths {
		var out, errOut bytes.Buffer
		args := append(slices.Clone(path), "--help")
		if code := cli.Run(args, strings.NewReader(""), &out, &errOut, cli.Build{Version: "test"}); code != 0 {
			t.Fatalf("ladder %s: exit %d: %s", strings.Join(args, " "), code, errOut.String())
		}
		cmd := strings.Join(append([]string{"ladder"}, path...), " ")
		name := strings.ReplaceAll(cmd, " ", "_") + ".md"
		page, ok := pages[name]
		if !ok {
			t.Errorf("%s --help: no page %s", cmd, name)
			continue
		}
		section := ""
		for _, line := range strings.Split(out.String(), "\n") {
			if line != "" && !strings.HasPrefix(line, " ") {
				section = line
				continue
			}
			switch {
			case section == "Available Commands:" && strings.TrimSpace(line) != "":
				sub := strings.Fields(line)[0]
				if sub == "help" {
					continue // cobra's: ladder help X is ladder X --help
				}
				commands++
				link := fmt.Sprintf("(%s_%s.md)", strings.TrimSuffix(name, ".md"), sub)
				if !bytes.Contains(page, []byte(link)) {
					t.Errorf("%s --help lists %s; %s does not link %s", cmd, sub, name, link)
				}
			case section == "Flags:" || section == "Global Flags:":
				m := flagLine.FindStringSubmatch(line)
				if m == nil {
					continue
				}
				flags++
				if !flagIn(page, m[2]) {
					t.Errorf("%s --help shows %s; %s does not", cmd, m[2], name)
				}
				if m[1] != "" && !bytes.Contains(page, []byte(m[1]+", "+m[2])) {
					t.Errorf("%s --help shows %s, %s; %s does not", cmd, m[1], m[2], name)
				}
			}
		}
	}
	// The parse above must have found what is there, or it proves nothing.
	t.Logf("--help of %d commands: %d subcommands, %d flags", len(paths), commands, flags)
	if commands < 16 || flags < 100 {
		t.Fatalf("read %d commands and %d flags from --help: the help's layout changed?", commands, flags)
	}
}

// Every command of the tree that is not hidden has a page, and every
// flag it takes that is not hidden (its own and those it inherits) is
// on that page; hidden ones are not.
func TestTreeInReference(t *testing.T) {
	quiet(t)
	pages := generate(t)

	var visit func(c *cobra.Command)
	visit = func(c *cobra.Command) {
		name := strings.ReplaceAll(c.CommandPath(), " ", "_") + ".md"
		page, ok := pages[name]
		if !ok {
			t.Errorf("%s: no page %s", c.CommandPath(), name)
		}
		c.InitDefaultHelpFlag() // as --help and the generator do
		check := func(f *pflag.Flag) {
			if f.Hidden {
				if flagIn(page, "--"+f.Name) {
					t.Errorf("%s: hidden flag --%s is in the reference", c.CommandPath(), f.Name)
				}
				return
			}
			if !flagIn(page, "--"+f.Name) {
				t.Errorf("%s: flag --%s is not on %s", c.CommandPath(), f.Name, name)
			}
		}
		c.LocalFlags().VisitAll(check)
		c.InheritedFlags().VisitAll(check)
		for _, sub := range c.Commands() {
			if sub.Hidden {
				if _, ok := pages[strings.ReplaceAll(sub.CommandPath(), " ", "_")+".md"]; ok {
					t.Errorf("hidden command %s has a page", sub.CommandPath())
				}
				continue
			}
			if slices.Contains(refdocs.Available(c), sub) {
				visit(sub)
			}
		}
	}
	visit(cli.Reference())
}

// flagIn says whether page names flag as a whole word (--to, not --tool).
func flagIn(page []byte, flag string) bool {
	return regexp.MustCompile(regexp.QuoteMeta(flag) + `(?:[^\w-]|$)`).Match(page)
}

// The man pages: one per page of the Markdown reference, the version and
// the given month in the header, and the same bytes when made again.
func TestManPages(t *testing.T) {
	quiet(t)
	date := time.Date(2024, 12, 5, 12, 0, 0, 0, time.UTC)
	gen := func() map[string][]byte {
		dir := t.TempDir()
		if err := refdocs.Man(cli.Reference(), dir, "v1.2.3", date); err != nil {
			t.Fatal(err)
		}
		return readDir(t, dir, ".1")
	}
	first := gen()
	var want []string
	for _, md := range refdocs.Files(cli.Reference()) {
		want = append(want, strings.ReplaceAll(strings.TrimSuffix(md, ".md"), "_", "-")+".1")
	}
	var got []string
	for name := range first {
		got = append(got, name)
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("man pages %v, want %v", got, want)
	}
	if !bytes.Contains(first["ladder-move.1"], []byte(`.TH "LADDER" "1" "Dec 2024" "ladder 1.2.3" "ladder manual"`)) {
		t.Errorf("ladder-move.1's header: %q", strings.SplitN(string(first["ladder-move.1"]), "\n", 3)[1])
	}
	// The long description is kept as written (.EX), not reflowed.
	if !bytes.Contains(first["ladder-move.1"], []byte(".EX\n")) || !bytes.Contains(first["ladder-move.1"], []byte("ladder.delay.<ms>.<exchange>.<key>")) {
		t.Error("ladder-move.1 lost its description's layout or words")
	}
	again := gen()
	for name, b := range first {
		if !bytes.Equal(again[name], b) {
			t.Errorf("%s differs when made again: %s", name, firstDiff(again[name], b))
		}
	}
}
