package rabbit

import (
	"fmt"
	"strings"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker"
)

// Whichever step of a browse meets the connection amqp091 dropped on a
// frame it could not parse (the delivery loop's close reason, a cancel, the
// next consumer's qos), the browse stops "after N" with a note; any other
// error is not taken for it. (On 4.3 the cancel met it first, and the peek
// failed with exit 1.)
func TestStopUnreadableWhicheverStepMeetsIt(t *testing.T) {
	dropped := &amqp.Error{Code: amqp.FrameError, Reason: `Exception (502) Reason: "invalid field or value inside of a frame"`}
	for _, tc := range []struct {
		name string
		err  error
		stop bool
	}{
		{"the close reason", dropped, true},
		{"a cancel's error", dropped, true},
		{"wrapped by the next consumer", fmt.Errorf("cancel consumer ladder-peek: %w", dropped), true},
		{"the broker's own close", &amqp.Error{Code: amqp.ConnectionForced, Reason: "CONNECTION_FORCED", Server: true}, false},
		{"no reason", (*amqp.Error)(nil), false},
		{"another error", fmt.Errorf("qos: %w", amqp.ErrClosed), false},
	} {
		res := &broker.PeekResult{}
		run := broker.NewBrowseRun(res, broker.PeekOptions{}, 10)
		if got := stopUnreadable(run, tc.err); got != tc.stop {
			t.Errorf("%s: stopped %v, want %v", tc.name, got, tc.stop)
			continue
		}
		if tc.stop && (!strings.HasPrefix(res.Incomplete, "stopped after 0 messages") || len(res.SideEffects) != 1) {
			t.Errorf("%s: incomplete %q, side effects %q", tc.name, res.Incomplete, res.SideEffects)
		}
		run.Finish()
	}
}
