package rabbit

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// A JavaScript client's Date.now() in the AMQP timestamp (milliseconds
// where seconds are meant: foo-foo-mq) is a year past 9999, which
// encoding/json refuses, failing the whole peek -o json. It is kept as
// the number sent; a timestamp JSON can write is kept as a time.
func TestPropertiesOfATimestampPastYear9999(t *testing.T) {
	ms := int64(1733450000123)
	for _, tt := range []struct {
		name     string
		ts       time.Time
		wantRaw  int64
		wantJSON string
	}{
		{"milliseconds as seconds", time.Unix(ms, 0), ms, `"timestamp_raw":1733450000123`},
		{"seconds", time.Unix(ms/1000, 0).UTC(), 0, `"timestamp":"2024-12-06T01:53:20Z"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := propertiesOf(&amqp.Delivery{Timestamp: tt.ts})
			b, err := json.Marshal(p)
			if err != nil {
				t.Fatalf("json: %v", err)
			}
			if p.TimestampRaw != tt.wantRaw || (tt.wantRaw != 0) != (p.Timestamp == nil) || !strings.Contains(string(b), tt.wantJSON) {
				t.Errorf("timestamp %v, raw %d, JSON %s; want raw %d, JSON with %s", p.Timestamp, p.TimestampRaw, b, tt.wantRaw, tt.wantJSON)
			}
		})
	}
}
