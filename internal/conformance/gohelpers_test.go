package conformance

// Helpers of the framework conformance tests (MassTransit, NServiceBus,
// Spring): every identifier is prefixed gc so that they cannot collide with
// another helper file of this package.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/broker/rabbit"
	"github.com/ladder-tui/ladder/internal/cli"
)

// gcBound is the generous bound of every wait: a busy machine is slow, a
// wait returns as soon as what it waits for is there.
const gcBound = 30 * time.Second

// gcEnv is one test's broker: its own vhost and a confirm-mode channel on it.
type gcEnv struct {
	t  *testing.T
	r  *rabbit.Resolved
	ch *amqp.Channel
	// returns gets the channel's returned (unroutable mandatory) messages.
	returns chan amqp.Return
	// version is the broker's RabbitMQ version ("3.10.8").
	version string
}

// gcStart gives the test a vhost of its own (deleted at its end) on the
// test broker (skipped without one, failed under LADDER_REQUIRE_BROKER=1),
// and a channel on it in confirm mode.
func gcStart(t *testing.T) *gcEnv {
	t.Helper()
	r := brokertest.OwnVhost(t)
	ch := brokertest.Channel(t, r, "conformance test")
	if err := ch.Confirm(false); err != nil {
		t.Fatalf("confirm mode: %v", err)
	}
	e := &gcEnv{t: t, r: r, ch: ch, returns: ch.NotifyReturn(make(chan amqp.Return, 64))}
	var ov struct {
		Version string `json:"rabbitmq_version"`
	}
	e.apiGet("overview", &ov)
	e.version = ov.Version
	return e
}

// is4 says whether the broker is RabbitMQ 4 or later.
func (e *gcEnv) is4() bool { return !strings.HasPrefix(e.version, "3.") }

func (e *gcEnv) must(err error, what string) {
	e.t.Helper()
	if err != nil {
		e.t.Fatalf("%s: %v", what, err)
	}
}

// apiGet decodes the management API's answer to GET /api/path into v.
func (e *gcEnv) apiGet(path string, v any) {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodGet, e.r.APIURL.String()+"/api/"+path, nil)
	e.must(err, "GET "+path)
	e.must(e.r.SetAPIAuth(req), "GET "+path)
	resp, err := (&http.Client{Timeout: gcBound}).Do(req)
	e.must(err, "GET "+path)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		e.t.Fatalf("GET /api/%s: %s %s", path, resp.Status, body)
	}
	e.must(json.Unmarshal(body, v), "decode /api/"+path)
}

// publish publishes p and waits for the broker's confirm; mandatory
// publishes that come back unroutable fail the test (a framework's
// mandatory send would throw). The broker sends a return before the
// confirm, and the client hands it over before it reads the confirm.
func (e *gcEnv) publish(exchange, key string, mandatory bool, p amqp.Publishing) {
	e.t.Helper()
	dc, err := e.ch.PublishWithDeferredConfirmWithContext(context.Background(), exchange, key, mandatory, false, p)
	e.must(err, fmt.Sprintf("publish to %q key %q", exchange, key))
	ctx, cancel := context.WithTimeout(context.Background(), gcBound)
	defer cancel()
	ok, err := dc.WaitContext(ctx)
	if err != nil || !ok {
		e.t.Fatalf("publish to %q key %q not confirmed: %v", exchange, key, err)
	}
	select {
	case ret := <-e.returns:
		e.t.Fatalf("publish to %q key %q returned: %s", exchange, key, ret.ReplyText)
	default:
	}
}

// take gets the next message of q, polling until one is there.
func (e *gcEnv) take(q string) amqp.Delivery {
	e.t.Helper()
	for deadline := time.Now().Add(gcBound); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		d, ok, err := e.ch.Get(q, false)
		e.must(err, "get from "+q)
		if ok {
			return d
		}
	}
	e.t.Fatalf("nothing came to %s in %v", q, gcBound)
	return amqp.Delivery{}
}

