package cli

import (
	"bytes"
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/rabbit"
	"github.com/ladder-tui/ladder/internal/learned"
	"github.com/ladder-tui/ladder/retry/topology"
)

func resolved(t *testing.T, url string) *rabbit.Resolved {
	t.Helper()
	r, err := rabbit.Config{AMQPURL: url}.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// A broker is remembered by its nodes' addresses, whoever logs in: no
// credentials in the key, the same key for every user.
func TestBrokerKeyHoldsNoCredentials(t *testing.T) {
	a := brokerKey(resolved(t, "amqp://alice:s3cret@rabbit.example:5672/orders"))
	b := brokerKey(resolved(t, "amqp://bob:other@rabbit.example:5672/"))
	if a != b || strings.Contains(a, "alice") || strings.Contains(a, "s3cret") || a != "amqp://rabbit.example:5672" {
		t.Errorf("keys %q and %q", a, b)
	}
	if c := brokerKey(resolved(t, "amqp://alice:s3cret@rabbit.example:5673/")); c == a {
		t.Errorf("another port, the same key %q", c)
	}
}

// A run's clients know what an earlier run learned of the broker, unless
// --fresh (or LADDER_FRESH) says to forget; what they learn is saved.
func TestEvidenceForLoadsUnlessFresh(t *testing.T) {
	clearLadderEnv(t)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	r := resolved(t, "amqp://guest:guest@rabbit.example:5672/")
	dir, err := learned.Dir()
	if err != nil {
		t.Fatal(err)
	}
	earlier := map[string]topology.Evidence{"/": {"orders.errors": {FailedIn: []string{"orders"}}}}
	if err := (&learned.Store{Dir: dir}).Save(brokerKey(r), nil, earlier); err != nil {
		t.Fatal(err)
	}
	a := &app{}
	if got := a.evidenceFor(r).Known(); !got["/"]["orders.errors"].Equal(earlier["/"]["orders.errors"]) {
		t.Errorf("loaded %+v, want %+v", got, earlier)
	}
	if a.evidenceFor(resolved(t, "amqp://other:pw@rabbit.example:5672/shop")) != a.evidenceFor(r) {
		t.Error("two clients of one broker do not share what they know")
	}

	for _, args := range [][]string{{"--fresh", "version"}, {"version"}} {
		fresh := &app{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard}
		root := newRootCmd(fresh)
		root.SetArgs(args)
		if args[0] == "version" {
			t.Setenv("LADDER_FRESH", "1")
		}
		if err := root.Execute(); err != nil {
			t.Fatal(err)
		}
		if !fresh.fresh {
			t.Fatalf("%q (LADDER_FRESH=%q): not fresh", args, "1")
		}
		ev := fresh.evidenceFor(r)
		if got := ev.Known(); len(got) != 0 {
			t.Errorf("%q: loaded %+v", args, got)
		}
		// What a fresh run learns is kept, with what it did not load.
		ev.Remember("/", topology.Evidence{"billing.errors": {FailedIn: []string{"billing"}}})
		fresh.saveLearned()
		m := (&learned.Store{Dir: dir}).Load(brokerKey(r))
		if len(m["/"]["billing.errors"].Seen.FailedIn) != 1 || len(m["/"]["orders.errors"].Seen.FailedIn) != 1 {
			t.Errorf("%q: saved %+v", args, m)
		}
	}
}

// failingFreeBrowse is the simulation with a stream whose browse (free)
// fails.
type failingFreeBrowse struct{ broker.Client }

func (f failingFreeBrowse) Snapshot(ctx context.Context) (*broker.Snapshot, error) {
	s, err := f.Client.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	s.Topology.Queues = append(slices.Clone(s.Topology.Queues), topology.Queue{Name: "events", Type: topology.QueueStream, Messages: 5, Ready: 5})
	return s, nil
}

func (f failingFreeBrowse) Peek(context.Context, string, broker.PeekOptions) (*broker.PeekResult, error) {
	return nil, errors.New("stream browse failed")
}

// An unasked sample that fails costs the report nothing: topology reports,
// and says on stderr what failed; one asked for fails the command.
func TestTopologyUnaskedSampleFailureIsANote(t *testing.T) {
	clearLadderEnv(t)
	c := failingFreeBrowse{newSim(t)}
	connect := func(rabbit.Config, string) (broker.Client, func(), error) { return c, func() {}, nil }
	var out, errb bytes.Buffer
	code := run([]string{"topology"}, strings.NewReader(""), &out, &errb, Build{Version: "dev"}, connect)
	if code != exitOK || !strings.Contains(errb.String(), "stream browse failed (an unasked sample") || !strings.Contains(out.String(), "vhost ") {
		t.Errorf("exit %d, stderr %q, stdout:\n%s", code, errb.String(), out.String())
	}
	out.Reset()
	errb.Reset()
	if code := run([]string{"topology", "--sample", "5"}, strings.NewReader(""), &out, &errb, Build{Version: "dev"}, connect); code == exitOK {
		t.Errorf("--sample with a failing browse: exit %d", code)
	}
}
