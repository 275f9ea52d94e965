package topology

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

// codes lists "severity code queue" per finding, in order.
func codes(fs []Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, string(f.Severity)+" "+f.Code+" "+f.Queue)
	}
	return out
}

func findingsOf(v *Vhost) []Finding { return Findings(v, Discover(v)) }

func TestFindingsSeeds(t *testing.T) {
	tests := []struct {
		name string
		v    *Vhost
		want []string
	}{
		// The sound ladder: no finding at all, so none above info either.
		{"go", seedGo(), nil},
		{"python", seedPython(), []string{
			"error unroutable-dead-letter retry_queue",
			"warning no-dlq main_queue",
		}},
		{"php, 4 delay queues", seedPHP(4), []string{"warning no-dlq queue"}},
		{"php, 5 delay queues", seedPHP(5), []string{
			"warning delay-queue-sprawl queue",
			"warning no-dlq queue",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := findingsOf(tt.v)
			if !reflect.DeepEqual(codes(got), tt.want) {
				t.Errorf("findings = %q, want %q\n%+v", codes(got), tt.want, got)
			}
			for _, f := range got {
				if f.Message == "" || strings.Contains(f.Message, "\n") {
					t.Errorf("message must be one non-empty line: %q", f.Message)
				}
			}
		})
	}
}

// With its workers down the Go seed is still sound: the main queue is not
// mistaken for a stuck or per-message wait queue, nor its DLQ for a main.
func TestFindingsGoSeedWorkersDown(t *testing.T) {
	v := seedGo()
	seedQueue(v, "orders.process").Consumers = 0
	seedQueue(v, "orders.process").Messages = 5000
	if got := findingsOf(v); len(got) != 0 {
		t.Errorf("findings = %+v", got)
	}
	if ls := Discover(v); len(ls) != 1 || ls[0].DLQ != "orders.dlq" {
		t.Errorf("ladders = %+v", ls)
	}
}

func TestFindingsMessages(t *testing.T) {
	py := findingsOf(seedPython())
	if want := `dead letters go to the default exchange with routing key "main", but no queue is named "main": they are dropped`; py[0].Message != want || py[0].Exchange != "" {
		t.Errorf("python unroutable = %+v", py[0])
	}
	php := findingsOf(seedPHP(7))
	if !strings.HasPrefix(php[0].Message, "7 per-delay wait queues (enqueue.queue.") || !strings.Contains(php[0].Message, "x-expires") {
		t.Errorf("sprawl message = %q", php[0].Message)
	}
	b, err := json.Marshal(py[0])
	if err != nil {
		t.Fatal(err)
	}
	want := `{"code":"unroutable-dead-letter","severity":"error","queue":"retry_queue","exchange":"","message":"dead letters go to the default exchange with routing key \"main\", but no queue is named \"main\": they are dropped"}`
	if string(b) != want {
		t.Errorf("JSON = %s\nwant   %s", b, want)
	}
}

