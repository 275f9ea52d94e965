package rabbit

import (
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"
)

func TestRefusedSizeReadsTheBrokersMaximum(t *testing.T) {
	for reason, want := range map[string]int64{
		"PRECONDITION_FAILED - message size 17000000 is larger than configured max size 16777216": 16777216,
		"PRECONDITION_FAILED - message size 600 is larger than max size 536870912":                536870912,
		"PRECONDITION_FAILED - inequivalent arg 'x-max-length'":                                   0,
	} {
		if got := refusedSize(&amqp.Error{Code: amqp.PreconditionFailed, Reason: reason}); got != want {
			t.Errorf("%q: %d, want %d", reason, got, want)
		}
	}
	if refusedSize(nil) != 0 || refusedSize(&amqp.Error{Code: amqp.NotFound, Reason: "message size 2 is larger than max size 1"}) != 0 {
		t.Error("read a maximum from something that is no size refusal")
	}
}
