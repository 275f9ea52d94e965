package files

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

var at = time.Date(2026, 3, 1, 12, 0, 5, 0, time.FixedZone("CET", 3600))

func confined(t *testing.T, o ConfinedOptions) (*Confined, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "files")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if o.Now == nil {
		o.Now = func() time.Time { return at }
	}
	return NewConfined(dir, o), dir
}

// The server names a dump after the user, the queue and the UTC time,
// one plain file name whatever they are called.
func TestNameIsThePlainServerName(t *testing.T) {
	for _, tc := range []struct{ user, queue, want string }{
		{"alice", "orders.dlq", "alice-orders.dlq-20260301T110005Z"},
		{"../../etc", "a/b c", "_.._.._etc-a_b_c-20260301T110005Z"},
		{"", "..", "_-_..-20260301T110005Z"},
		{"bob\x1b[2J", "q\n/évil", "bob__2J-q___vil-20260301T110005Z"},
	} {
		got := Name(tc.user, tc.queue, at)
		if got != tc.want {
			t.Errorf("Name(%q, %q) = %q, want %q", tc.user, tc.queue, got, tc.want)
		}
		if got != filepath.Base(got) || strings.HasPrefix(got, ".") {
			t.Errorf("Name(%q, %q) = %q: not a plain name", tc.user, tc.queue, got)
		}
	}
	if n := Name(strings.Repeat("u", 500), strings.Repeat("q", 500), at); len(n+Ext) > 255 {
		t.Errorf("a name of %d bytes", len(n+Ext))
	}
}

// Create writes in the directory under the server's name, whatever name
// is typed; a link planted at that name is never followed.
func TestConfinedCreateIgnoresTypedNamesAndLinks(t *testing.T) {
	c, dir := confined(t, ConfinedOptions{User: "alice"})
	outside := filepath.Join(t.TempDir(), "outside.jsonl")
	if err := os.Symlink(outside, filepath.Join(dir, "alice-orders.dlq-20260301T110005Z.jsonl")); err != nil {
		t.Fatal(err)
	}
	if _, ask, err := c.Offer("orders.dlq", at); ask || err != nil {
		t.Fatalf("Offer: ask %v, %v (want no question)", ask, err)
	}
	f, err := c.Create("orders.dlq", outside)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("line\n")); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if f.Name() != "alice-orders.dlq-20260301T110005Z-2.jsonl" {
		t.Errorf("name %q", f.Name())
	}
	if b, err := os.ReadFile(filepath.Join(dir, f.Name())); err != nil || string(b) != "line\n" {
		t.Errorf("the dump: %q %v", b, err)
	}
	if _, err := os.Lstat(outside); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a file was written outside the directory: %v", err)
	}
	if st, _ := os.Stat(filepath.Join(dir, f.Name())); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", st.Mode())
	}
}

// The picker lists the directory's dump files only; a name that leads
// elsewhere (a path, .., a link) is never resolved.
func TestConfinedListAndPathStayInTheDirectory(t *testing.T) {
	c, dir := confined(t, ConfinedOptions{User: "alice"})
	other := t.TempDir()
	for _, p := range []string{filepath.Join(other, "audit.jsonl"), filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "a.jsonl.progress"), filepath.Join(dir, "notes.txt"), filepath.Join(dir, ".hidden.jsonl")} {
		if err := os.WriteFile(p, []byte("{}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(other, "audit.jsonl"), filepath.Join(dir, "link.jsonl")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub.jsonl"), 0o700); err != nil {
		t.Fatal(err)
	}
	t.Chdir(other) // the working directory is not the files'
	got, err := c.List()
	if err != nil || !slices.Equal(got, []string{"a.jsonl"}) {
		t.Fatalf("List: %q %v", got, err)
	}
	if p, err := c.Path("a.jsonl"); err != nil || p != filepath.Join(dir, "a.jsonl") {
		t.Errorf("Path(a.jsonl) = %q %v", p, err)
	}
	for _, name := range []string{
		filepath.Join(other, "audit.jsonl"), "../" + filepath.Base(other) + "/audit.jsonl", "audit.jsonl",
		"link.jsonl", "sub.jsonl", ".hidden.jsonl", "..", "notes.txt", "a.jsonl/../a.jsonl", "",
	} {
		if p, err := c.Path(name); err == nil {
			t.Errorf("Path(%q) = %q: want refused", name, p)
		}
	}
}

