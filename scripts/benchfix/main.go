// Command benchfix builds and removes the fixtures scripts/bench.sh times
// the ladder binary, curl and the TUI against:
//
//	benchfix ladders VHOST N        a new vhost holding N ladders (5 queues each: main, three TTL tiers, DLQ; with their bindings)
//	benchfix vhosts PREFIX K N      K new vhosts PREFIX00 … PREFIX(K-1) (two digits at least), N ladders each
//	benchfix queue VHOST QUEUE N [BYTES]
//	                                a new vhost holding QUEUE with N persistent messages of BYTES (default 1 KiB; ids peek-00000…)
//	benchfix dlqs VHOST K N         N persistent 1 KiB messages in each of the first K ladders' DLQs (svc000.dlq …) of a vhost made by ladders
//	benchfix ready VHOST QUEUE N    wait (up to a minute) until QUEUE's exact ready count (a passive declare) is N
//	benchfix proxy URLFILE LOGFILE  a proxy to the management API on a free local port, its URL written to URLFILE;
//	                                each request it passes on appended to LOGFILE ("GET /api/queues?…"); until SIGTERM
//	benchfix sweep [-benchmarks] PREFIX
//	                                delete the vhosts named PREFIX…; with -benchmarks also what interrupted Go
//	                                benchmarks left: vhosts, and in / queues and exchanges, named ladder-test.Benchmark…,
//	                                shovels named bench-shovel-… (only after a failed run: others' running benchmarks
//	                                use the same names)
//	benchfix ssh-key KEYFILE        a new ed25519 private key in KEYFILE (0600); its authorized-keys line
//	                                (role=read-only) on stdout
//	benchfix ssh-sessions ADDR KEYFILE N SECONDS
//	                                N SSH sessions at once to ladder serve at ADDR (key KEYFILE, an 80×24 pty each),
//	                                each waited for until its screen shows LADDERS, kept open SECONDS after all are
//	                                (output drained), then ended with q; a line per session (ready after how long, or
//	                                its error), then "all N sessions ready" and "all N sessions closed"
//
// It reads the broker from LADDER_TEST_AMQP_URL and LADDER_TEST_API_URL, like the tests
// (ssh-key and ssh-sessions do not touch the broker).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/broker/rabbit"
)

// benchPrefix starts the names the Go benchmarks give what they declare
// (brokertest.Name of a Benchmark…).
const benchPrefix = brokertest.VhostPrefix + "Benchmark"

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "benchfix:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	usage := errors.New("usage: benchfix ladders VHOST N | vhosts PREFIX K N | queue VHOST QUEUE N [BYTES] | dlqs VHOST K N | ready VHOST QUEUE N | proxy URLFILE LOGFILE | sweep [-benchmarks] PREFIX | ssh-key KEYFILE | ssh-sessions ADDR KEYFILE N SECONDS")
	if len(args) == 0 {
		return usage
	}
	switch {
	case args[0] == "ssh-key" && len(args) == 2:
		return sshKey(args[1])
	case args[0] == "ssh-sessions" && len(args) == 5:
		n, err1 := strconv.Atoi(args[3])
		secs, err2 := strconv.Atoi(args[4])
		if err1 != nil || err2 != nil || n < 1 || secs < 0 {
			return usage
		}
		return sshSessions(args[1], args[2], n, time.Duration(secs)*time.Second)
	}
	r, err := brokertest.Config().Resolve()
	if err != nil {
		return err
	}
	switch {
	case args[0] == "ladders" && len(args) == 3:
		n, err := strconv.Atoi(args[2])
		if err != nil {
			return usage
		}
		return ladders(r, args[1], n)
	case args[0] == "vhosts" && len(args) == 4 && args[1] != "":
		k, err1 := strconv.Atoi(args[2])
		n, err2 := strconv.Atoi(args[3])
		if err1 != nil || err2 != nil || k < 1 {
			return usage
		}
		for i := range k {
			if err := ladders(r, fmt.Sprintf("%s%02d", args[1], i), n); err != nil {
				return err
			}
		}
		return nil
	case args[0] == "proxy" && len(args) == 3:
		return proxy(r, args[1], args[2])
	case args[0] == "dlqs" && len(args) == 4:
		k, err1 := strconv.Atoi(args[2])
		n, err2 := strconv.Atoi(args[3])
		if err1 != nil || err2 != nil {
			return usage
		}
		return dlqs(r, args[1], k, n)
	case args[0] == "queue" && (len(args) == 4 || len(args) == 5):
		n, err := strconv.Atoi(args[3])
		if err != nil {
			return usage
		}
		size := len(brokertest.BenchBody)
		if len(args) == 5 {
			if size, err = strconv.Atoi(args[4]); err != nil || size < 0 {
				return usage
			}
		}
		return queue(r, args[1], args[2], n, size)
	case args[0] == "ready" && len(args) == 4:
		n, err := strconv.Atoi(args[3])
		if err != nil {
			return usage
		}
		return ready(r, args[1], args[2], n)
	case args[0] == "sweep" && len(args) == 2 && args[1] != "":
		return sweep(r, args[1], false)
	case args[0] == "sweep" && len(args) == 3 && args[1] == "-benchmarks" && args[2] != "":
		return sweep(r, args[2], true)
	}
	return usage
}