func TestFindingsRules(t *testing.T) {
	tests := []struct {
		name   string
		tweak  func(v *Vhost)
		want   []string
		substr string // in the first finding's message
	}{
		{"tier with consumers", func(v *Vhost) { seedQueue(v, "orders.wait.30s").Consumers = 2 },
			[]string{"warning wait-queue-consumers orders.wait.30s"}, "2 consumers read this wait queue"},
		{"requeue storm", func(v *Vhost) {
			seedQueue(v, "orders.process").Rates = Rates{Known: true, Redeliver: 120, Ack: 3}
		}, []string{"warning requeue-storm orders.process"}, "redelivering 120.0/s while acking 3.0/s"},
		{"no storm below 10/s", func(v *Vhost) {
			seedQueue(v, "orders.process").Rates = Rates{Known: true, Redeliver: 9, Ack: 0}
		}, nil, ""},
		{"no storm when acks keep up", func(v *Vhost) {
			seedQueue(v, "orders.process").Rates = Rates{Known: true, Redeliver: 50, Ack: 20}
		}, nil, ""},
		{"no storm from unknown rates", func(v *Vhost) {
			seedQueue(v, "orders.process").Rates = Rates{Redeliver: 500}
		}, nil, ""},
		{"quorum delivery limit", func(v *Vhost) {
			q := seedQueue(v, "orders.process")
			q.Type, q.Policy = QueueQuorum, map[string]any{"delivery-limit": float64(20)}
		}, []string{"info delivery-limit orders.process"}, "a message's 21st return to it dead-letters the message"},
		{"quorum delivery limit without DLX drops", func(v *Vhost) {
			q := seedQueue(v, "orders.dlq")
			q.Type, q.Arguments = QueueQuorum, map[string]any{"x-delivery-limit": int32(3)}
		}, []string{"info delivery-limit orders.dlq"}, "a message's 4th return to it drops the message"},
		{"delivery limit outside ladders is not reported", func(v *Vhost) {
			v.Queues = append(v.Queues, Queue{Name: "other", Type: QueueQuorum, Arguments: map[string]any{"x-delivery-limit": int32(3)}})
		}, nil, ""},
		{"missing dead-letter exchange", func(v *Vhost) {
			seedQueue(v, "orders.process").Arguments["x-dead-letter-exchange"] = "orders.dlx.typo"
		}, []string{"error unroutable-dead-letter orders.process", "warning no-dlq orders.process"},
			`dead letters go to exchange "orders.dlx.typo", which does not exist: they are dropped`},
		{"no binding matches the dead-letter key", func(v *Vhost) {
			q := seedQueue(v, "orders.wait.5s")
			q.Arguments["x-dead-letter-routing-key"] = "invoices.created"
		}, []string{"error unroutable-dead-letter orders.wait.5s"},
			`no binding of exchange "orders.topic" matches dead-letter routing key "invoices.created"`},
		{"dead-letter exchange without bindings", func(v *Vhost) {
			v.Exchanges = append(v.Exchanges, Exchange{Name: "empty", Type: ExchangeTopic})
			v.Queues = append(v.Queues, Queue{Name: "lonely", Arguments: map[string]any{"x-dead-letter-exchange": "empty"}})
		}, []string{"error unroutable-dead-letter lonely"}, `exchange "empty" has no binding to a queue`},
		{"original keys on the default exchange", func(v *Vhost) {
			v.Queues = append(v.Queues, Queue{Name: "lonely", Arguments: map[string]any{"x-dead-letter-exchange": ""}})
		}, []string{"error unroutable-dead-letter lonely"}, "keep their routing keys on the default exchange"},
		{"dead letters only back into the same queue", func(v *Vhost) {
			v.Queues = append(v.Queues, Queue{Name: "selfish", Arguments: map[string]any{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "selfish"}})
		}, []string{"error unroutable-dead-letter selfish"}, "dead-letter cycle"},
		{"ten designed tiers are sprawl too", func(v *Vhost) {
			for _, n := range []string{"a", "b", "c", "d", "e", "f", "g"} {
				v.Queues = append(v.Queues, Queue{Name: "orders.wait." + n,
					Arguments: map[string]any{"x-message-ttl": int32(1000), "x-dead-letter-exchange": "orders.topic", "x-expires": int32(60000)}})
			}
		}, []string{"warning delay-queue-sprawl orders.process"}, "10 wait tiers (1s to 5m) for one queue; round delays to a few fixed tiers"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := seedGo()
			tt.tweak(v)
			got := findingsOf(v)
			if !reflect.DeepEqual(codes(got), tt.want) {
				t.Fatalf("findings = %q, want %q\n%+v", codes(got), tt.want, got)
			}
			if tt.substr != "" && !strings.Contains(got[0].Message, tt.substr) {
				t.Errorf("message %q lacks %q", got[0].Message, tt.substr)
			}
		})
	}
}