// depth is q's ready count as the queue's declare says it (exact, unlike the
// management API's sampled figures).
func (e *gcEnv) depth(q string) int {
	e.t.Helper()
	st, err := e.ch.QueueDeclarePassive(q, true, false, false, false, nil)
	e.must(err, "declare passive "+q)
	return st.Messages
}

// waitDepth waits until q holds n ready messages.
func (e *gcEnv) waitDepth(q string, n int) {
	e.t.Helper()
	deadline := time.Now().Add(gcBound)
	for e.depth(q) != n {
		if time.Now().After(deadline) {
			e.t.Fatalf("%s holds %d, want %d (waited %v)", q, e.depth(q), n, gcBound)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ladder runs ladder in-process on the test's vhost: its exit code, stdout
// and stderr.
func (e *gcEnv) ladder(args ...string) (int, string, string) {
	e.t.Helper()
	cfg := brokertest.Config()
	args = append(args, "--amqp-url", cfg.AMQPURL, "--api-url", cfg.APIURL, "--vhost", e.r.Vhost)
	if cfg.PrometheusURL != "" {
		args = append(args, "--prometheus-url", cfg.PrometheusURL)
	}
	var out, errb bytes.Buffer
	code := cli.Run(args, strings.NewReader(""), &out, &errb, cli.Build{})
	return code, out.String(), errb.String()
}

// ladderJSON runs ladder with -o json, fails on a non-zero exit, and decodes
// its output into v; it returns the output for messages.
func (e *gcEnv) ladderJSON(v any, args ...string) string {
	e.t.Helper()
	code, out, errOut := e.ladder(append(args, "-o", "json")...)
	if code != 0 {
		e.t.Fatalf("ladder %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, out, errOut)
	}
	if err := json.Unmarshal([]byte(out), v); err != nil {
		e.t.Fatalf("ladder %s: output is not the JSON expected: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// gcQueue is a queue of `topology -o json`.
type gcQueue struct {
	Name      string `json:"name"`
	Type      string `json:"type"`
	Messages  int64  `json:"messages"`
	Consumers *int   `json:"consumers"`
}

// gcTier is a tier of `topology -o json`.
type gcTier struct {
	gcQueue
	TTLMS int64 `json:"ttl_ms"`
}

// gcDelay is a shared delay infrastructure of a ladder (NServiceBus's delay
// levels): its name, queues and the shortest and longest wait.
type gcDelay struct {
	Name     string          `json:"name"`
	Queues   json.RawMessage `json:"queues"`
	MinTTLMS int64           `json:"min_ttl_ms"`
	MaxTTLMS int64           `json:"max_ttl_ms"`
	// Levels are the levels that deliver to the ladder's main.
	Levels []struct {
		Queue string `json:"queue"`
		TTLMS int64  `json:"ttl_ms"`
	} `json:"levels"`
}

// queues names the delay's queues.
func (d gcDelay) queues() []string { return gcNames(d.Queues) }

// gcLadder is one ladder of `topology -o json`, with the fields that tell a
// framework's shape: where its DLQ was found (dlq_from), its further error
// queues, shared delays and whether it retries in the consumer.
type gcLadder struct {
	Main              gcQueue         `json:"main"`
	Tiers             []gcTier        `json:"tiers"`
	WaitQueues        []gcQueue       `json:"wait_queues"`
	DLQ               *gcQueue        `json:"dlq"`
	DLQFrom           string          `json:"dlq_from"`
	ErrorQueues       json.RawMessage `json:"error_queues"`
	Delays            []gcDelay       `json:"delays"`
	RetriesInConsumer bool            `json:"retries_in_consumer"`
}

// errorQueues names the ladder's error queues.
func (l gcLadder) errorQueues() []string { return gcNames(l.ErrorQueues) }

// gcNames reads a JSON list of queues, whether of names or of queue objects.
func gcNames(raw json.RawMessage) []string {
	var names []string
	if json.Unmarshal(raw, &names) == nil {
		return names
	}
	// A failed decode leaves what it filled in: start again.
	names = nil
	var qs []gcQueue
	if json.Unmarshal(raw, &qs) == nil {
		for _, q := range qs {
			names = append(names, q.Name)
		}
	}
	return names
}

func (l gcLadder) tierNames() []string {
	var out []string
	for _, t := range l.Tiers {
		out = append(out, t.Name)
	}
	return out
}

// gcFinding is a finding of `topology -o json`.
type gcFinding struct {
	Code    string `json:"code"`
	Queue   string `json:"queue"`
	Message string `json:"message"`
}

// gcTopology is `topology -o json`.
type gcTopology struct {
	Ladders  []gcLadder  `json:"ladders"`
	Findings []gcFinding `json:"findings"`
	Other    []gcQueue   `json:"other_queues"`
}

// topology runs `ladder topology -o json`; raw is its output, for messages.
func (e *gcEnv) topology() (top gcTopology, raw string) {
	e.t.Helper()
	raw = e.ladderJSON(&top, "topology")
	return top, raw
}

// ladderOf is the one ladder whose main is main; ok is false, and the test
// has failed, when there is none or more than one (the test goes on to
// peek and move: their failures say more).
func (top gcTopology) ladderOf(t *testing.T, main, raw string) (l gcLadder, ok bool) {
	t.Helper()
	var found []gcLadder
	for _, l := range top.Ladders {
		if l.Main.Name == main {
			found = append(found, l)
		}
	}
	if len(found) != 1 {
		t.Errorf("topology has %d ladders with main %s, want exactly 1:\n%s", len(found), main, raw)
		return gcLadder{}, false
	}
	return found[0], true
}

// mains names the main queue of every ladder.
func (top gcTopology) mains() []string {
	var out []string
	for _, l := range top.Ladders {
		out = append(out, l.Main.Name)
	}
	slices.Sort(out)
	return out
}

// findingsOn lists the findings against any of queues, as "code queue".
func (top gcTopology) findingsOn(queues ...string) []string {
	var out []string
	for _, f := range top.Findings {
		if slices.Contains(queues, f.Queue) {
			out = append(out, f.Code+" "+f.Queue+": "+f.Message)
		}
	}
	return out
}

// gcRetry is a peeked message's decoded retry state.
type gcRetry struct {
	Count         int64     `json:"count"`
	Source        string    `json:"source"`
	Framework     string    `json:"framework"`
	LastError     string    `json:"last_error"`
	LastErrorTime time.Time `json:"last_error_time"`
	ErrorSource   string    `json:"error_source"`
	ErrorType     string    `json:"error_type"`
	FailedQueue   string    `json:"failed_queue"`
}

// gcOrigin is where a peeked message came from, as ladder reads it.
type gcOrigin struct {
	Exchange   string `json:"exchange"`
	RoutingKey string `json:"routing_key"`
	By         string `json:"by"`
}

// gcMessage is one message of `peek -o json`.
type gcMessage struct {
	Properties struct {
		MessageID string `json:"message_id"`
	} `json:"properties"`
	Retry  gcRetry   `json:"retry"`
	Origin *gcOrigin `json:"origin"`
}

// peek runs `ladder peek q -n n -o json` (with extra flags) and returns its
// messages by id.
func (e *gcEnv) peek(q string, n int, extra ...string) map[string]gcMessage {
	e.t.Helper()
	var res struct {
		Messages []gcMessage `json:"messages"`
	}
	out := e.ladderJSON(&res, append([]string{"peek", q, "-n", fmt.Sprint(n)}, extra...)...)
	byID := map[string]gcMessage{}
	for _, m := range res.Messages {
		byID[m.Properties.MessageID] = m
	}
	if len(byID) != n {
		e.t.Fatalf("peek %s: %d messages by id, want %d:\n%s", q, len(byID), n, out)
	}
	return byID
}

// gcMove is `move -o json`'s report.
type gcMove struct {
	Requested int    `json:"requested"`
	Moved     int    `json:"moved"`
	Failed    int    `json:"failed"`
	Skipped   int    `json:"skipped"`
	Target    string `json:"target"`
	Planned   []struct {
		MessageID string   `json:"message_id"`
		Reaches   []string `json:"reaches"`
		Skip      string   `json:"skip"`
	} `json:"planned"`
	Notes []string `json:"notes"`
}

// moveToOrigin dry-runs `move --from q --to origin` and checks that it
// plans every message of homes (id → the queue it failed in) to reach its
// home and nothing else, then moves them for real, without a question
// (--yes), and checks that all moved.
func (e *gcEnv) moveToOrigin(q string, homes map[string]string, extra ...string) {
	e.t.Helper()
	n := len(homes)
	args := append([]string{"move", "--from", q, "--to", "origin"}, extra...)
	var plan gcMove
	out := e.ladderJSON(&plan, append(args, "--dry-run")...)
	if len(plan.Planned) != n {
		e.t.Fatalf("dry run of the move from %s plans %d messages, want %d:\n%s", q, len(plan.Planned), n, out)
	}
	for _, p := range plan.Planned {
		want, ok := homes[p.MessageID]
		if !ok || p.Skip != "" || !slices.Equal(p.Reaches, []string{want}) {
			e.t.Errorf("dry run: %s would reach %v (skip %q), want [%s] only:\n%s", p.MessageID, p.Reaches, p.Skip, want, out)
		}
	}
	var rep gcMove
	out = e.ladderJSON(&rep, append(args, "--yes")...)
	if rep.Moved != n || rep.Failed != 0 || rep.Skipped != 0 {
		e.t.Fatalf("move from %s to origin: moved %d of %d (failed %d, skipped %d):\n%s", q, rep.Moved, n, rep.Failed, rep.Skipped, out)
	}
}

// idsEverywhere takes every message out of every queue of the vhost and
// counts them by queue and id: where each message is, and nowhere else.
func (e *gcEnv) idsEverywhere() map[string]map[string]int {
	e.t.Helper()
	var qs []struct {
		Name string `json:"name"`
	}
	e.apiGet("queues/"+url.PathEscape(e.r.Vhost)+"?columns=name", &qs)
	out := map[string]map[string]int{}
	for _, q := range qs {
		for {
			d, ok, err := e.ch.Get(q.Name, true)
			e.must(err, "get from "+q.Name)
			if !ok {
				break
			}
			if out[q.Name] == nil {
				out[q.Name] = map[string]int{}
			}
			out[q.Name][d.MessageId]++
		}
	}
	return out
}

// checkBackIn checks that each message of homes (id → the queue it failed
// in) is in its home once and in no other queue of the vhost, and that no
// other message is anywhere.
func (e *gcEnv) checkBackIn(homes map[string]string) {
	e.t.Helper()
	where := e.idsEverywhere()
	for id, home := range homes {
		if where[home][id] != 1 {
			e.t.Errorf("%s is in %s %d times, want once", id, home, where[home][id])
		}
		for q, byID := range where {
			if q != home && byID[id] > 0 {
				e.t.Errorf("%s is also in %s (%d times)", id, q, byID[id])
			}
		}
	}
	for q, byID := range where {
		for id, n := range byID {
			if _, ok := homes[id]; !ok {
				e.t.Errorf("%s holds %q %d times, a message the test did not send", q, id, n)
			}
		}
	}
}

// gcHomes says that every message of ids failed in home.
func gcHomes(home string, ids ...[]string) map[string]string {
	out := map[string]string{}
	for _, some := range ids {
		for _, id := range some {
			out[id] = home
		}
	}
	return out
}

// gcIDs is n distinct message ids.
func gcIDs(prefix string, n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s-%d-%d", prefix, time.Now().UnixNano(), i)
	}
	return ids
}

// gcCopy is a copy of h (a framework mutates the headers of the message it
// forwards, not the delivery's).
func gcCopy(h amqp.Table) amqp.Table {
	out := amqp.Table{}
	for k, v := range h {
		out[k] = v
	}
	return out
}