// vhost creates vhost with every permission for the broker's user and
// returns an AMQP channel on it.
func vhost(r *rabbit.Resolved, name string) (*amqp.Connection, *amqp.Channel, error) {
	if err := brokertest.API(r, http.MethodPut, "vhosts/"+url.PathEscape(name), nil); err != nil {
		return nil, nil, err
	}
	perm, _ := json.Marshal(map[string]string{"configure": ".*", "write": ".*", "read": ".*"})
	if err := brokertest.API(r, http.MethodPut, "permissions/"+url.PathEscape(name)+"/"+url.PathEscape(r.APIUser), perm); err != nil {
		return nil, nil, err
	}
	own := *r
	own.Vhost = name
	conn, err := own.DialAMQP(context.Background(), "benchfix")
	if err != nil {
		return nil, nil, err
	}
	ch, err := conn.Channel()
	if err != nil {
		conn.Close()
		return nil, nil, err
	}
	return conn, ch, nil
}

func ladders(r *rabbit.Resolved, name string, n int) error {
	conn, ch, err := vhost(r, name)
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := brokertest.DeclareLadders(ch, n); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "benchfix: vhost %s: %d ladders, %d queues\n", name, n, 5*n)
	return nil
}

// dlqs fills the DLQs of the first k ladders of a vhost that ladders made
// with n messages each: a big vhost where a few DLQs hold messages.
func dlqs(r *rabbit.Resolved, name string, k, n int) error {
	conn, ch, err := vhost(r, name)
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := ch.Confirm(false); err != nil {
		return err
	}
	for i := range k {
		q := fmt.Sprintf("svc%03d.dlq", i)
		if err := brokertest.PublishConfirmed(context.Background(), ch, "", q, brokertest.BenchMessages(n, q)); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	fmt.Fprintf(os.Stderr, "benchfix: vhost %s: %d messages in each of %d DLQs\n", name, n, k)
	return nil
}

func queue(r *rabbit.Resolved, name, q string, n, size int) error {
	conn, ch, err := vhost(r, name)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := ch.QueueDeclare(q, true, false, false, false, nil); err != nil {
		return err
	}
	if err := ch.Confirm(false); err != nil {
		return err
	}
	msgs := brokertest.BenchMessages(n, "peek")
	if size != len(brokertest.BenchBody) {
		body := []byte(strings.Repeat("x", size)) // one body, shared: the fixture's memory stays small
		for i := range msgs {
			msgs[i].Body = body
		}
	}
	if err := brokertest.PublishConfirmed(context.Background(), ch, "", q, msgs); err != nil {
		return err
	}
	got, err := ch.QueueDeclarePassive(q, true, false, false, false, nil)
	if err != nil {
		return err
	}
	if got.Messages != n {
		return fmt.Errorf("%s: %d messages, want %d", q, got.Messages, n)
	}
	fmt.Fprintf(os.Stderr, "benchfix: vhost %s: queue %s with %d messages\n", name, q, n)
	return nil
}

// ready waits until q holds n ready messages: a management "Get messages"
// or a peek returns what it took a moment after it answered.
func ready(r *rabbit.Resolved, vhost, q string, n int) error {
	own := *r
	own.Vhost = vhost
	conn, err := own.DialAMQP(context.Background(), "benchfix")
	if err != nil {
		return err
	}
	defer conn.Close()
	deadline := time.Now().Add(time.Minute)
	for {
		ch, err := conn.Channel()
		if err != nil {
			return err
		}
		got, err := ch.QueueDeclarePassive(q, true, false, false, false, nil)
		ch.Close()
		if err != nil {
			return err
		}
		if got.Messages == n {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: %d ready, want %d", q, got.Messages, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func sweep(r *rabbit.Resolved, prefix string, benchmarks bool) error {
	var errs []error
	del := func(path string) {
		if err := brokertest.API(r, http.MethodDelete, path, nil); err != nil && !strings.Contains(err.Error(), "404") {
			errs = append(errs, err)
		}
	}
	var vhosts []struct{ Name string }
	if err := get(r, "vhosts?columns=name", &vhosts); err != nil {
		return err
	}
	n := 0
	for _, v := range vhosts {
		if strings.HasPrefix(v.Name, prefix) || benchmarks && strings.HasPrefix(v.Name, benchPrefix) {
			del("vhosts/" + url.PathEscape(v.Name))
			n++
		}
	}
	if !benchmarks {
		if n > 0 {
			fmt.Fprintf(os.Stderr, "benchfix: swept %d vhosts\n", n)
		}
		return errors.Join(errs...)
	}
	var shovels []struct{ Name string }
	if err := get(r, "parameters/shovel/%2F", &shovels); err != nil && !strings.Contains(err.Error(), "404") {
		errs = append(errs, err)
	}
	for _, s := range shovels {
		if strings.HasPrefix(s.Name, "bench-shovel-") {
			del("parameters/shovel/%2F/" + url.PathEscape(s.Name))
			n++
		}
	}
	for _, kind := range []string{"queues", "exchanges"} {
		var list []struct{ Name string }
		if err := get(r, kind+"/%2F?columns=name", &list); err != nil {
			errs = append(errs, err)
			continue
		}
		for _, x := range list {
			if strings.HasPrefix(x.Name, benchPrefix) {
				del(kind + "/%2F/" + url.PathEscape(x.Name))
				n++
			}
		}
	}
	if n > 0 {
		fmt.Fprintf(os.Stderr, "benchfix: swept %d objects (vhosts, shovels, queues, exchanges)\n", n)
	}
	return errors.Join(errs...)
}

// proxy passes every request on to the management API and appends its
// method and path (with the query) to logFile, one line each: how many
// requests a command makes (scripts/bench.sh points ladder's --api-url at
// it). The URL to use is written to urlFile once it listens.
func proxy(r *rabbit.Resolved, urlFile, logFile string) error {
	log, err := os.OpenFile(logFile, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	defer log.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	target := *r.APIURL
	target.Path, target.RawPath = "", ""
	rp := httputil.NewSingleHostReverseProxy(&target)
	var mu sync.Mutex
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		mu.Lock()
		fmt.Fprintf(log, "%s %s\n", req.Method, req.URL.RequestURI())
		mu.Unlock()
		rp.ServeHTTP(w, req)
	})}
	// Written whole, then renamed: whoever waits for the file reads all of it.
	tmp := urlFile + ".tmp"
	if err := os.WriteFile(tmp, []byte("http://"+ln.Addr().String()+r.APIURL.Path+"\n"), 0o600); err != nil {
		return err
	}
	if err := os.Rename(tmp, urlFile); err != nil {
		return err
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, os.Interrupt)
	done := make(chan struct{})
	go func() {
		defer close(done)
		<-stop
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx) // lets a request under way finish
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	<-done
	return nil
}

// get reads one management API path (after /api/) into out.
func get(r *rabbit.Resolved, path string, out any) error {
	req, err := http.NewRequest(http.MethodGet, r.APIURL.String()+"/api/"+path, nil)
	if err != nil {
		return err
	}
	if err := r.SetAPIAuth(req); err != nil {
		return err
	}
	c := http.Client{Timeout: 30 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("GET /api/%s: %s %s", path, resp.Status, strings.TrimSpace(string(msg)))
	}
	return json.NewDecoder(resp.Body).Decode(out)
}
