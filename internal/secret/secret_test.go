package secret

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
)

var ctx = context.Background()

func TestStatic(t *testing.T) {
	u, p, err := Static{User: "bob", Password: "pw1"}.Credentials(ctx)
	if u != "bob" || p != "pw1" || err != nil {
		t.Errorf("%q %q %v", u, p, err)
	}
}

// A password file is read at every call: a rotation is seen by the next
// one, and so is a file that became readable by others (refused unless
// allowed).
func TestFileReadEachCall(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, "pw", "first-pw\n", 0o600)
	f := File{Path: path}
	if u, p, err := f.Credentials(ctx); u != "" || p != "first-pw" || err != nil {
		t.Fatalf("first: %q %q %v", u, p, err)
	}
	writeFile(t, dir, "pw", "second-pw\n", 0o600)
	if _, p, err := f.Credentials(ctx); p != "second-pw" || err != nil {
		t.Errorf("after the rotation: %q %v, want second-pw", p, err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, p, err := f.Credentials(ctx); !errors.Is(err, ErrReadable) || p != "" {
		t.Errorf("made 0644: %q %v, want ErrReadable", p, err)
	}
	f.AllowReadable = true
	if _, p, err := f.Credentials(ctx); p != "second-pw" || err != nil {
		t.Errorf("0644 allowed: %q %v", p, err)
	}
}

func TestEnv(t *testing.T) {
	t.Setenv("LADDER_SECRET_TEST_PW", "env-pw")
	e := Env{Name: "LADDER_SECRET_TEST_PW"}
	if u, p, err := e.Credentials(ctx); u != "" || p != "env-pw" || err != nil {
		t.Errorf("%q %q %v", u, p, err)
	}
	t.Setenv("LADDER_SECRET_TEST_PW", "env-pw-2")
	if _, p, _ := e.Credentials(ctx); p != "env-pw-2" {
		t.Errorf("changed variable: %q, want env-pw-2", p)
	}
	t.Setenv("LADDER_SECRET_TEST_PW", "")
	if _, _, err := e.Credentials(ctx); err == nil || err.Error() != "$LADDER_SECRET_TEST_PW is not set" {
		t.Errorf("unset: %v", err)
	}
}

// A prompt asks once per process, however many connections ask it; a
// failed or empty answer is not kept.
func TestPromptAsksOnce(t *testing.T) {
	asked := 0
	answers := []string{"", "typed-pw", "other"}
	p := NewPrompt(func(context.Context) (string, error) {
		asked++
		return answers[asked-1], nil
	})
	if _, _, err := p.Credentials(ctx); err == nil || err.Error() != "no password given" {
		t.Fatalf("empty answer: %v", err)
	}
	for range 3 {
		if u, pw, err := p.Credentials(ctx); u != "" || pw != "typed-pw" || err != nil {
			t.Fatalf("%q %q %v", u, pw, err)
		}
	}
	if asked != 2 {
		t.Errorf("asked %d times, want 2 (the empty answer, then once)", asked)
	}
	failing := NewPrompt(func(context.Context) (string, error) { return "", errors.New("no terminal") })
	if _, _, err := failing.Credentials(ctx); err == nil || err.Error() != "no terminal" {
		t.Errorf("failing ask: %v", err)
	}
}

// Login fills in the connection's user for a provider that holds only a
// password, and keeps a provider's own user; Named names the source in
// errors; Seen keeps every password given, a rotated one too.
func TestLoginNamedSeen(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, "pw", "first-pw\n", 0o600)
	var seen Seen
	c := seen.Watch(Named("--password-file", Login("bob", File{Path: path})))
	if u, p, err := c.Credentials(ctx); u != "bob" || p != "first-pw" || err != nil {
		t.Fatalf("%q %q %v", u, p, err)
	}
	if u, _, _ := Login("bob", Static{User: "alice", Password: "x"}).Credentials(ctx); u != "alice" {
		t.Errorf("a provider's own user: %q, want alice", u)
	}
	writeFile(t, dir, "pw", "second-pw\n", 0o600)
	_, _, _ = c.Credentials(ctx)
	if got := seen.Pairs(); len(got) != 2 || got[0] != (Pair{"bob", "first-pw"}) || got[1] != (Pair{"bob", "second-pw"}) {
		t.Errorf("seen %v", got)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Credentials(ctx); err == nil || !strings.HasPrefix(err.Error(), "--password-file: "+path+": no such file") {
		t.Errorf("missing file: %v", err)
	}
	var none *Seen
	none.Add("u", "p")
	if none.Pairs() != nil {
		t.Error("a nil Seen keeps nothing")
	}
}
