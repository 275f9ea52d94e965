package usecase

import (
	"strings"
	"testing"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/dumpfile"
	"github.com/ladder-tui/ladder/broker/wire"
	"github.com/ladder-tui/ladder/retry"
)

func TestCheckLineSaysWhyTheBrokerWouldRefuseIt(t *testing.T) {
	lim := broker.PublishLimits{MaxMessageSize: 1000, Source: "RabbitMQ 4.x's default max_message_size", FrameMax: 131072}
	ok := dumpfile.Record{Properties: dumpfile.Properties{MessageID: "m"}, Headers: retry.Headers{"x": "y"}, Body: make([]byte, 1000)}
	if why := checkLine(&ok, lim); why != "" {
		t.Fatalf("a line within every limit: %q", why)
	}
	for _, c := range []struct {
		name string
		edit func(*dumpfile.Record)
		want string
	}{
		{"body", func(r *dumpfile.Record) { r.Body = make([]byte, 1001) }, "body of 1001 bytes is over the broker's maximum message size (1000 bytes, RabbitMQ 4.x's default max_message_size)"},
		{"headers", func(r *dumpfile.Record) { r.Headers = retry.Headers{"big": strings.Repeat("x", 140000)} }, "do not fit in one frame (the connection's frame_max is 131072 bytes)"},
		{"property", func(r *dumpfile.Record) { r.Properties.MessageID = strings.Repeat("i", 256) }, "message_id is 256 bytes, more than AMQP's 255"},
		{"header name", func(r *dumpfile.Record) { r.Headers = retry.Headers{strings.Repeat("k", 256): 1} }, "header name of 256 bytes"},
		{"header name not UTF-8", func(r *dumpfile.Record) { r.Headers = retry.Headers{"a\xffb": 1} }, `header name "a\xffb" is not valid UTF-8`},
		{"header type", func(r *dumpfile.Record) { r.Headers = retry.Headers{"u": uint64(1)} }, "headers AMQP cannot carry"},
		// RabbitMQ closes the channel on these (issue 31: one stopped a whole replay).
		{"expiration not a number", func(r *dumpfile.Record) { r.Properties.Expiration = "abc" }, `expiration "abc" is not a whole number of milliseconds`},
		{"expiration negative", func(r *dumpfile.Record) { r.Properties.Expiration = "-5" }, `expiration "-5" is not a whole number of milliseconds`},
	} {
		r := ok
		c.edit(&r)
		if why := checkLine(&r, lim); !strings.Contains(why, c.want) {
			t.Errorf("%s: %q, want %q", c.name, why, c.want)
		}
	}
	withTTL := ok
	withTTL.Properties.Expiration = "60000"
	if why := checkLine(&withTTL, lim); why != "" {
		t.Errorf("a whole-number expiration: %q", why)
	}
	// Unknown limits check nothing but what AMQP itself refuses.
	big := ok
	big.Body = make([]byte, 1<<20)
	if why := checkLine(&big, broker.PublishLimits{}); why != "" {
		t.Errorf("no limits known: %q", why)
	}
}

// propertiesSize counts what amqp091 writes: a string header of n bytes
// costs 1 (name length) + len(name) + 1 (type) + 4 (length) + n.
func TestPropertiesSizeCountsTheEncoding(t *testing.T) {
	base := wire.PropertiesSize(broker.Properties{}, nil)
	if base != 14 {
		t.Fatalf("empty properties: %d, want 14 (class, weight, body size, flags)", base)
	}
	got := wire.PropertiesSize(broker.Properties{MessageID: "abc"}, retry.Headers{"k": "12345", "n": int64(1), "t": map[string]any{"a": true}})
	want := 14 + (1 + 3) + 4 + (1 + 1 + 1 + 4 + 5) + (1 + 1 + 9) + (1 + 1 + 1 + 4 + (1 + 1 + 2))
	if got != want {
		t.Errorf("size %d, want %d", got, want)
	}
}
