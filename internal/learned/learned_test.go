package learned

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/retry/topology"
)

func store(t *testing.T, now *time.Time) (*Store, *[]string) {
	t.Helper()
	var notes []string
	return &Store{Dir: filepath.Join(t.TempDir(), "learned"), Now: func() time.Time { return *now },
		Note: func(s string) { notes = append(notes, s) }}, &notes
}

// What one run saved, the next loads: by broker and vhost, with the time
// it was learned; another broker's file is not read for it.
func TestRoundTrip(t *testing.T) {
	now := time.Now().Truncate(time.Second)
	s, notes := store(t, &now)
	known := map[string]topology.Evidence{
		"/":    {"orders.errors": {FailedIn: []string{"orders"}}},
		"shop": {"wait": {Expiration: true}},
	}
	if err := s.Save("amqp://127.0.0.1:5672", nil, known); err != nil {
		t.Fatal(err)
	}
	m := s.Load("amqp://127.0.0.1:5672")
	got := m.Evidence()
	if len(got) != 2 || !got["/"]["orders.errors"].Equal(known["/"]["orders.errors"]) || !got["shop"]["wait"].Equal(known["shop"]["wait"]) {
		t.Fatalf("loaded %+v, want %+v", got, known)
	}
	if !m["/"]["orders.errors"].Learned.Equal(now) {
		t.Errorf("learned at %v, want %v", m["/"]["orders.errors"].Learned, now)
	}
	if other := s.Load("amqp://127.0.0.1:5673"); len(other) != 0 {
		t.Errorf("another broker loaded %+v", other)
	}
	ents, err := filepath.Glob(filepath.Join(s.Dir, "*"))
	if err != nil || len(ents) != 2 {
		t.Fatalf("files %v (%v), want the one and its lock (no temporary left)", ents, err)
	}
	path := s.path("amqp://127.0.0.1:5672")
	info, err := os.Stat(path)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("file %s: %v, want mode 0600", path, err)
	}
	b, _ := os.ReadFile(path)
	if strings.Contains(path, "127.0.0.1") || !strings.Contains(string(b), `"broker":"amqp://127.0.0.1:5672"`) {
		t.Errorf("file %s: %s", path, b)
	}
	if len(*notes) != 0 {
		t.Errorf("notes %q", *notes)
	}

	// A later run that learned nothing new keeps the time it was learned;
	// what it learned is learned then, and the other vhost stays.
	later := now.Add(time.Hour)
	now = later
	base := s.Load("amqp://127.0.0.1:5672")
	next := map[string]topology.Evidence{"/": {"orders.errors": {FailedIn: []string{"orders"}}, "billing.errors": {FailedIn: []string{"billing"}}}}
	if err := s.Save("amqp://127.0.0.1:5672", base, next); err != nil {
		t.Fatal(err)
	}
	m = s.Load("amqp://127.0.0.1:5672")
	if !m["/"]["orders.errors"].Learned.Equal(later.Add(-time.Hour)) || !m["/"]["billing.errors"].Learned.Equal(later) || len(m["shop"]) != 1 {
		t.Errorf("after the second run: %+v", m)
	}
}

// Evidence older than a day is forgotten on load.
func TestExpiry(t *testing.T) {
	now := time.Now().Truncate(time.Second)
	s, _ := store(t, &now)
	if err := s.Save("b", nil, map[string]topology.Evidence{"/": {"old": {Rejected: true}}}); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Hour)
	if err := s.Save("b", s.Load("b"), map[string]topology.Evidence{"/": {"new": {Rejected: true}}}); err != nil {
		t.Fatal(err)
	}
	now = now.Add(TTL - 30*time.Minute) // old is 24h30m old, new 23h30m
	m := s.Load("b")
	if _, ok := m["/"]["old"]; ok {
		t.Errorf("a day-old entry loaded: %+v", m)
	}
	if _, ok := m["/"]["new"]; !ok {
		t.Errorf("a recent entry forgotten: %+v", m)
	}
}

