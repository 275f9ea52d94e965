package brokertest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker/rabbit"
)

// Hostile messages: what a broker may hand ladder that a terminal must never
// see raw, and that must not cost more than it should to decode.
const (
	// Evil is text with an OSC (retitles the window), a BEL, a CSI (clears
	// the screen) and a C1 CSI.
	Evil = "\x1b]0;pwned\x07\x1b[2J\u009b31m"
	// BadUTF8 is text that is not UTF-8: a lone continuation byte, a
	// truncated sequence, an overlong NUL.
	BadUTF8 = "bad\xff\xfe\xc3(\xc0\x80"
	// HugeBody is the size of the huge body: just under 4.x's default
	// max_message_size of 16 MiB, so every broker takes it (3.10's is 128
	// MiB; 50 MiB there tested the same code, under the race detector for
	// minutes).
	HugeBody = 16<<20 - 64<<10
	// ManyHeaders and NestDepth: 10,000 headers, tables nested 100 deep.
	ManyHeaders = 10000
	NestDepth   = 100
)

// Hostile is one hostile message and the routing key it is published with.
type Hostile struct {
	Name       string
	RoutingKey string
	Msg        amqp.Publishing
}

// What amqp091-go (the AMQP client) reads at most: a delivery with more
// drops the connection (RabbitMQ itself accepts and delivers it).
const (
	ClientMaxFields = 8192
	ClientMaxDepth  = 32
)

// nest is a table nested n deep and an array nested n deep, the innermost
// holding hostile text.
func nest(n int) (amqp.Table, []any) {
	t := amqp.Table{"leaf": "bottom" + Evil}
	a := []any{"leaf" + Evil}
	for i := 1; i < n; i++ {
		t = amqp.Table{fmt.Sprintf("level%d", i): t}
		a = []any{a}
	}
	return t, a
}

// headers is n headers, short enough that 10,000 fit the broker's
// frame_max (128 KiB by default), one in ten of them hostile, plus a retry
// count.
func headers(n int) amqp.Table {
	h := make(amqp.Table, n)
	for i := range n - 1 {
		if i%10 == 0 {
			h[fmt.Sprintf("h%04x%s", i, Evil)] = Evil
		} else {
			h[fmt.Sprintf("h%04x", i)] = int8(i)
		}
	}
	h["x-retry-count"] = int32(7)
	return h
}

// HostileMessages are hostile messages ladder reads whole, in the order
// they are published: escape sequences and invalid UTF-8 everywhere a
// message has text, as many headers and as deep a nesting as the AMQP
// client reads; huge adds the 50 MiB body (of escape sequences and
// invalid UTF-8 too).
func HostileMessages(huge int) []Hostile {
	nested, arr := nest(ClientMaxDepth)
	deaths, _ := nest(ClientMaxDepth - 1) // inside x-death's array
	hs := []Hostile{
		{Name: "escapes", RoutingKey: "rk" + Evil, Msg: amqp.Publishing{
			ContentType: "text/plain" + Evil, ContentEncoding: "enc" + Evil, CorrelationId: "corr" + Evil,
			ReplyTo: "reply" + Evil, MessageId: "id" + Evil, Type: "type" + Evil, AppId: "app" + Evil,
			DeliveryMode: amqp.Persistent,
			Headers: amqp.Table{
				"x-evil" + Evil:  "value" + Evil,
				"x-last-error":   "boom" + Evil,
				"x-retry-count":  int32(3),
				"x-array" + Evil: []any{"a" + Evil, int32(1)},
				"x-table":        amqp.Table{"k" + Evil: "v" + Evil},
				"x-bytes":        []byte(Evil),
			},
			Body: []byte("line1" + Evil + "\nline2\r\x00\x7f end"),
		}},
		{Name: "bad-utf8", RoutingKey: "rk" + BadUTF8, Msg: amqp.Publishing{
			MessageId: "id" + BadUTF8, DeliveryMode: amqp.Persistent,
			Headers: amqp.Table{
				"x-bad" + BadUTF8: "value" + BadUTF8,
				"x-last-error":    "err" + BadUTF8 + Evil,
				"x-table":         amqp.Table{"k" + BadUTF8: "v" + BadUTF8},
			},
			Body: []byte(BadUTF8 + Evil + "\xff"),
		}},
		{Name: "many-headers", RoutingKey: "many", Msg: amqp.Publishing{MessageId: "many", DeliveryMode: amqp.Persistent,
			Headers: headers(ClientMaxFields), Body: []byte("many")}},
		{Name: "nested", RoutingKey: "nested", Msg: amqp.Publishing{MessageId: "nested", DeliveryMode: amqp.Persistent,
			Headers: amqp.Table{"x-nested": nested, "x-nested-array": arr, "x-death": []any{deaths}}, Body: []byte("nested")}},
	}
	if huge > 0 {
		body := bytes.Repeat([]byte(Evil+BadUTF8), huge/len(Evil+BadUTF8)+1)[:huge]
		hs = append(hs, Hostile{Name: "huge", RoutingKey: "huge", Msg: amqp.Publishing{MessageId: "huge", DeliveryMode: amqp.Persistent, Body: body}})
	}
	return hs
}

