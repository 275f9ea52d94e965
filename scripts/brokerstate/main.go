// Command brokerstate keeps the test broker as the suite found it:
//
//	brokerstate sweep          delete what interrupted runs left (ladder-test.* vhosts, queues, exchanges)
//	brokerstate save FILE      write the broker's vhosts, queues, exchanges and policies to FILE
//	brokerstate check FILE     compare the broker with FILE; exit 1 naming what was added or is gone
//	brokerstate noise up|down  fill / and vhost ladder-noise with unrelated ladders and queues, or remove them
//
// It reads the broker from LADDER_TEST_AMQP_URL and LADDER_TEST_API_URL, like the tests.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	rabbithole "github.com/michaelklishin/rabbit-hole/v2"

	"github.com/ladder-tui/ladder/broker/brokertest"
)

// testPrefix starts every name a test gives its queues, exchanges and vhosts.
const testPrefix = "ladder-test."

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "brokerstate:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	usage := errors.New("usage: brokerstate sweep | save FILE | check FILE | noise up|down")
	if len(args) == 0 {
		return usage
	}
	r, err := brokertest.Config().Resolve()
	if err != nil {
		return err
	}
	api, err := r.API()
	if err != nil {
		return err
	}
	switch {
	case args[0] == "sweep" && len(args) == 1:
		return sweep(api)
	case args[0] == "save" && len(args) == 2:
		st, err := state(api)
		if err != nil {
			return err
		}
		return os.WriteFile(args[1], []byte(strings.Join(st, "\n")+"\n"), 0o644)
	case args[0] == "check" && len(args) == 2:
		return check(api, args[1])
	case args[0] == "noise" && len(args) == 2 && args[1] == "up":
		return noiseUp(context.Background(), r, api)
	case args[0] == "noise" && len(args) == 2 && args[1] == "down":
		return noiseDown(api)
	}
	return usage
}

// state lists every vhost, queue, exchange and policy, one sorted line each.
func state(api *rabbithole.Client) ([]string, error) {
	vhosts, err := api.ListVhosts()
	if err != nil {
		return nil, fmt.Errorf("list vhosts: %w", err)
	}
	var out []string
	for _, v := range vhosts {
		out = append(out, "vhost\t"+v.Name)
		qs, err := api.ListQueuesIn(v.Name)
		if err != nil {
			return nil, fmt.Errorf("list queues in %s: %w", v.Name, err)
		}
		for _, q := range qs {
			out = append(out, "queue\t"+v.Name+"\t"+q.Name)
		}
		xs, err := api.ListExchangesIn(v.Name)
		if err != nil {
			return nil, fmt.Errorf("list exchanges in %s: %w", v.Name, err)
		}
		for _, x := range xs {
			out = append(out, "exchange\t"+v.Name+"\t"+x.Name)
		}
		ps, err := api.ListPoliciesIn(v.Name)
		if err != nil {
			return nil, fmt.Errorf("list policies in %s: %w", v.Name, err)
		}
		for _, p := range ps {
			out = append(out, "policy\t"+v.Name+"\t"+p.Name)
		}
	}
	sort.Strings(out)
	return out, nil
}

func check(api *rabbithole.Client, file string) error {
	raw, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	before := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		before[l] = true
	}
	now, err := state(api)
	if err != nil {
		return err
	}
	var added, gone []string
	seen := map[string]bool{}
	for _, l := range now {
		seen[l] = true
		if !before[l] {
			added = append(added, l)
		}
	}
	for l := range before {
		if !seen[l] {
			gone = append(gone, l)
		}
	}
	sort.Strings(gone)
	if len(added) == 0 && len(gone) == 0 {
		fmt.Fprintf(os.Stderr, "brokerstate: the broker is as the suite found it (%d objects)\n", len(now))
		return nil
	}
	for _, l := range added {
		fmt.Fprintln(os.Stderr, "left behind:", strings.ReplaceAll(l, "\t", " "))
	}
	for _, l := range gone {
		fmt.Fprintln(os.Stderr, "gone:", strings.ReplaceAll(l, "\t", " "))
	}
	return fmt.Errorf("the test run changed the broker: %d left behind, %d gone", len(added), len(gone))
}

// ours: a queue or exchange the suite declares (its tests', or its noise in /).
func ours(vhost, name string) bool {
	return strings.HasPrefix(name, testPrefix) || vhost == "/" && strings.HasPrefix(name, noisePrefix)
}

// sweep deletes what an interrupted test run left: its vhosts, and its
// queues and exchanges in every other vhost, and its noise (left in place,
// the next run would record it as the broker's own and then find it gone).
func sweep(api *rabbithole.Client) error {
	vhosts, err := api.ListVhosts()
	if err != nil {
		return fmt.Errorf("list vhosts: %w", err)
	}
	n := 0
	for _, v := range vhosts {
		if strings.HasPrefix(v.Name, testPrefix) || v.Name == noiseVhost {
			if _, err := api.DeleteVhost(v.Name); err != nil {
				return fmt.Errorf("delete vhost %s: %w", v.Name, err)
			}
			n++
			continue
		}
		qs, err := api.ListQueuesIn(v.Name)
		if err != nil {
			return fmt.Errorf("list queues in %s: %w", v.Name, err)
		}
		for _, q := range qs {
			if ours(v.Name, q.Name) {
				if _, err := api.DeleteQueue(v.Name, q.Name); err != nil && !notFound(err) {
					return fmt.Errorf("delete queue %s: %w", q.Name, err)
				}
				n++
			}
		}
		xs, err := api.ListExchangesIn(v.Name)
		if err != nil {
			return fmt.Errorf("list exchanges in %s: %w", v.Name, err)
		}
		for _, x := range xs {
			if ours(v.Name, x.Name) {
				if _, err := api.DeleteExchange(v.Name, x.Name); err != nil && !notFound(err) {
					return fmt.Errorf("delete exchange %s: %w", x.Name, err)
				}
				n++
			}
		}
	}
	if n > 0 {
		fmt.Fprintf(os.Stderr, "brokerstate: swept %d objects an interrupted run left behind\n", n)
	}
	return nil
}

func notFound(err error) bool {
	var e rabbithole.ErrorResponse
	return errors.As(err, &e) && e.StatusCode == 404
}
