// Package conformance checks ladder against real frameworks on a real
// broker: each test lets a framework's own library (driven by a script in
// testdata/<framework>/) declare its topology in a vhost of the test's own
// and fail messages down its failure path, then runs ladder in-process
// (cli.Run) on what the framework left: topology, peek, and a move back to
// where each message failed, counted by id on the broker.
//
// The tests skip with a reason when no broker answers or the framework's
// library is not installed; under LADDER_REQUIRE_BROKER=1 (scripts/test.sh,
// after scripts/clients.sh installed the libraries) either fails instead.
//
// This file is the shared harness; its names are generic so that tests of
// other frameworks can use them.
package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/broker/rabbit"
	"github.com/ladder-tui/ladder/internal/cli"
)

// scriptTimeout bounds one framework script: generous, since a loaded
// machine slows the interpreters' start; the scripts end when their last
// message reaches the dead end, not after a fixed time.
const scriptTimeout = 90 * time.Second

// requireLibrary returns the first of candidates (interpreter names or
// paths) for which probe's command succeeds: the framework's library loads. Otherwise the test skips saying what to install, or fails under
// LADDER_REQUIRE_BROKER=1, where scripts/clients.sh has installed it.
func requireLibrary(t *testing.T, what string, probe func(bin string) *exec.Cmd, candidates ...string) string {
	t.Helper()
	var why []string
	for _, c := range candidates {
		bin, err := exec.LookPath(c)
		if err != nil {
			why = append(why, err.Error())
			continue
		}
		cmd := probe(bin)
		out, err := cmd.CombinedOutput()
		if err == nil {
			return bin
		}
		why = append(why, fmt.Sprintf("%s: %v: %s", bin, err, lastLine(out)))
	}
	msg := fmt.Sprintf("%s is not installed (scripts/clients.sh installs it): %s", what, strings.Join(why, "; "))
	if os.Getenv(brokertest.EnvRequire) == "1" {
		t.Fatalf("%s (%s=1: the framework's library is required)", msg, brokertest.EnvRequire)
	}
	t.Skip(msg)
	return ""
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}

// scriptURL is the AMQP URL of r's vhost with its credentials, as the
// frameworks' clients take it.
func scriptURL(t testing.TB, r *rabbit.Resolved) string {
	user, pass := brokertest.AMQPLogin(t, r)
	u := url.URL{Scheme: r.AMQP.Scheme, User: url.UserPassword(user, pass), Host: r.AMQP.Host,
		Path: "/" + r.Vhost, RawPath: "/" + url.PathEscape(r.Vhost)}
	return u.String()
}

// runScript runs a framework's script (argv, in dir) with env added to the
// test's environment, and fails with its output when it does not exit 0
// within scriptTimeout. It logs how long the script took.
func runScript(t *testing.T, dir string, env []string, argv ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), scriptTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	if err != nil {
		t.Fatalf("%s: %v (after %s)\n%s", strings.Join(argv, " "), err, time.Since(start).Round(time.Millisecond), tail(out.String(), 4000))
	}
	t.Logf("%s: %s", filepath.Base(argv[len(argv)-1]), time.Since(start).Round(time.Millisecond))
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// testdata is the absolute path of testdata/<framework>.
func testdata(t *testing.T, framework string) string {
	t.Helper()
	d, err := filepath.Abs(filepath.Join("testdata", framework))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// runLadder runs ladder in-process on r's vhost with args; the broker is
// given by flags, not the environment, so tests may run in parallel.
func runLadder(t *testing.T, r *rabbit.Resolved, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cfg := brokertest.Config()
	args = append(args, "--amqp-url", cfg.AMQPURL, "--api-url", cfg.APIURL, "--vhost", r.Vhost)
	if cfg.PrometheusURL != "" {
		args = append(args, "--prometheus-url", cfg.PrometheusURL)
	}
	var out, errb bytes.Buffer
	code = cli.Run(args, strings.NewReader(""), &out, &errb, cli.Build{Version: "test", Commit: "test", Date: "test"})
	return code, out.String(), errb.String()
}

// ladderJSON runs a ladder command with -o json and decodes its output
// into v, failing on a non-zero exit or output that is not JSON.
func ladderJSON(t *testing.T, r *rabbit.Resolved, v any, args ...string) {
	t.Helper()
	code, out, errOut := runLadder(t, r, append(args, "-o", "json")...)
	if code != 0 {
		t.Fatalf("ladder %s: exit %d: %s", strings.Join(args, " "), code, errOut)
	}
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("ladder %s -o json: %v\n%s", strings.Join(args, " "), err, tail(out, 2000))
	}
}