// The quota counts every byte the session writes, across its dumps; the
// line that would pass it is refused whole, the file keeping whole lines;
// once it is used no dump is offered.
func TestConfinedQuota(t *testing.T) {
	c, dir := confined(t, ConfinedOptions{User: "alice", Quota: 25})
	f, err := c.Create("q", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("0123456789\n")); err != nil { // 11
		t.Fatal(err)
	}
	f.Close()
	g, err := c.Create("q", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Write([]byte("abcdefghij\n")); err != nil { // 22
		t.Fatal(err)
	}
	n, err := g.Write([]byte("klmn\n")) // 27 > 25
	if n != 0 || !errors.Is(err, ErrQuota) || !strings.Contains(err.Error(), "22 B written of 25 B") {
		t.Fatalf("write past the quota: %d %v", n, err)
	}
	g.Close()
	if b, _ := os.ReadFile(filepath.Join(dir, g.Name())); string(b) != "abcdefghij\n" {
		t.Errorf("the file holds %q", b)
	}
	h, err := c.Create("q", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Write([]byte("xyz\n")); !errors.Is(err, ErrQuota) { // 22+4 > 25: counted across dumps
		t.Errorf("a second dump past the quota: %v", err)
	}
	h.Close()
	// A fresh session has its own quota.
	c2 := NewConfined(dir, ConfinedOptions{User: "alice", Quota: 25})
	if _, _, err := c2.Offer("q", at); err != nil {
		t.Errorf("another session's quota: %v", err)
	}
	full := NewConfined(dir, ConfinedOptions{User: "bob", Quota: 3})
	k, _ := full.Create("q", "")
	if _, err := k.Write([]byte("abc")); err != nil {
		t.Fatal(err)
	}
	k.Close()
	if _, _, err := full.Offer("q", at); !errors.Is(err, ErrQuota) {
		t.Errorf("Offer with the quota used: %v", err)
	}
}

// A session the gate refuses file writes writes none, and says why, unless
// the server allows it.
func TestConfinedReadOnly(t *testing.T) {
	refused := errors.New("read-only: this key may not write files on the server")
	c, dir := confined(t, ConfinedOptions{User: "bob", Writes: refused})
	if _, _, err := c.Offer("q", at); !errors.Is(err, refused) {
		t.Errorf("Offer: %v", err)
	}
	if _, err := c.Create("q", ""); !errors.Is(err, refused) {
		t.Errorf("Create: %v", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("files written: %v", ents)
	}
	allowed := NewConfined(dir, ConfinedOptions{User: "bob", Now: func() time.Time { return at }})
	f, err := allowed.Create("q", "")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if f.Name() != "bob-q-20260301T110005Z.jsonl" {
		t.Errorf("name %q", f.Name())
	}
}

// Locally nothing changed: the typed path is written, an existing file
// refused, the working directory listed.
func TestLocalIsTodays(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	name, ask, err := Local{}.Offer("a/b c", at)
	if name != "a_b_c-20260301-110005.jsonl" || !ask || err != nil {
		t.Errorf("Offer: %q %v %v", name, ask, err)
	}
	typed := filepath.Join(t.TempDir(), "typed.jsonl")
	f, err := Local{}.Create("q", typed)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := os.Stat(typed); err != nil {
		t.Error(err)
	}
	if _, err := (Local{}).Create("q", typed); err == nil {
		t.Error("an existing file was opened")
	}
	os.WriteFile("x.jsonl", nil, 0o600)
	if got, _ := (Local{}).List(); !slices.Equal(got, []string{"x.jsonl"}) {
		t.Errorf("List %q", got)
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]Size{"1GiB": 1 << 30, "500MiB": 500 << 20, "0": 0, "10": 10, "2GB": 2e9, "1.5KiB": 1536, "7 B": 7, "1gib": 1 << 30} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d %v, want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "GiB", "-1", "1XB", "1e30GiB"} {
		if _, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q): no error", in)
		}
	}
	if s := FormatSize(1 << 30); s != "1 GiB" {
		t.Errorf("FormatSize %q", s)
	}
	if s := FormatSize(1536); s != "1.5 KiB" {
		t.Errorf("FormatSize %q", s)
	}
}

// The directory is made 0700 by the first dump, never before; one that is
// a link or a file is refused.
func TestConfinedDirectory(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "files")
	if err := CheckDir(dir); err != nil {
		t.Fatalf("CheckDir of a directory not made yet: %v", err)
	}
	c := NewConfined(dir, ConfinedOptions{User: "alice"})
	if got, err := c.List(); len(got) != 0 || err != nil {
		t.Fatalf("List before any dump: %q %v", got, err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("made before a dump: %v", err)
	}
	f, err := c.Create("q", "")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if st, err := os.Stat(dir); err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("made by the first dump: %v %v", st, err)
	}
	if err := CheckDir(dir); err != nil {
		t.Error(err)
	}
	link := filepath.Join(base, "link")
	os.Symlink(dir, link)
	if err := CheckDir(link); err == nil {
		t.Error("a link to a directory accepted")
	}
	if err := CheckDir(filepath.Join(dir, f.Name())); err == nil {
		t.Error("a file accepted")
	}
}
