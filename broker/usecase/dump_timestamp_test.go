package usecase

import (
	"testing"

	"github.com/ladder-tui/ladder/broker"
)

// A timestamp peek kept raw (past year 9999 as seconds: a JavaScript
// client's Date.now()) is dumped as sent, so a restore gives it back.
func TestRecordOfKeepsARawTimestamp(t *testing.T) {
	r := RecordOf(&broker.Message{Properties: broker.Properties{MessageID: "m", TimestampRaw: 1733450000123}})
	if r.Properties.Timestamp == nil || *r.Properties.Timestamp != 1733450000123 {
		t.Errorf("dumped timestamp %v, want 1733450000123 as sent", r.Properties.Timestamp)
	}
}
