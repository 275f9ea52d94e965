package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/usecase"
	"github.com/ladder-tui/ladder/internal/present"
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/moveplan"
	"github.com/ladder-tui/ladder/retry/topology"
)

func f64(v float64) *float64 { return &v }

func intp(v int) *int { return &v }

func strp(v string) *string { return &v }

func TestRenderTopologySanitisesAndShowsTheLadder(t *testing.T) {
	rep := present.TopologyReport{
		Vhost: "/", BrokerVersion: "3.10.8",
		Ladders: []present.LadderReport{{
			Main:  present.QueueReport{Name: "orders.process", Ready: 12, Consumers: intp(4), PublishRate: f64(50), AckRate: f64(49.5), InRate: f64(50), InRateSource: strp(topology.InFromPublish)},
			Tiers: []present.TierReport{{QueueReport: present.QueueReport{Name: "evil\x1b]0;pwned\x07"}, TTLMS: 5000}},
		}},
		Findings: []topology.Finding{{Code: "no-dlq", Severity: topology.SeverityWarning, Queue: "orders.process", Message: "exhausted messages are dropped"}},
	}
	out := renderTopology(rep)
	if strings.ContainsAny(out, "\x1b\x07") {
		t.Fatalf("control characters reached the output: %q", out)
	}
	for _, want := range []string{`evil\x1b]0;pwned\x07`, "orders.process", "5s", "50.0", "49.5", "(none)", "no-dlq", "exhausted messages are dropped"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestRenderTopologySaysWhatAGuessedLadderRestedOn(t *testing.T) {
	rep := present.TopologyReport{Vhost: "/", BrokerVersion: "4.3.6", Ladders: []present.LadderReport{
		{Main: present.QueueReport{Name: "plain"}},
		{Main: present.QueueReport{Name: "billing"}, WaitQueues: []present.QueueReport{{Name: "billing.second"}},
			InferredFrom: []string{"billing.second: no queue TTL", "a guess: \x1b[2Jshorter name"}},
	}}
	out := renderTopology(rep)
	if strings.ContainsAny(out, "\x1b") {
		t.Fatalf("control characters reached the output: %q", out)
	}
	want := "INFERRED FROM\nbilling  billing.second: no queue TTL; a guess: \\x1b[2Jshorter name\n"
	if i := strings.Index(out, want); i < 0 || !strings.HasSuffix(out, want) {
		t.Errorf("output lacks %q (last, with nothing for plain):\n%s", want, out)
	}
	rep.Ladders = rep.Ladders[:1]
	if out := renderTopology(rep); strings.Contains(out, "INFERRED") {
		t.Errorf("a plain topology shows an inferred section:\n%s", out)
	}
}

func TestRenderPeekShowsSideEffectsAndBlocking(t *testing.T) {
	res := &broker.PeekResult{Queue: "w", Type: "classic", Total: 2, Ready: 2, SideEffects: []string{"redelivered flag set"},
		Messages: []broker.Message{
			{Position: 0, Properties: broker.Properties{MessageID: "a"}, Retry: retry.RetryState{Count: 2, Source: "x-retry-count"}},
			{Position: 1, Properties: broker.Properties{MessageID: "b"}, HoL: &topology.HoLMark{Blocked: true, BlockedBy: 0, Overdue: 3 * time.Second},
				Deaths: []retry.Death{{Queue: "orders.wait.5s", Reason: retry.ReasonExpired}}},
		}}
	out := renderPeek(&usecase.GroupedPeek{PeekResult: res}, 0)
	for _, want := range []string{"! redelivered flag set", "2 (x-retry-count)", "overdue 3s HoL←#0", "expired@orders.wait.5s"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// A Celery task with an eta and no TTL shows the eta as its DUE.
func TestRenderPeekShowsCeleryETA(t *testing.T) {
	at := time.Date(2024, 3, 1, 10, 20, 30, 0, time.UTC)
	res := &broker.PeekResult{Queue: "celery", Type: "classic", Total: 2, Ready: 2, PeekedAt: at,
		Messages: []broker.Message{
			{Position: 0, Properties: broker.Properties{MessageID: "a"}, Retry: retry.RetryState{Count: 1, Source: "retries", DueTime: at.Add(5 * time.Minute), DueSource: "eta"}},
			{Position: 1, Properties: broker.Properties{MessageID: "b"}, Retry: retry.RetryState{DueTime: at.Add(-time.Minute), DueSource: "eta"}, HoL: &topology.HoLMark{NeverDue: true}},
		}}
	out := renderPeek(&usecase.GroupedPeek{PeekResult: res}, 0)
	for _, want := range []string{"eta in 5m", "eta 1m ago"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestRenderMoveSaysDuplicatesAndSkips(t *testing.T) {
	out := renderMove(&broker.MoveReport{Requested: 3, Moved: 1, Returned: 1, Skipped: 1, Target: "origin", DuplicatesPossible: true,
		Planned: []moveplan.Route{{Position: 2, MessageID: "m2", Skip: "no x-death origin"}}}, "orders.dlq")
	for _, want := range []string{"moved 1 of 3 from orders.dlq to origin", "returned 1, skipped 1", "skipped #2 m2: no x-death origin", "duplicates possible"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// The confirmation names how many messages go where and by which route.
func TestMoveQuestionNamesRoutesAndCounts(t *testing.T) {
	req := broker.MoveRequest{From: "pay.dlq", To: moveplan.Target{Kind: moveplan.TargetOrigin}, Delay: 3 * time.Second}
	dry := &broker.MoveReport{Requested: 7, Skipped: 1, DryRun: true}
	for i := range 7 {
		p := moveplan.Route{Position: i, TargetExchange: "pay.topic", TargetRoutingKey: "pay.charge", Via: topology.ViaTier, Queue: "pay.wait.3s", Reaches: []string{"pay.process"}}
		if i >= 3 {
			p.Via, p.Queue = topology.ViaDelayQueue, "ladder.delay.3000.pay.topic.pay.charge.ab12"
		}
		if i == 6 {
			p = moveplan.Route{Position: i, Skip: "no x-death origin"}
		}
		dry.Planned = append(dry.Planned, p)
	}
	dry.Routes = moveplan.CountRoutes(dry.Planned)
	got := moveQuestion(req, dry, false)
	want := "Move 6 messages from pay.dlq to their origin (pay.process) after 3s, 3 via tier pay.wait.3s, 3 via a ladder delay queue, reaching pay.process (1 stays in pay.dlq: see the plan above)? [y/N] "
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

// The confirmation repeats what chooses the messages and how fast they go,
// names every queue each route reaches, and says what a crash during the
// wait can cost.
func TestMoveQuestionRepeatsWhereRateReachesAndCrashRisk(t *testing.T) {
	w, err := moveplan.ParseWhere([]string{"reason=rejected", "age>1h"})
	if err != nil {
		t.Fatal(err)
	}
	req := broker.MoveRequest{From: "orders.dlq", To: moveplan.Target{Kind: moveplan.TargetExchange, Name: "orders"}, Delay: 5 * time.Second, Where: w, Rate: 50}
	dry := &broker.MoveReport{Requested: 3, DryRun: true, Planned: []moveplan.Route{
		{Via: topology.ViaTier, Queue: "orders.wait.5s", Reaches: []string{"orders.audit", "orders.billing"}, CrashRisk: "tier"},
		{Via: topology.ViaDelayQueue, Queue: "ladder.delay.5000.x", Reaches: []string{"orders.audit"}},
		{Via: topology.ViaDelayQueue, Queue: "ladder.delay.5000.x", Reaches: []string{"orders.audit"}},
	}}
	got := moveQuestion(req, dry, false)
	for _, want := range []string{
		"reaching 1 → orders.audit + orders.billing, 2 → orders.audit",
		"; chosen by --where reason=rejected --where age>1h",
		"; at most 50 a second",
		"; a broker crash during the wait can lose 1 of them (see the note above)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
}

// The dry run names every queue each message reaches, then all of them.
func TestDryRunNamesEveryQueueReached(t *testing.T) {
	out := renderMove(&broker.MoveReport{DryRun: true, Target: "origin", Planned: []moveplan.Route{
		{Position: 0, MessageID: "a", TargetRoutingKey: "orders.audit", RoutingKey: "orders.audit", Via: topology.ViaDirect, Reaches: []string{"orders.audit"}},
		{Position: 1, MessageID: "b", TargetExchange: "orders", TargetRoutingKey: "k", Exchange: "orders", RoutingKey: "k", Via: topology.ViaDirect, Reaches: []string{"orders.audit", "orders.billing"}},
	}}, "orders.audit.dlq")
	for _, want := range []string{"REACHES", "orders.audit, orders.billing", "queues reached: 1 → orders.audit, 1 → orders.audit + orders.billing"} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run lacks %q:\n%s", want, out)
		}
	}
}

func TestRenderSchedule(t *testing.T) {
	l := &retry.Ladder{Main: "orders.process", Tiers: []retry.Tier{
		{Queue: "orders.wait.5s", TTL: 5 * time.Second}, {Queue: "orders.wait.30s", TTL: 30 * time.Second}, {Queue: "orders.wait.5m\x1b[2J", TTL: 5 * time.Minute},
	}}
	s, err := retry.Schedule(retry.Policy{Backoff: retry.BackoffExponential, Base: 5 * time.Second, Factor: 5, Jitter: retry.JitterEqual}, 4, l)
	if err != nil {
		t.Fatal(err)
	}
	want := "" +
		"ATTEMPT  DELAY   MIN      MAX     TIER\n" +
		"1        5s      2.5s     5s      orders.wait.5s\n" +
		"2        25s     12.5s    25s     orders.wait.30s (longer)\n" +
		"3        2m5s    1m2.5s   2m5s    orders.wait.5m\\x1b[2J (longer)\n" +
		"4        10m25s  5m12.5s  10m25s  -\n"
	if got := renderSchedule(s); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestCountsReadAsWords(t *testing.T) {
	for n, want := range map[int]string{0: "· 0 ladders\n", 1: "· 1 ladder\n", 2: "· 2 ladders\n"} {
		rep := present.TopologyReport{Vhost: "/", BrokerVersion: "3.10.8", Ladders: make([]present.LadderReport, n)}
		if out := renderTopology(rep); !strings.Contains(out, want) || strings.Contains(out, "(s)") {
			t.Errorf("%d ladders: %q", n, out)
		}
	}
	one := renderMove(&broker.MoveReport{DryRun: true, Planned: []moveplan.Route{{}}}, "q")
	if !strings.Contains(one, "dry run: 1 message from q") {
		t.Errorf("%q", one)
	}
}

func TestWaitQueueTTLLabelMatchesTheUI(t *testing.T) {
	rep := present.TopologyReport{Vhost: "/", Ladders: []present.LadderReport{{Main: present.QueueReport{Name: "jobs"}, WaitQueues: []present.QueueReport{{Name: "jobs.delay"}}}}}
	for _, l := range strings.Split(renderTopology(rep), "\n") {
		if strings.Contains(l, "jobs.delay") && !strings.Contains(l, " "+present.PerMessageTTL+" ") {
			t.Errorf("%q lacks the TTL label %q", l, present.PerMessageTTL)
		}
	}
}
