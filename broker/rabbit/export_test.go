package rabbit

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	amqp1 "github.com/Azure/go-amqp"

	"github.com/ladder-tui/ladder/broker/internal/testhook"
)

// RefuseAMQP1 makes l's peeks find AMQP 1.0 refused, as on a broker without
// it, until the test ends: the costly browse's rules then apply on 4.3.
func RefuseAMQP1(t testing.TB, l *Live) {
	l.amqp1Refused = errors.New("amqp:not-implemented: refused by the test")
	t.Cleanup(func() { l.amqp1Refused = nil })
}

// OwnRedelivered is how many redeliveries l's recent peeks of queue made
// (what it keeps out of the queue's redeliver rate).
func OwnRedelivered(l *Live, queue string) int {
	n := 0
	for _, o := range l.ownSince(time.Now()) {
		if o.queue == queue {
			n += o.n
		}
	}
	return n
}

// SetDefaultDumpLimitForTest makes a browsing dump without -n read at most
// n, as it reads DefaultDumpLimit: a test of the bound without 100,000
// messages. It returns what undoes it.
func SetDefaultDumpLimitForTest(n int) (restore func()) {
	prev := testhook.DumpLimit.Swap(int64(n))
	return func() { testhook.DumpLimit.Store(prev) }
}

// AttachBrowseForTest attaches (and detaches) an AMQP 1.0 browse of queue
// on l's session, as a peek's first step does.
func AttachBrowseForTest(ctx context.Context, l *Live, queue string) error {
	b, err := l.attachBrowse(ctx, queue)
	if err == nil {
		b.close()
	}
	return err
}

// BrowseAMQP1ForTest browses the first n ready messages of queue over AMQP
// 1.0 and releases them, as a peek on 4.3+ does, whatever the broker's
// version (PeekModeOf browses so only from 4.3): their message ids.
func BrowseAMQP1ForTest(ctx context.Context, l *Live, queue string, n int) ([]string, error) {
	b, err := l.attachBrowse(ctx, queue)
	if err != nil {
		return nil, err
	}
	var ids []string
	_, _, err = b.browse(ctx, n, n, func(m *amqp1.Message) error {
		if m.Properties != nil {
			ids = append(ids, fmt.Sprint(m.Properties.MessageID))
		}
		return nil
	})
	return ids, err
}

// FromTable is how a delivery's headers reach the decoder.
var FromTable = fromTable

// SlowTake makes each move's first n takes take d each, until the test
// ends.
func SlowTake(t testing.TB, n int, d time.Duration) {
	var left atomic.Int64
	left.Store(int64(n))
	slowTake = func() {
		if left.Add(-1) >= 0 {
			time.Sleep(d)
		}
	}
	t.Cleanup(func() { slowTake = nil })
}