// topologyReport is the part of `ladder topology -o json` these tests
// read. Ladders are kept raw too, so a test can say which field the JSON
// lacks rather than read a missing one as empty.
type topologyReport struct {
	Ladders  []json.RawMessage `json:"ladders"`
	Findings []struct {
		Code    string `json:"code"`
		Queue   string `json:"queue"`
		Message string `json:"message"`
	} `json:"findings"`
	Other []struct {
		Name string `json:"name"`
	} `json:"other_queues"`
}

// ladderReport is one ladder of topologyReport, with the fields discovery
// reports of a framework's shapes: dlq_from (how the DLQ was found: "" a
// dead-letter route, else the framework's naming), error_queues (further
// error queues found by naming), delays (delay infrastructures shared by
// ladders) and retries_in_consumer (main → DLQ with no tier: the consumer
// retries).
type ladderReport struct {
	Main struct {
		Name string `json:"name"`
	} `json:"main"`
	Tiers []tier `json:"tiers"`
	DLQ   *struct {
		Name string `json:"name"`
	} `json:"dlq"`
	DLQFrom           string          `json:"dlq_from"`
	ErrorQueues       json.RawMessage `json:"error_queues"`
	Delays            []delayReport   `json:"delays"`
	RetriesInConsumer bool            `json:"retries_in_consumer"`

	raw map[string]json.RawMessage
}

// tier is a wait tier of a ladder.
type tier struct {
	Name  string `json:"name"`
	TTLMS int64  `json:"ttl_ms"`
}

// delayReport is one shared delay infrastructure of a ladder.
type delayReport struct {
	Name     string          `json:"name"`
	Queues   json.RawMessage `json:"queues"`
	MinTTLMS int64           `json:"min_ttl_ms"`
	MaxTTLMS int64           `json:"max_ttl_ms"`
	// Levels are a chain's levels that deliver to the ladder's main.
	Levels []struct {
		Queue string `json:"queue"`
		TTLMS int64  `json:"ttl_ms"`
	} `json:"levels"`
	// PerMessageTTL: a shared wait queue and its ready queue, tied by
	// the messages seen (From).
	PerMessageTTL bool   `json:"per_message_ttl"`
	From          string `json:"from"`
}

// has says whether the ladder's JSON has field at all.
func (l *ladderReport) has(field string) bool {
	_, ok := l.raw[field]
	return ok
}

// topology runs `ladder topology -o json` on r's vhost.
func topology(t *testing.T, r *rabbit.Resolved) topologyReport {
	t.Helper()
	var rep topologyReport
	ladderJSON(t, r, &rep, "topology")
	return rep
}

