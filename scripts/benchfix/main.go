// Command benchfix builds and removes the fixtures scripts/bench.sh times
// the ladder binary, curl and the TUI against:
//
//	benchfix ladders VHOST N        a new vhost holding N ladders (5 queues each: main, three TTL tiers, DLQ; with their bindings)
//	benchfix queue VHOST QUEUE N [BYTES]
//	                                a new vhost holding QUEUE with N persistent messages of BYTES (default 1 KiB; ids peek-00000…)
//	benchfix dlqs VHOST K N         N persistent 1 KiB messages in each of the first K ladders' DLQs (svc000.dlq …) of a vhost made by ladders
//	benchfix ready VHOST QUEUE N    wait (up to a minute) until QUEUE's exact ready count (a passive declare) is N
//	benchfix sweep [-benchmarks] PREFIX
//	                                delete the vhosts named PREFIX…; with -benchmarks also what interrupted Go
//	                                benchmarks left: vhosts, and in / queues and exchanges, named ladder-test.Benchmark…,
//	                                shovels named bench-shovel-… (only after a failed run: others' running benchmarks
//	                                use the same names)
//
// It reads the broker from LADDER_TEST_AMQP_URL and LADDER_TEST_API_URL, like the tests.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
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
	usage := errors.New("usage: benchfix ladders VHOST N | queue VHOST QUEUE N [BYTES] | dlqs VHOST K N | ready VHOST QUEUE N | sweep [-benchmarks] PREFIX")
	if len(args) == 0 {
		return usage
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

// get reads one management API path (after /api/) into out.
func get(r *rabbit.Resolved, path string, out any) error {
	req, err := http.NewRequest(http.MethodGet, r.APIURL.String()+"/api/"+path, nil)
	if err != nil {
		return err
	}
	req.SetBasicAuth(r.APIUser, r.APIPassword)
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
