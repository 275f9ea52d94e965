package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/retry/topology"
)

// A move's or an unblock's preview reads the source as a peek does: on a
// quorum queue whose every read counts a delivery toward a delivery limit
// (3.10 and 4.0), without a terminal it is refused before touching the
// queue, one line naming the flag; --read-only refuses it; --force-peek
// previews, and the plan says what that counted.
func TestCLIPreviewOfALimitedQuorumQueue(t *testing.T) {
	for _, version := range []string{"", "4.0"} {
		t.Run("broker "+version, func(t *testing.T) {
			r, v := versionEnv(t, version)
			if topology.VersionAtLeast(v, 4, 3) {
				t.Skipf("RabbitMQ %s previews quorum queues without counting a delivery", v)
			}
			dlq := testQueue(t, r, "dlq", 0, nil)
			q := testQueue(t, r, "m", 3, amqp.Table{"x-queue-type": "quorum", "x-delivery-limit": int32(3),
				"x-dead-letter-exchange": "", "x-dead-letter-routing-key": dlq})
			for _, args := range [][]string{
				{"move", "--from", q, "--to", "queue:" + dlq, "--dry-run"},
				{"move", "--from", q, "--to", "queue:" + dlq, "--yes", "--dry-run", "-o", "json"},
				{"unblock", q, "--dry-run"},
				{"--read-only", "move", "--from", q, "--to", "queue:" + dlq, "--dry-run", "--force-peek"},
				{"--read-only", "unblock", q, "--dry-run", "--force-peek"},
			} {
				code, _, errOut := runLadder(t, args...)
				want := "--force-peek previews anyway"
				if args[0] == "--read-only" {
					want = "read-only"
				}
				if code != exitError || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, q) || !strings.Contains(errOut, "delivery limit of 3") || !strings.Contains(errOut, want) {
					t.Fatalf("RabbitMQ %s, %v: exit %d, %q", v, args, code, errOut)
				}
			}
			code, out, errOut := runLadder(t, "move", "--from", q, "--to", "queue:"+dlq, "--dry-run", "--force-peek", "-o", "json")
			if code != exitOK {
				t.Fatalf("--force-peek: exit %d: %s", code, errOut)
			}
			var rep broker.MoveReport
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatal(err)
			}
			if rep.Requested != 3 || !strings.Contains(strings.Join(rep.Notes, " "), "increments x-delivery-count") {
				t.Fatalf("--force-peek: requested %d, notes %q", rep.Requested, rep.Notes)
			}
			waitDepth(t, r, q, 3)
			if d := depthOf(t, r, dlq); d != 0 {
				t.Fatalf("%d dead-lettered", d)
			}
			// Only the forced preview counted a delivery.
			ids, counted := takeAll(t, r, q)
			if fmt.Sprint(ids) != "[m-0 m-1 m-2]" || fmt.Sprint(counted) != "[m-0:1 m-1:1 m-2:1]" {
				t.Fatalf("RabbitMQ %s: the queue held %v, counted %v", v, ids, counted)
			}
		})
	}
}

// On a terminal the preview is asked for with the question ladder peek
// asks; no previews nothing (the refusal stands), yes shows the plan.
func TestCLIPreviewIsAskedForOnATerminal(t *testing.T) {
	r, v := versionEnv(t, "4.0")
	dlq := testQueue(t, r, "dlq", 0, nil)
	q := testQueue(t, r, "m", 2, amqp.Table{"x-queue-type": "quorum", "x-delivery-limit": int32(3),
		"x-dead-letter-exchange": "", "x-dead-letter-routing-key": dlq})
	cfg, _ := brokertest.VersionConfig("4.0")
	env := []string{"NO_COLOR=1", "LADDER_AMQP_URL=" + cfg.AMQPURL, "LADDER_API_URL=" + cfg.APIURL}
	for _, answer := range []string{"n", "y"} {
		s := newTmux(t, "250", "30", env, "move", "--from", q, "--to", "queue:"+dlq, "--dry-run", "; echo exit=$?")
		s.waitFor("The move's preview reads the queue first: peek 2 of 2 in "+q+"? all get redelivered=true, each counts a delivery toward the delivery limit of 3", "[y/N]")
		s.keys(answer, "Enter")
		if answer == "n" {
			s.waitFor("--force-peek previews anyway", "exit=1") // the refusal stands
			continue
		}
		s.waitFor("dry run", "exit=0")
	}
	waitDepth(t, r, q, 2)
	// unblock asks before its look, saying it reads twice (nothing here
	// expires: no pick, so no preview follows the look).
	s := newTmux(t, "250", "30", env, "unblock", q, "--dry-run", "; echo exit=$?")
	s.waitFor("ladder unblock reads the queue twice (its look, then the move's preview): peek 2 of 2 in "+q+"?", "[y/N]")
	s.keys("y", "Enter")
	s.waitFor("exit=0")
	waitDepth(t, r, q, 2)
	// dump asks as peek does, and on yes writes the file afresh.
	file := filepath.Join(t.TempDir(), "d.jsonl")
	s = newTmux(t, "250", "30", env, "dump", q, "--out", file, "; echo exit=$?")
	s.waitFor("peek 2 of 2 in "+q+"?", "[y/N]")
	s.keys("y", "Enter")
	s.waitFor("exit=0")
	if b, err := os.ReadFile(file); err != nil || strings.Count(string(b), "\n") != 3 {
		t.Fatalf("dump file: %v\n%s", err, b)
	}
	waitDepth(t, r, q, 2)
	_, counted := takeAll(t, r, q)
	if fmt.Sprint(counted) != "[m-0:3 m-1:3]" {
		t.Fatalf("RabbitMQ %s: counted %v, want three deliveries each (the preview, the look and the dump said yes to)", v, counted)
	}
}
