package brokertest

import (
	"context"
	"encoding/json"
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

// The cluster: three RabbitMQ 4.3 nodes in the chroot joined as one
// (scripts/rabbitmq.sh up --cluster), for tests of what a cluster changes:
// a queue's leader moving when its node stops, a node listed as down.
const (
	// EnvTestCluster: 1 requires the cluster (with LADDER_REQUIRE_BROKER=1
	// a test fails when it cannot start), 0 skips its tests.
	EnvTestCluster = "LADDER_TEST_CLUSTER"
	// ClusterSize is how many nodes rabbitmq.sh --cluster runs.
	ClusterSize = 3
	// clusterWait bounds a node's stop or start; clusterUpWait starting
	// the cluster (16 s from nothing here, 10 s from stopped nodes, but
	// the machine may be busy with the other packages' tests).
	clusterWait   = 3 * time.Minute
	clusterUpWait = 6 * time.Minute
	// clusterLockWait bounds waiting for the tests of other packages that
	// hold the cluster (they run at once, scripts/test.sh -p 3).
	clusterLockWait = 10 * time.Minute
)

// Cluster is the cluster, held by one test at a time.
type Cluster struct {
	Nodes   []ClusterNode // ClusterSize of them, node 1 first
	root    string        // the repository, for scripts/rabbitmq.sh
	stopped map[int]bool  // the nodes this test stopped and did not start, by index
}

// ClusterNode is one node of the cluster.
type ClusterNode struct {
	Name     string // as the management API names it: rabbit43c1@localhost
	AMQPPort string
	APIPort  string
	// Resolved reaches the node's default vhost as guest/guest (tests take
	// a vhost of their own with OwnVhostOn; the cluster shares it).
	Resolved *rabbit.Resolved
}

// RequireCluster gives the test the cluster: started when not all its nodes
// run, locked against the other packages' tests until the test ends, then
// left running (scripts/test.sh stops it) with any node the test stopped
// started again. It skips, saying why, without root or the 4.3 chroot,
// unless LADDER_REQUIRE_BROKER=1 and LADDER_TEST_CLUSTER=1, where it fails;
// LADDER_TEST_CLUSTER=0 skips.
func RequireCluster(t testing.TB) *Cluster {
	t.Helper()
	if os.Getenv(EnvTestCluster) == "0" {
		t.Skipf("%s=0", EnvTestCluster)
	}
	stop := t.Skipf
	if os.Getenv(EnvRequire) == "1" && os.Getenv(EnvTestCluster) == "1" {
		stop = t.Fatalf
	}
	if os.Geteuid() != 0 {
		stop("the cluster needs root (three nodes in the 4.3 chroot, started by scripts/rabbitmq.sh up --cluster)")
	}
	state := stateDir()
	if _, err := os.Stat(filepath.Join(state, "rabbitmq-4.3", "root", "usr", "sbin", "rabbitmq-server")); err != nil {
		stop("no RabbitMQ 4.3 chroot under %s (run scripts/rabbitmq.sh up --version 4.3): %v", state, err)
	}
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	c := &Cluster{root: root, stopped: map[int]bool{}}
	for i := 1; i <= ClusterSize; i++ {
		n := ClusterNode{
			Name:     fmt.Sprintf("rabbit43c%d@localhost", i),
			AMQPPort: strconv.Itoa(5680 + i),
			APIPort:  strconv.Itoa(15680 + i),
		}
		n.Resolved, err = rabbit.Config{
			AMQPURL: "amqp://guest:guest@127.0.0.1:" + n.AMQPPort + "/",
			APIURL:  "http://127.0.0.1:" + n.APIPort,
		}.Resolve()
		if err != nil {
			t.Fatal(err)
		}
		c.Nodes = append(c.Nodes, n)
	}
	unlock, err := lockFile(filepath.Join(state, "cluster.lock"), clusterLockWait)
	if err != nil {
		t.Fatalf("cluster: %v", err)
	}
	t.Cleanup(unlock)
	// A run interrupted with a node stopped (a timeout skips t.Cleanup)
	// leaves it stopped: the script starts it again.
	if !c.Running() {
		start := time.Now()
		if out, err := c.script(clusterUpWait, "up", "--cluster"); err != nil {
			t.Fatalf("rabbitmq.sh up --cluster: %v\n%s", err, out)
		}
		t.Logf("cluster up in %s", time.Since(start).Round(100*time.Millisecond))
	}
	return c
}

// Running says whether every node's AMQP port and management API answer
// and node 1's API lists all as running.
func (c *Cluster) Running() bool {
	for _, n := range c.Nodes {
		if probe("127.0.0.1:"+n.AMQPPort) != nil || probe("127.0.0.1:"+n.APIPort) != nil {
			return false
		}
	}
	running, err := c.Nodes[0].RunningNodes()
	return err == nil && len(running) == len(c.Nodes)
}

// RunningNodes are the nodes this node's management API lists as running.
func (n ClusterNode) RunningNodes() (map[string]bool, error) {
	var nodes []struct {
		Name    string `json:"name"`
		Running bool   `json:"running"`
	}
	if err := APIGet(n.Resolved, "nodes?columns=name,running", &nodes); err != nil {
		return nil, err
	}
	running := map[string]bool{}
	for _, x := range nodes {
		if x.Running {
			running[x.Name] = true
		}
	}
	return running, nil
}

// Stop stops the RabbitMQ app of node i (an index into Nodes) with
// rabbitmqctl stop_app: its Erlang VM stays up, which makes Start quick,
// and its AMQP, management and Prometheus listeners close as a stopped
// node's would. It waits until its AMQP port refuses and another node's API
// lists it as not running. When the test ends, a node it did not start
// again is started (before the cleanups of what the test made earlier, such
// as OwnVhostOn's, which may need that node's API), and the lock released
// once all run.
func (c *Cluster) Stop(t testing.TB, i int) {
	t.Helper()
	n := c.Nodes[i]
	start := time.Now()
	if !c.stopped[i] {
		t.Cleanup(func() {
			if c.stopped[i] {
				c.Start(t, i)
			}
		})
	}
	c.stopped[i] = true
	c.ctl(t, i, "stop_app")
	other := c.Nodes[(i+1)%len(c.Nodes)]
	ok := WaitFor(clusterWait, func() bool {
		if probe("127.0.0.1:"+n.AMQPPort) == nil || probe("127.0.0.1:"+n.APIPort) == nil {
			return false
		}
		running, err := other.RunningNodes()
		return err == nil && !running[n.Name]
	})
	if !ok {
		t.Fatalf("cluster: %s still answers, or %s lists it as running, %v after stop_app", n.Name, other.Name, clusterWait)
	}
	t.Logf("cluster: %s stopped in %s", n.Name, time.Since(start).Round(100*time.Millisecond))
}

// Start starts the RabbitMQ app of node i again (rabbitmqctl start_app) and
// waits until its ports answer and its API lists it as running (another
// node the test stopped may still be down).
func (c *Cluster) Start(t testing.TB, i int) {
	t.Helper()
	n := c.Nodes[i]
	start := time.Now()
	c.ctl(t, i, "start_app")
	if !WaitFor(clusterWait, func() bool {
		if probe("127.0.0.1:"+n.AMQPPort) != nil || probe("127.0.0.1:"+n.APIPort) != nil {
			return false
		}
		running, err := n.RunningNodes()
		return err == nil && running[n.Name]
	}) {
		t.Fatalf("cluster: %s does not run %v after start_app (scripts/rabbitmq.sh status --cluster)", n.Name, clusterWait)
	}
	delete(c.stopped, i)
	t.Logf("cluster: %s started in %s", n.Name, time.Since(start).Round(100*time.Millisecond))
}

// ctl runs rabbitmqctl against node i (rabbitmq.sh ctl --cluster i+1).
func (c *Cluster) ctl(t testing.TB, i int, args ...string) string {
	t.Helper()
	out, err := c.script(clusterWait, append([]string{"ctl", "--cluster", strconv.Itoa(i + 1), "--"}, args...)...)
	if err != nil {
		t.Fatalf("rabbitmqctl -n %s %s: %v\n%s", c.Nodes[i].Name, strings.Join(args, " "), err, out)
	}
	return out
}

// script runs scripts/rabbitmq.sh with args, bounded by d.
func (c *Cluster) script(d time.Duration, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(c.root, "scripts", "rabbitmq.sh"), args...)
	cmd.Env = append(os.Environ(), "LADDER_RABBITMQ_WAIT=120")
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// APIGet sends GET /api/PATH to the management API r reaches and decodes
// its JSON answer into v; any status of 300 or more is an error.
func APIGet(r *rabbit.Resolved, path string, v any) error {
	req, err := http.NewRequest(http.MethodGet, r.APIURL.String()+"/api/"+path, nil)
	if err != nil {
		return err
	}
	if err := r.SetAPIAuth(req); err != nil {
		return err
	}
	client := http.Client{Timeout: 30 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode >= 300 {
		return fmt.Errorf("GET /api/%s: %s %s", path, resp.Status, strings.TrimSpace(string(body)))
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("GET /api/%s: %w", path, err)
	}
	return nil
}
