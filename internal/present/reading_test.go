package present

import (
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker"
)

func TestReadingSaysHowFarABrowseIs(t *testing.T) {
	for _, tc := range []struct {
		p          broker.PeekProgress
		text, line string
	}{
		{broker.PeekProgress{Read: 0, Want: 0}, "reading the queue… 0", "reading the queue… 0 · 0s"},
		{broker.PeekProgress{Read: 412, Want: 1000, Elapsed: 300 * time.Millisecond}, "reading the queue… 412 of 1000", "reading the queue… 412 of 1000 · 300ms"},
		{broker.PeekProgress{Read: 70000, Want: 100000, Elapsed: 2 * time.Second}, "reading the queue… 70000 of 100000", "reading the queue… 70000 of 100000 · 35k msg/s · 2s"},
	} {
		if got := Reading(tc.p); got != tc.text {
			t.Errorf("Reading(%+v) = %q, want %q", tc.p, got, tc.text)
		}
		if got := ReadingLine(tc.p); got != tc.line {
			t.Errorf("ReadingLine(%+v) = %q, want %q", tc.p, got, tc.line)
		}
	}
}
