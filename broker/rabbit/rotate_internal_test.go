package rabbit

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// The Prometheus endpoint gets the password file's password as it is at
// each scrape: a rotated file is used by the next one, with no new
// Management. (The test brokers' endpoints ask no credentials, so this
// one is a server of the test's own that records what it was sent.)
func TestPrometheusScrapeUsesTheRotatedPassword(t *testing.T) {
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pass, _ := r.BasicAuth()
		mu.Lock()
		got = append(got, user+":"+pass)
		mu.Unlock()
		w.Header().Set("Content-Type", "text/plain")
	}))
	defer srv.Close()
	file := filepath.Join(t.TempDir(), "pw")
	write := func(pw string) {
		if err := os.WriteFile(file, []byte(pw+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("first-pw")
	prom, _ := url.Parse(srv.URL)
	prom.User = url.User("scrape")
	r, err := Config{AMQPURL: "amqp://guest:guest@127.0.0.1:1/", APIURL: srv.URL, PrometheusURL: prom.String(), PasswordFile: file}.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewManagement(r)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if _, _, err := m.prometheusScrape(context.Background(), "/"); err != nil {
		t.Fatal(err)
	}
	write("second-pw")
	if _, _, err := m.prometheusScrape(context.Background(), "/"); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 || got[0] != "scrape:first-pw" || got[1] != "scrape:second-pw" {
		t.Errorf("the endpoint was sent %q, want scrape:first-pw then scrape:second-pw", got)
	}
	// Redaction knows the password read after the rotation too.
	if msg := r.redact(errors.New("server said: bad first-pw, bad second-pw")).Error(); strings.Contains(msg, "first-pw") || strings.Contains(msg, "second-pw") {
		t.Errorf("redacted: %q", msg)
	}
}