func TestFindingsStuckAndHoLRisk(t *testing.T) {
	base := func(waitMsgs int64, fedByDL bool) *Vhost {
		mainArgs := map[string]any{"x-dead-letter-exchange": "w.dlx"}
		if fedByDL {
			mainArgs = map[string]any{"x-dead-letter-exchange": "to.wait"}
		}
		v := &Vhost{
			Queues: []Queue{
				{Name: "w", Consumers: 2, Arguments: mainArgs},
				{Name: "w.wait", Messages: waitMsgs, Arguments: map[string]any{"x-dead-letter-exchange": "w.in"}},
				{Name: "w.dlq"},
			},
			Exchanges: []Exchange{
				{Name: "w.in", Type: ExchangeDirect}, {Name: "w.dlx", Type: ExchangeFanout}, {Name: "to.wait", Type: ExchangeFanout},
			},
			Bindings: []Binding{
				{Source: "w.in", Destination: "w", DestinationType: "queue", RoutingKey: "w"},
				{Source: "w.dlx", Destination: "w.dlq", DestinationType: "queue"},
				{Source: "to.wait", Destination: "w.wait", DestinationType: "queue"},
			},
		}
		return v
	}
	tests := []struct {
		name   string
		v      *Vhost
		want   []string
		substr string
	}{
		// w.dlq, off w's dead-letter route, is its error queue by naming
		// (Spring's {queue}.dlq): no no-dlq.
		// Unlooked, a dead-letter route in says what may happen, not
		// what did: publishers may feed the queue with expirations too.
		{"fed by dead-lettering, unlooked, is a warning", base(37, true),
			[]string{"warning stuck w.wait"}, `messages dead-lettered into this queue never return to "w": dead-lettering strips per-message expiration, and it has no TTL and no consumers; whether its 37 messages came so or carry an expiration of their own, a peek tells`},
		{"stuck but empty is a warning", base(0, true),
			[]string{"warning stuck w.wait"}, ""},
		{"per-message TTL wait queue", base(5, false),
			[]string{"warning hol-risk w.wait"}, "relies on per-message expiration"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := findingsOf(tt.v)
			if !reflect.DeepEqual(codes(got), tt.want) {
				t.Fatalf("findings = %q, want %q\n%+v", codes(got), tt.want, got)
			}
			if tt.substr != "" && !strings.Contains(got[0].Message, tt.substr) {
				t.Errorf("message %q lacks %q", got[0].Message, tt.substr)
			}
		})
	}
	// A consumed stuck queue is still stuck, but not "with no consumers".
	v := base(37, true)
	seedQueue(v, "w.wait").Consumers = 1
	if got := findingsOf(v); len(got) < 1 || got[0].Code != CodeStuck || strings.Contains(got[0].Message, "consumers") {
		t.Errorf("consumed stuck queue: %+v", got)
	}
	// A consumer on the wait queue does not make it a work queue (the
	// graph says it waits): the risk stays, and the consumer is reported.
	v = base(5, false)
	seedQueue(v, "w.wait").Consumers = 1
	if got, want := codes(findingsOf(v)), []string{"warning hol-risk w.wait", "warning wait-queue-consumers w.wait"}; !reflect.DeepEqual(got, want) {
		t.Errorf("consumed wait queue: %q, want %q", got, want)
	}
}

func TestFindingsNoDLQMessages(t *testing.T) {
	py := seedPython()
	if got := findingsOf(py); !strings.Contains(got[1].Message, "only go back into its retry tiers") {
		t.Errorf("python no-dlq = %q", got[1].Message)
	}
	if got := findingsOf(seedPHP(1)); !strings.Contains(got[0].Message, "has no dead-letter exchange") {
		t.Errorf("php no-dlq = %q", got[0].Message)
	}
	v := seedGo()
	v.Bindings = v.Bindings[:2] // drop orders.dlx → orders.dlq
	got := findingsOf(v)
	if len(got) != 2 || got[1].Code != CodeNoDLQ || !strings.Contains(got[1].Message, "reaches no queue") {
		t.Errorf("go without DLQ binding = %+v", got)
	}
}

func TestSortFindings(t *testing.T) {
	fs := []Finding{
		{Code: "b", Severity: SeverityInfo, Queue: "a"},
		{Code: "b", Severity: SeverityWarning, Queue: "b"},
		{Code: "a", Severity: SeverityWarning, Queue: "b"},
		{Code: "z", Severity: SeverityWarning, Queue: "a"},
		{Code: "c", Severity: SeverityError, Queue: "z"},
		{Code: "c", Severity: SeverityWarning, Exchange: "x"},
	}
	SortFindings(fs)
	var got []string
	for _, f := range fs {
		got = append(got, string(f.Severity)+"/"+f.Queue+"/"+f.Exchange+"/"+f.Code)
	}
	want := []string{"error/z//c", "warning//x/c", "warning/a//z", "warning/b//a", "warning/b//b", "info/a//b"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("sorted = %v, want %v", got, want)
	}
}

func TestFndDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0s", 250 * time.Millisecond: "250ms", 1500 * time.Millisecond: "1.5s", 5 * time.Minute: "5m",
		90 * time.Minute: "1h30m", time.Hour: "1h", 61 * time.Second: "1m1s",
	} {
		if got := fndDuration(d); got != want {
			t.Errorf("fndDuration(%v) = %q, want %q", d, got, want)
		}
	}
}

