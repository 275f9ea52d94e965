package cli

import (
	"strings"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker/brokertest"
)

// A move that meets a message the AMQP client cannot parse (RabbitMQ
// delivers it, amqp091 drops the connection): the move stops with one clear
// line and exit 3, and nothing is lost — every message is in the source or
// the target, the unreadable one still in the source.
func TestMoveStopsClearlyAtUnreadableMessage(t *testing.T) {
	r := brokerEnv(t)
	for _, h := range brokertest.UnreadableMessages() {
		t.Run(h.Name, func(t *testing.T) {
			src := brokertest.Name(t, "unreadable-src")
			ok := func(id string) brokertest.Hostile {
				return brokertest.Hostile{Name: id, RoutingKey: "ok", Msg: amqp.Publishing{MessageId: id, DeliveryMode: amqp.Persistent, Body: []byte(id)}}
			}
			brokertest.PublishHostile(t, r, src, []brokertest.Hostile{ok("a"), ok("b"), h, ok("c")})
			dst := testQueue(t, r, "unreadable-dst", 0, nil)

			code, out, errOut := runLadder(t, "move", "--from", src, "--to", "queue:"+dst, "--yes")
			terminalSafe(t, "move", out+errOut)
			if code != exitPartial {
				t.Fatalf("move: exit %d, want %d: %s", code, exitPartial, errOut)
			}
			if strings.Count(strings.TrimSpace(errOut), "\n") != 0 || !strings.Contains(errOut, src) || !strings.Contains(errOut, "could not read") {
				t.Errorf("move: want one line naming %s, got %q", src, errOut)
			}
			if !strings.Contains(out, "could not read a message of "+src) || !strings.Contains(out, "ladder peek "+src) {
				t.Errorf("move report does not say what stopped it:\n%s", out)
			}
			// a and b may be in both (acked or not when the connection
			// dropped); the unreadable one and c stay in the source.
			s, d := depthOf(t, r, src), depthOf(t, r, dst)
			if s < 2 || s+d < 4 {
				t.Fatalf("source %d, target %d: want the unreadable message and c in the source, 4 in all", s, d)
			}
		})
	}
}
