package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/rabbit"
	"github.com/ladder-tui/ladder/retry/topology"
)

// lintClient is a broker whose vhost is v: lint reads only its topology,
// version and vhost name (any other call panics on the nil Client).
type lintClient struct {
	broker.Client
	v topology.Vhost
}

func (c lintClient) Topology(context.Context) (topology.Vhost, error) { return c.v, nil }
func (c lintClient) BrokerVersion(context.Context) (string, error)    { return "3.13.7", nil }
func (c lintClient) Vhost() string                                    { return "/" }

func runLintOn(t *testing.T, v topology.Vhost, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	connect := func(rabbit.Config, string) (broker.Client, func(), error) { return lintClient{v: v}, func() {}, nil }
	code = run(append([]string{"lint"}, args...), strings.NewReader(""), &out, &errb, Build{Version: "dev"}, connect)
	return code, out.String(), errb.String()
}

// springLoopVhost is Spring Cloud Stream's binder loop for group
// orders.audit (autoBindDlq, dlqTtl=5000, dlqDeadLetterExchange=), consumed.
func springLoopVhost() topology.Vhost {
	return topology.Vhost{Name: "/",
		Exchanges: []topology.Exchange{{Name: "orders", Type: topology.ExchangeTopic}, {Name: "DLX", Type: topology.ExchangeDirect}},
		Queues: []topology.Queue{
			{Name: "orders.audit", Type: topology.QueueClassic, Consumers: 1, Arguments: map[string]any{"x-dead-letter-exchange": "DLX", "x-dead-letter-routing-key": "orders.audit"}},
			{Name: "orders.audit.dlq", Type: topology.QueueClassic, Arguments: map[string]any{"x-message-ttl": int32(5000), "x-dead-letter-exchange": ""}},
		},
		Bindings: []topology.Binding{
			{Source: "orders", Destination: "orders.audit", DestinationType: "queue", RoutingKey: "#"},
			{Source: "DLX", Destination: "orders.audit.dlq", DestinationType: "queue", RoutingKey: "orders.audit"},
		}}
}

// ladder lint --for 4.x on a Spring binder retry loop: one error line
// naming the loop and what to change, exit 1 saying one thing breaks; the
// same in JSON. With nothing consuming the queue it is no loop: exit 0.
func TestLintCommandFlagsSpringRetryLoop(t *testing.T) {
	for _, target := range topology.LintTargets {
		code, out, errOut := runLintOn(t, springLoopVhost(), "--for", target)
		if code != exitError || !strings.Contains(errOut, "lint: 1 thing breaks on RabbitMQ "+target) {
			t.Errorf("--for %s: exit %d %q", target, code, errOut)
		}
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if len(lines) != 2 || !strings.HasSuffix(lines[0], ": 1 finding") {
			t.Fatalf("--for %s:\n%s", target, out)
		}
		if f := strings.Fields(lines[1]); len(f) < 4 || f[0] != "error" || f[1] != topology.CodeClientXDeath || f[2] != "orders.audit" ||
			!strings.Contains(lines[1], `"orders.audit.dlq" (TTL 5s)`) || !strings.Contains(lines[1], "republishToDlq=false") {
			t.Errorf("--for %s: line %q", target, lines[1])
		}
	}
	code, out, _ := runLintOn(t, springLoopVhost(), "--for", "4.3", "-o", "json")
	var rep lintReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != exitError {
		t.Fatalf("json: exit %d %v\n%s", code, err, out)
	}
	if len(rep.Findings) != 1 || rep.Findings[0].Code != topology.CodeClientXDeath || rep.Findings[0].Severity != topology.SeverityError || rep.Findings[0].Queue != "orders.audit" {
		t.Errorf("json: %+v", rep.Findings)
	}
	idle := springLoopVhost()
	idle.Queues[0].Consumers = 0
	if code, out, errOut := runLintOn(t, idle, "--for", "4.3"); code != exitOK || !strings.HasSuffix(out, ": 0 findings\n") {
		t.Errorf("nothing consumes it: exit %d %q %q", code, out, errOut)
	}
}