// Workers down with messages waiting: said as info, so a sound ladder still
// has no warning or error.
func TestFindingNoConsumersIsInfo(t *testing.T) {
	v := seedGo()
	q := seedQueue(v, "orders.process")
	q.Consumers, q.Ready = 0, 29
	var got []Finding
	for _, f := range Findings(v, Discover(v)) {
		if f.Code == CodeNoConsumers {
			got = append(got, f)
		}
		if f.Severity != SeverityInfo {
			t.Errorf("a sound ladder got %+v", f)
		}
	}
	if len(got) != 1 || got[0].Queue != "orders.process" || !strings.Contains(got[0].Message, "29 messages ready") {
		t.Fatalf("%+v", got)
	}
}

func TestStuckFindingSaysOneMessageReturns(t *testing.T) {
	v := &Vhost{Queues: []Queue{
		{Name: "billing", Arguments: map[string]any{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "billing.retry"}},
		{Name: "billing.retry", Messages: 1, Arguments: map[string]any{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "billing"}},
	}}
	at := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	v.Queues[1].Seen.Look = LookOf(at, 1, []HoLInput{{Expiration: 5 * time.Second, HasExpiration: true, Stripped: true}}, nil)
	found := false
	for _, f := range Findings(v, Discover(v)) {
		if f.Code == CodeStuck {
			found = true
			if f.Severity != SeverityError || !strings.HasPrefix(f.Message, `the message peeked at 12:00:00 never returns to "billing"`) {
				t.Errorf("%s %q", f.Severity, f.Message)
			}
		}
	}
	if !found {
		t.Error("no stuck finding")
	}
}

func TestDLQGrowingFinding(t *testing.T) {
	f, ok := DLQGrowingFinding("orders.dlq", DLQGrowth{Grew: 1240, Over: 5 * time.Minute, Waiting: 5000})
	if !ok || f.Code != CodeDLQGrowing || f.Severity != SeverityWarning || f.Queue != "orders.dlq" {
		t.Fatalf("%+v %v", f, ok)
	}
	if want := "grew by 1,240 in 5m (4/s), 5,000 waiting"; !strings.HasPrefix(f.Message, want) {
		t.Fatalf("message %q, want it to start %q", f.Message, want)
	}
	for _, tc := range []struct {
		g    DLQGrowth
		want string
	}{
		{DLQGrowth{Grew: 3, Over: 2 * time.Second, Waiting: 15}, "grew by 3 in 2s (2/s), 15 waiting"},
		{DLQGrowth{Grew: 30, Over: time.Minute, Waiting: 30}, "grew by 30 in 1m (30/min), 30 waiting"},
		{DLQGrowth{Grew: 1, Over: 5 * time.Minute, Waiting: 1}, "grew by 1 in 5m (12/h), 1 waiting"},
	} {
		f, ok := DLQGrowingFinding("q", tc.g)
		if !ok || !strings.HasPrefix(f.Message, tc.want) {
			t.Errorf("%+v: %q %v, want %q…", tc.g, f.Message, ok, tc.want)
		}
	}
	for _, g := range []DLQGrowth{{Grew: 0, Over: time.Minute, Waiting: 9}, {Grew: -40, Over: time.Minute}, {Grew: 5}} {
		if f, ok := DLQGrowingFinding("q", g); ok {
			t.Errorf("%+v: a finding %+v for a DLQ that did not grow", g, f)
		}
	}
}

func TestDeadLetterQueues(t *testing.T) {
	v := seedGo()
	// A plain queue (no ladder) with its own DLQ.
	v.Exchanges = append(v.Exchanges, Exchange{Name: "emails.dlx", Type: ExchangeFanout})
	v.Queues = append(v.Queues,
		Queue{Name: "emails", Type: QueueClassic, Consumers: 1, Arguments: map[string]any{"x-dead-letter-exchange": "emails.dlx"}},
		Queue{Name: "emails.dlq", Type: QueueClassic})
	v.Bindings = append(v.Bindings, Binding{Source: "emails.dlx", Destination: "emails.dlq", DestinationType: "queue"})
	got := DeadLetterQueues(v, Discover(v))
	// orders.process is fed back by its tiers: a main, not a DLQ.
	if want := []string{"emails.dlq", "orders.dlq"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("dead-letter queues %q, want %q", got, want)
	}
}

func TestFndOrdinal(t *testing.T) {
	for n, want := range map[int64]string{1: "1st", 2: "2nd", 3: "3rd", 4: "4th", 6: "6th", 11: "11th", 12: "12th", 13: "13th", 21: "21st", 22: "22nd", 101: "101st", 111: "111th"} {
		if got := fndOrdinal(n); got != want {
			t.Errorf("fndOrdinal(%d) = %q, want %q", n, got, want)
		}
	}
}