// A vhost keeps its MaxQueues latest learned queues, a broker its
// MaxVhosts latest vhosts, the directory its MaxBrokers latest files.
func TestBound(t *testing.T) {
	now := time.Now().Truncate(time.Second)
	s, _ := store(t, &now)
	first := topology.Evidence{}
	for i := range MaxQueues {
		first[fmt.Sprintf("q%04d", i)] = topology.Seen{Rejected: true}
	}
	if err := s.Save("b", nil, map[string]topology.Evidence{"/": first}); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Minute)
	if err := s.Save("b", s.Load("b"), map[string]topology.Evidence{"/": {"late": {Rejected: true}}}); err != nil {
		t.Fatal(err)
	}
	m := s.Load("b")
	if len(m["/"]) != MaxQueues {
		t.Errorf("%d queues remembered, want %d", len(m["/"]), MaxQueues)
	}
	if _, ok := m["/"]["late"]; !ok {
		t.Error("the latest learned queue was dropped")
	}

	vhosts := map[string]topology.Evidence{}
	for i := range MaxVhosts + 5 {
		vhosts[fmt.Sprintf("v%03d", i)] = topology.Evidence{"q": {Rejected: true}}
	}
	if err := s.Save("c", nil, vhosts); err != nil {
		t.Fatal(err)
	}
	if m := s.Load("c"); len(m) != MaxVhosts {
		t.Errorf("%d vhosts remembered, want %d", len(m), MaxVhosts)
	}

	for i := range MaxBrokers + 3 {
		if err := s.Save(fmt.Sprintf("broker%d", i), nil, map[string]topology.Evidence{"/": {"q": {Rejected: true}}}); err != nil {
			t.Fatal(err)
		}
		// Files' times tell which was written last.
		at := time.Now().Add(time.Duration(i-MaxBrokers-10) * time.Second)
		if err := os.Chtimes(s.path(fmt.Sprintf("broker%d", i)), at, at); err != nil {
			t.Fatal(err)
		}
	}
	files, _ := filepath.Glob(filepath.Join(s.Dir, "*.json"))
	locks, _ := filepath.Glob(filepath.Join(s.Dir, "*.lock"))
	if len(files) > MaxBrokers || len(locks) > MaxBrokers {
		t.Errorf("%d files, %d lock files, want at most %d", len(files), len(locks), MaxBrokers)
	}
	if m := s.Load(fmt.Sprintf("broker%d", MaxBrokers+2)); len(m) == 0 {
		t.Error("the latest broker's file was pruned")
	}
}

// A corrupt file is ignored with a note, never a failure, and the next
// save replaces it.
func TestCorrupt(t *testing.T) {
	now := time.Now().Truncate(time.Second)
	s, notes := store(t, &now)
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.path("b"), []byte(`{"broker":"b","vhosts":{"/":`), 0o600); err != nil {
		t.Fatal(err)
	}
	if m := s.Load("b"); len(m) != 0 {
		t.Errorf("loaded %+v from a corrupt file", m)
	}
	if len(*notes) != 1 || !strings.Contains((*notes)[0], "ignored") {
		t.Errorf("notes %q, want one saying the file was ignored", *notes)
	}
	if err := s.Save("b", nil, map[string]topology.Evidence{"/": {"q": {Rejected: true}}}); err != nil {
		t.Fatal(err)
	}
	if m := s.Load("b"); !m["/"]["q"].Seen.Rejected {
		t.Errorf("after saving over the corrupt file: %+v", m)
	}
	// A file another broker's key wrote (a hash collision, a copied file)
	// is not taken for this one's.
	if err := os.WriteFile(s.path("b"), []byte(`{"broker":"other","vhosts":{"/":{"q":{"learned":"`+now.Format(time.RFC3339)+`","seen":{"Rejected":true}}}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if m := s.Load("b"); len(m) != 0 {
		t.Errorf("loaded another broker's file: %+v", m)
	}
}

// Runs that save at once each keep what they learned.
func TestConcurrentSavesKeepEach(t *testing.T) {
	now := time.Now().Truncate(time.Second)
	s, _ := store(t, &now)
	const runs = 8
	errs := make(chan error, runs)
	for i := range runs {
		go func() {
			// Each run its own Store, as each process has.
			own := &Store{Dir: s.Dir, Now: s.Now}
			errs <- own.Save("b", nil, map[string]topology.Evidence{"/": {fmt.Sprintf("q%d", i): {Rejected: true}}})
		}()
	}
	for range runs {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if m := s.Load("b"); len(m["/"]) != runs {
		t.Errorf("%d of %d runs' evidence kept: %+v", len(m["/"]), runs, m)
	}
}
