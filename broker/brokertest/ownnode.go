package brokertest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker/rabbit"
)

// The own node: a fourth RabbitMQ 4.3 node in the chroot
// (scripts/rabbitmq.sh up --version 4.3 --own) that no other test uses, for
// tests that stop it or raise its resource alarms.
const (
	// EnvTestOwnNode: 1 requires the own node (with LADDER_REQUIRE_BROKER=1
	// a test fails when it cannot start), 0 skips its tests.
	EnvTestOwnNode = "LADDER_TEST_OWNBROKER"
	OwnAMQPPort    = "5677"
	OwnAPIPort     = "15677"
	// OwnWatermark is the node's memory high watermark as rabbitmq.sh
	// configures it: what a test that lowers it restores.
	OwnWatermark = "0.4"
	// ownWait bounds starting and stopping the node.
	ownWait = 3 * time.Minute
	// ownLockWait bounds waiting for the lock other tests hold: the live
	// packages run at once (scripts/test.sh -p 3), so a test may queue
	// behind several (a crash test with two restarts takes minutes on a
	// busy machine).
	ownLockWait = 10 * time.Minute
)

// OwnNode is the own node, held by one test at a time.
type OwnNode struct {
	// Resolved reaches the node's default vhost (tests take a vhost of
	// their own on it with OwnVhostOn).
	Resolved *rabbit.Resolved
	root     string // the repository, for scripts/rabbitmq.sh
}

// RequireOwnNode gives the test the own node: started when it does not
// answer, locked against the other packages' tests (they run in parallel)
// until the test ends; it is left running (scripts/test.sh stops it). It
// skips, saying why, without root or the 4.3 chroot, unless
// LADDER_REQUIRE_BROKER=1 and LADDER_TEST_OWNBROKER=1, where it fails;
// LADDER_TEST_OWNBROKER=0 skips.
func RequireOwnNode(t testing.TB) *OwnNode {
	t.Helper()
	if os.Getenv(EnvTestOwnNode) == "0" {
		t.Skipf("%s=0", EnvTestOwnNode)
	}
	stop := t.Skipf
	if os.Getenv(EnvRequire) == "1" && os.Getenv(EnvTestOwnNode) == "1" {
		stop = t.Fatalf
	}
	if os.Geteuid() != 0 {
		stop("the own broker needs root (a node in the 4.3 chroot, started by scripts/rabbitmq.sh up --version 4.3 --own)")
	}
	state := stateDir()
	if _, err := os.Stat(filepath.Join(state, "rabbitmq-4.3", "root", "usr", "sbin", "rabbitmq-server")); err != nil {
		stop("no RabbitMQ 4.3 chroot under %s (run scripts/rabbitmq.sh up --version 4.3): %v", state, err)
	}
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	r, err := rabbit.Config{
		AMQPURL: "amqp://guest:guest@127.0.0.1:" + OwnAMQPPort + "/",
		APIURL:  "http://127.0.0.1:" + OwnAPIPort,
	}.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	n := &OwnNode{Resolved: r, root: root}
	unlock, err := lockFile(filepath.Join(state, "own-node.lock"), ownLockWait)
	if err != nil {
		t.Fatalf("own node: %v", err)
	}
	t.Cleanup(unlock)
	if !n.Answers() {
		n.Start(t)
	}
	// A run interrupted with an alarm raised (a timeout skips t.Cleanup)
	// leaves it raised: lower it first.
	if alarm, err := n.MemoryAlarm(); err != nil {
		t.Fatalf("own node: %v", err)
	} else if alarm {
		n.Ctl(t, "set_vm_memory_high_watermark", OwnWatermark)
	}
	return n
}

func stateDir() string {
	if s := os.Getenv("LADDER_STATE_DIR"); s != "" {
		return s
	}
	return "/var/tmp/ladder"
}

// repoRoot is the directory of go.mod, above the test's package.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "scripts", "rabbitmq.sh")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", errors.New("scripts/rabbitmq.sh not found above the test's directory")
		}
		dir = up
	}
}

// Answers says whether the node's AMQP port and management API accept
// connections.
func (n *OwnNode) Answers() bool {
	return probe("127.0.0.1:"+OwnAMQPPort) == nil && probe("127.0.0.1:"+OwnAPIPort) == nil
}

// script runs scripts/rabbitmq.sh with args for the own node, bounded.
func (n *OwnNode) script(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), ownWait)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(n.root, "scripts", "rabbitmq.sh"), args...)
	cmd.Env = append(os.Environ(), "LADDER_RABBITMQ_WAIT=90")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return strings.TrimSpace(out.String()), err
}

