package ui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// A timestamp JSON cannot write (a JavaScript client's Date.now() where
// AMQP means seconds: peek keeps it as TimestampRaw) is shown as sent in
// the inspector, not dropped and not read as milliseconds.
func TestInspectorShowsARawTimestamp(t *testing.T) {
	msg := fixtureMessage(1)
	msg.Properties.Timestamp, msg.Properties.TimestampRaw = nil, 1733450000123
	props := strings.Join(strings.Fields(ansi.Strip(strings.Join(renderProperties(&msg, fixedNow, 100, newStylesForTest()), "\n"))), " ")
	if !strings.Contains(props, "timestamp 1733450000123 (as sent; as seconds, past year 9999: milliseconds?)") {
		t.Errorf("%s", props)
	}
}