// UnreadableMessages are hostile messages RabbitMQ accepts and delivers
// but the AMQP client refuses to parse: 10,000 headers, tables nested 100
// deep.
func UnreadableMessages() []Hostile {
	nested, arr := nest(NestDepth)
	return []Hostile{
		{Name: "10000-headers", RoutingKey: "many", Msg: amqp.Publishing{MessageId: "many", DeliveryMode: amqp.Persistent,
			Headers: headers(ManyHeaders), Body: []byte("many")}},
		{Name: "nested-100", RoutingKey: "nested", Msg: amqp.Publishing{MessageId: "nested", DeliveryMode: amqp.Persistent,
			Headers: amqp.Table{"x-nested": nested, "x-nested-array": arr}, Body: []byte("nested")}},
	}
}

// EmojiQueueName is a unique queue name of exactly 255 bytes (RabbitMQ's
// limit), nearly all of it 4-byte emoji.
func EmojiQueueName() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	prefix := "ladder-test.emoji." + hex.EncodeToString(b[:]) + "." // 27 bytes
	n := prefix + strings.Repeat("🐇", (255-len(prefix))/4)
	return n + strings.Repeat("x", 255-len(n))
}

// PublishHostile declares queue (deleted when the test ends) behind a
// fanout exchange of its own, so routing keys can be anything, and
// publishes msgs to it, confirmed.
func PublishHostile(t testing.TB, r *rabbit.Resolved, queue string, msgs []Hostile) {
	t.Helper()
	ctx := context.Background()
	conn, err := r.DialAMQP(ctx, "test hostile")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	ex := Name(t, "fanout")
	t.Cleanup(func() {
		c, err := r.DialAMQP(ctx, "test cleanup")
		if err != nil {
			return
		}
		defer c.Close()
		if ch, err := c.Channel(); err == nil {
			_, _ = ch.QueueDelete(queue, false, false, false)
			_ = ch.ExchangeDelete(ex, false, false)
		}
	})
	if _, err := ch.QueueDeclare(queue, true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	if err := ch.ExchangeDeclare(ex, amqp.ExchangeFanout, true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	if err := ch.QueueBind(queue, "", ex, false, nil); err != nil {
		t.Fatal(err)
	}
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	for _, h := range msgs {
		dc, err := ch.PublishWithDeferredConfirmWithContext(ctx, ex, h.RoutingKey, true, false, h.Msg)
		if err != nil {
			t.Fatalf("publish %s: %v", h.Name, err)
		}
		if !dc.Wait() {
			t.Fatalf("publish %s: not confirmed", h.Name)
		}
	}
}
