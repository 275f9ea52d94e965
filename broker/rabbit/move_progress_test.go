package rabbit_test

import (
	"context"
	"fmt"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/retry/moveplan"
)

// Progress counts toward the plan the user confirmed, not the source's
// depth: --where choosing 4 of 40 shows "4 of 4", as the simulation does.
func TestMoveProgressCountsTowardThePlan(t *testing.T) {
	f := newFixture(t)
	src, dst := f.queue("src", nil), f.queue("dst", nil)
	var msgs []amqp.Publishing
	for i := range 40 {
		msgs = append(msgs, amqp.Publishing{MessageId: fmt.Sprint("p-", i), Headers: amqp.Table{"pick": fmt.Sprint(i%10 == 0)}, Body: []byte("x")})
	}
	f.publish("", src, msgs...)
	where, err := moveplan.ParseWhere([]string{"header:pick=true"})
	if err != nil {
		t.Fatal(err)
	}
	req := broker.MoveRequest{From: src, To: moveplan.Target{Kind: moveplan.TargetQueue, Name: dst}, Where: where}
	l := f.live(false)
	dry := req
	dry.DryRun = true
	plan, err := l.Move(context.Background(), dry, nil)
	if err != nil || len(plan.Planned) != 4 {
		t.Fatalf("dry run %+v %v", plan, err)
	}
	req.Expect = plan.Planned
	var last broker.MoveProgress
	rep, err := l.Move(context.Background(), req, func(p broker.MoveProgress) {
		if p.Total != 4 {
			t.Errorf("progress %d of %d, want of 4", p.Done, p.Total)
		}
		last = p
	})
	if err != nil || rep.Moved != 4 || last.Done != 4 || last.Total != 4 {
		t.Fatalf("move %+v %v, last progress %+v", rep, err, last)
	}
}