// assertSampledLadder checks a shared error queue that only its messages
// tie to its queue (topology's rule 9): `topology --sample` reads n
// messages of dlq, which failed in main, and then reports main's ladder
// ending in dlq (its retries in the consumer when inConsumer), with no
// finding.
func assertSampledLadder(t *testing.T, r *rabbit.Resolved, main, dlq string, n int, inConsumer bool) {
	t.Helper()
	var rep struct {
		topologyReport
		Sampled struct {
			Queues []struct {
				Queue    string   `json:"queue"`
				Read     int      `json:"read"`
				FailedIn []string `json:"failed_in"`
			} `json:"queues"`
		} `json:"sampled"`
	}
	// The depth the framework left, as the API reports it: else the two
	// reads of a sampled topology can see dlq grow (rightly: it just did).
	brokertest.WaitManagedDepth(t, r, dlq, int64(n))
	// --fresh: what sampling reads, not what an earlier command's peek of
	// dlq taught (remembered: that link is made without sampling).
	ladderJSON(t, r, &rep, "topology", "--fresh", "--sample", fmt.Sprint(n))
	read := false
	for _, s := range rep.Sampled.Queues {
		if s.Queue == dlq {
			read = true
			if s.Read != n || !slices.Equal(s.FailedIn, []string{main}) {
				t.Errorf("sampled %s: read %d, failed in %q; want %d, [%s]", dlq, s.Read, s.FailedIn, n, main)
			}
		}
	}
	if !read {
		t.Errorf("topology --sample read %+v, want %s among them", rep.Sampled.Queues, dlq)
	}
	l := rep.ladderOf(t, main)
	if l == nil {
		return
	}
	if l.DLQ == nil || l.DLQ.Name != dlq || !strings.Contains(l.DLQFrom, "messages seen") || l.RetriesInConsumer != inConsumer {
		t.Errorf("ladder of %s: dlq %+v from %q, retries in consumer %v; want %s from the messages seen, retries in the consumer %v",
			main, l.DLQ, l.DLQFrom, l.RetriesInConsumer, dlq, inConsumer)
	}
	for _, f := range rep.Findings {
		t.Errorf("after sampling: finding on %q: %s: %s", f.Queue, f.Code, f.Message)
	}
}

// ladderOf returns the ladder whose main queue is main; when there is none
// it reports the mains ladder found and the queues it left out, and
// returns nil (the test goes on to peek and move, which do not need it).
func (rep topologyReport) ladderOf(t *testing.T, main string) *ladderReport {
	t.Helper()
	var mains []string
	for _, raw := range rep.Ladders {
		var l ladderReport
		if err := json.Unmarshal(raw, &l); err != nil {
			t.Fatalf("ladder JSON: %v: %s", err, raw)
		}
		if err := json.Unmarshal(raw, &l.raw); err != nil {
			t.Fatal(err)
		}
		if l.Main.Name == main {
			return &l
		}
		mains = append(mains, l.Main.Name)
	}
	var other []string
	for _, q := range rep.Other {
		other = append(other, q.Name)
	}
	t.Errorf("no ladder with main queue %s: ladders %q, other queues %q", main, mains, other)
	return nil
}

// mains lists the main queues of every ladder of the report.
func (rep topologyReport) mains(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, raw := range rep.Ladders {
		var l ladderReport
		if err := json.Unmarshal(raw, &l); err != nil {
			t.Fatal(err)
		}
		out = append(out, l.Main.Name)
	}
	return out
}

// findingsOn lists the codes of the findings about queue.
func (rep topologyReport) findingsOn(queue string) []string {
	var out []string
	for _, f := range rep.Findings {
		if f.Queue == queue {
			out = append(out, f.Code+": "+f.Message)
		}
	}
	return out
}

// names reads a JSON list of queue names, or of objects with a name.
func names(t *testing.T, raw json.RawMessage) []string {
	t.Helper()
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var s []string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var objs []struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(raw, &objs); err != nil {
		t.Fatalf("not a list of names or of named objects: %s", raw)
	}
	for _, o := range objs {
		s = append(s, o.Name)
	}
	return s
}

// peekReport is the part of `ladder peek -o json` these tests read.
type peekReport struct {
	Total    int64         `json:"total"`
	Messages []peekMessage `json:"messages"`
}