// Start starts the node and waits until its AMQP port and management API
// answer.
func (n *OwnNode) Start(t testing.TB) {
	t.Helper()
	start := time.Now()
	if out, err := n.script("up", "--version", "4.3", "--own"); err != nil {
		t.Fatalf("rabbitmq.sh up --version 4.3 --own: %v\n%s", err, out)
	}
	t.Logf("own node up in %s", time.Since(start).Round(100*time.Millisecond))
}

// Stop stops the node and waits until its AMQP port is closed.
func (n *OwnNode) Stop(t testing.TB) {
	t.Helper()
	start := time.Now()
	if out, err := n.script("down", "--version", "4.3", "--own"); err != nil {
		t.Fatalf("rabbitmq.sh down --version 4.3 --own: %v\n%s", err, out)
	}
	if n.Answers() {
		t.Fatalf("the own node still answers on %s after rabbitmq.sh down", OwnAMQPPort)
	}
	t.Logf("own node down in %s", time.Since(start).Round(100*time.Millisecond))
}

// Ctl runs rabbitmqctl against the node (rabbitmq.sh ctl --own).
func (n *OwnNode) Ctl(t testing.TB, args ...string) string {
	t.Helper()
	out, err := n.script(append([]string{"ctl", "--version", "4.3", "--own", "--"}, args...)...)
	if err != nil {
		t.Fatalf("rabbitmqctl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// MemoryAlarm says whether the node's memory alarm is raised, as its
// management API reports it.
func (n *OwnNode) MemoryAlarm() (bool, error) {
	req, err := http.NewRequest(http.MethodGet, n.Resolved.APIURL.String()+"/api/nodes?columns=name,mem_alarm", nil)
	if err != nil {
		return false, err
	}
	if err := n.Resolved.SetAPIAuth(req); err != nil {
		return false, err
	}
	c := http.Client{Timeout: 30 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	if resp.StatusCode != http.StatusOK {
		return false, fmt.Errorf("GET /api/nodes: %s", resp.Status)
	}
	var nodes []struct {
		MemAlarm bool `json:"mem_alarm"`
	}
	if err := json.Unmarshal(body, &nodes); err != nil || len(nodes) != 1 {
		return false, fmt.Errorf("GET /api/nodes: %q: %v", body, err)
	}
	return nodes[0].MemAlarm, nil
}

// MemoryAlarmNow asks the node itself (rabbitmqctl) whether its memory
// alarm is raised: the management API's answer lags by its stats interval.
func (n *OwnNode) MemoryAlarmNow(t testing.TB) bool {
	t.Helper()
	return strings.Contains(n.Ctl(t, "eval", "rabbit_alarm:get_alarms()."), "resource_limit,memory")
}

// WaitFor polls cond every 250 ms until it holds or d passed; it reports
// whether it held.
func WaitFor(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(250 * time.Millisecond)
	}
	return true
}

// ownEPMDPort is the own node's epmd port (rabbitmq.sh --own): its
// beam.smp's command line names it, and no other node's does.
const ownEPMDPort = "4377"

// Kill kills the own node's Erlang VM with SIGKILL, as a crash would
// (nothing flushed, no clean shutdown), and waits until its AMQP port is
// closed. Start brings it back.
func (n *OwnNode) Kill(t testing.TB) {
	t.Helper()
	pids, err := n.beamPIDs()
	if err != nil || len(pids) == 0 {
		t.Fatalf("own node: no beam.smp with -epmd_port %s to kill: %v", ownEPMDPort, err)
	}
	for _, pid := range pids {
		if p, err := os.FindProcess(pid); err == nil {
			if err := p.Kill(); err != nil {
				t.Fatalf("kill -9 %d: %v", pid, err)
			}
		}
	}
	if !WaitFor(ownWait, func() bool { return probe("127.0.0.1:"+OwnAMQPPort) != nil }) {
		t.Fatalf("the own node still answers on %s after kill -9", OwnAMQPPort)
	}
	t.Logf("own node killed (kill -9 of beam.smp %v)", pids)
}

// beamPIDs are the own node's beam.smp processes.
func (n *OwnNode) beamPIDs() ([]int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmd, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(string(cmd), "\x00")
		if len(args) == 0 || filepath.Base(args[0]) != "beam.smp" {
			continue
		}
		for i := range args[:len(args)-1] {
			if args[i] == "-epmd_port" && args[i+1] == ownEPMDPort {
				out = append(out, pid)
				break
			}
		}
	}
	return out, nil
}