type peekMessage struct {
	Exchange   string `json:"exchange"`
	RoutingKey string `json:"routing_key"`
	Properties struct {
		MessageID string `json:"message_id"`
	} `json:"properties"`
	Headers map[string]any `json:"headers"`
	Retry   struct {
		Count              int64    `json:"count"`
		Source             string   `json:"source"`
		CountSource        string   `json:"count_source"`
		Guessed            []string `json:"guessed"`
		StackTrace         string   `json:"stack_trace"`
		Framework          string   `json:"framework"`
		LastError          string   `json:"last_error"`
		ErrorSource        string   `json:"error_source"`
		ErrorType          string   `json:"error_type"`
		FailedQueue        string   `json:"failed_queue"`
		OriginalExchange   string   `json:"original_exchange"`
		OriginalRoutingKey string   `json:"original_routing_key"`
		DueTime            string   `json:"due_time"`
		DueSource          string   `json:"due_source"`
	} `json:"retry"`
	Deaths      []death `json:"deaths"`
	BodyPreview string  `json:"body_preview"`
}

// death is one decoded x-death entry of a peeked message.
type death struct {
	Queue  string `json:"queue"`
	Reason string `json:"reason"`
	Count  int64  `json:"count"`
}

// peek runs `ladder peek QUEUE -n N -o json` and fails unless it shows n
// messages.
func peek(t *testing.T, r *rabbit.Resolved, queue string, n int) peekReport {
	t.Helper()
	var rep peekReport
	ladderJSON(t, r, &rep, "peek", queue, "-n", fmt.Sprint(n))
	if len(rep.Messages) != n {
		t.Fatalf("peek %s shows %d messages, want %d", queue, len(rep.Messages), n)
	}
	return rep
}

// moveToOrigin runs `ladder move --from queue --to origin --yes` and fails
// unless it reports all n moved.
func moveToOrigin(t *testing.T, r *rabbit.Resolved, queue string, n int) string {
	t.Helper()
	code, out, errOut := runLadder(t, r, "move", "--from", queue, "--to", "origin", "--yes")
	if code != 0 || !strings.Contains(out, fmt.Sprintf("moved %d of %d", n, n)) {
		t.Fatalf("move --from %s --to origin: exit %d\n%s%s", queue, code, out, errOut)
	}
	return out
}

// waitDepth polls queue's depth (a passive declare: no stats lag) until it
// is n, failing after within.
func waitDepth(t *testing.T, ch *amqp.Channel, queue string, n int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		q, err := ch.QueueDeclarePassive(queue, false, false, false, false, nil)
		if err != nil {
			t.Fatalf("depth of %s: %v", queue, err)
		}
		if q.Messages == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s holds %d messages after %s, want %d", queue, q.Messages, within, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// idsByQueue takes every message out of every queue of r's vhost and
// counts them by id (idOf) per queue: where each message is, and nothing
// anywhere else.
func idsByQueue(t *testing.T, r *rabbit.Resolved, ch *amqp.Channel, idOf func(amqp.Delivery) string) map[string]map[string]int {
	t.Helper()
	api, err := r.API()
	if err != nil {
		t.Fatal(err)
	}
	qs, err := api.ListQueuesIn(r.Vhost)
	if err != nil {
		t.Fatalf("queues of vhost %s: %v", r.Vhost, err)
	}
	out := map[string]map[string]int{}
	for _, q := range qs {
		for {
			d, ok, err := ch.Get(q.Name, true)
			if err != nil {
				t.Fatalf("get from %s: %v", q.Name, err)
			}
			if !ok {
				break
			}
			if out[q.Name] == nil {
				out[q.Name] = map[string]int{}
			}
			out[q.Name][idOf(d)]++
		}
	}
	return out
}

// assertAllIn fails unless byQueue (idsByQueue) has each of ids exactly
// once, in queue, and nothing else anywhere.
func assertAllIn(t *testing.T, byQueue map[string]map[string]int, queue string, ids []string) {
	t.Helper()
	for _, id := range ids {
		if got := byQueue[queue][id]; got != 1 {
			t.Errorf("%s holds message %s %d times, want once", queue, id, got)
		}
	}
	for q, m := range byQueue {
		for id, n := range m {
			if q != queue || !slices.Contains(ids, id) {
				t.Errorf("%s holds message %q (%d times): it should be in %s only", q, id, n, queue)
			}
		}
	}
}

// seq returns "prefix-0" … "prefix-(n-1)": the ids the scripts give.
func seq(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%d", prefix, i)
	}
	return out
}
