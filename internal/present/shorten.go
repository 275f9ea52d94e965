package present

import (
	"slices"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/ladder-tui/ladder/internal/termtext"
)

// Shortening the names of one table column. It lives here, beside Middle
// and FitCause, because it is how a column of names reads: the commands'
// tables and the UI's can cut names alike. It works on text already made
// safe (termtext.Sanitize) and measures it as termtext does.

// ShortenNames fits names, the names one column shows, into width cells
// each, so that names that differ still differ once cut. A name that fits
// is left as it is. A longer one keeps its start and its end with one
// ellipsis between; its end is long enough that no other name of the column
// ends the same way, so the queues of one ladder, which share a long start,
// keep the part that tells them apart:
//
//	registration_service.retry.5s  → registratio…retry.5s
//	registration_service.retry.30s → registrati…retry.30s
//
// When no end of a name can tell it apart within width (another name ends
// with the whole of it), its start does, when that fits. Only when neither
// fits (or when names hold an ellipsis themselves) may two cut names read
// the same. The end is widened to begin at a separator (. _ - / : @ space),
// the furthest that leaves the start a third of the room. Widths are
// display cells (wide runes count two, grapheme clusters are never split),
// so a cut name can be a cell narrower than width but never wider. The
// result is in the order of names.
func ShortenNames(names []string, width int) []string {
	out := make([]string, len(names))
	var long []string
	for i, n := range names {
		out[i] = n
		if termtext.Width(n) > width {
			long = append(long, n)
		}
	}
	if len(long) == 0 {
		return out
	}
	if width < 2 {
		for i, n := range names {
			out[i] = termtext.Truncate(n, width)
		}
		return out
	}
	head, tail := sharedEnds(names)
	cut := make(map[string]string, len(long))
	for _, n := range long {
		if _, ok := cut[n]; !ok {
			cut[n] = shortenOne(n, width, head[n], tail[n])
		}
	}
	for i, n := range names {
		if c, ok := cut[n]; ok {
			out[i] = c
		}
	}
	return out
}

// sharedEnds is, for each name, the longest start (head) and the longest
// end (tail), in bytes, that it shares with another name of the set. The
// longest shared start is with a neighbour in sorted order, and the longest
// shared end with a neighbour in the order of the names read backwards, so
// two sorts find them all.
func sharedEnds(names []string) (head, tail map[string]int) {
	uniq := slices.Clone(names)
	slices.Sort(uniq)
	uniq = slices.Compact(uniq)
	head = make(map[string]int, len(uniq))
	for i := 1; i < len(uniq); i++ {
		n := commonPrefix(uniq[i-1], uniq[i])
		head[uniq[i-1]] = max(head[uniq[i-1]], n)
		head[uniq[i]] = max(head[uniq[i]], n)
	}
	back := make([]string, len(uniq))
	for i, n := range uniq {
		back[i] = reverseBytes(n)
	}
	slices.Sort(back)
	tail = make(map[string]int, len(uniq))
	for i := 1; i < len(back); i++ {
		n := commonPrefix(back[i-1], back[i])
		a, b := reverseBytes(back[i-1]), reverseBytes(back[i])
		tail[a] = max(tail[a], n)
		tail[b] = max(tail[b], n)
	}
	return head, tail
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// reverseBytes reverses s byte by byte: only to sort by ends, never shown.
func reverseBytes(s string) string {
	b := []byte(s)
	slices.Reverse(b)
	return string(b)
}

// cluster is one grapheme cluster of a name and its width in cells.
type cluster struct {
	text  string
	cells int
}

func clusters(s string) []cluster {
	var cs []cluster
	for s != "" {
		c, w := ansi.FirstGraphemeCluster(s, ansi.GraphemeWidth)
		if c == "" {
			break
		}
		cs = append(cs, cluster{c, w})
		s = s[len(c):]
	}
	return cs
}

// shortenOne cuts n (wider than width, width ≥ 2) to its start, an
// ellipsis and its end; shared are the bytes of its start (head) and end
// (tail) that another name of the column shares.
func shortenOne(n string, width, sharedHead, sharedTail int) string {
	cs := clusters(n)
	room := width - termtext.Width(termtext.Ellipsis)
	// The fewest cells of an end (a start) that no other name shares: a
	// whole number of clusters longer, in bytes, than what is shared;
	// -1 when the whole name is shared (it is another's end or start).
	needTail, needHead := -1, -1
	for i, bytes, cells := len(cs)-1, 0, 0; i >= 0; i-- {
		bytes, cells = bytes+len(cs[i].text), cells+cs[i].cells
		if bytes > sharedTail {
			needTail = cells
			break
		}
	}
	for i, bytes, cells := 0, 0, 0; i < len(cs); i++ {
		bytes, cells = bytes+len(cs[i].text), cells+cs[i].cells
		if bytes > sharedHead {
			needHead = cells
			break
		}
	}
	var tail int
	switch {
	case needTail >= 0 && needTail <= room:
		// At least a third of the room, as Middle keeps, and from the
		// furthest separator that leaves the start a third: in a ladder's
		// tree the start is the main queue's, shown above.
		tail = separatorTail(cs, max(needTail, room/3), room-room/3)
	case needHead >= 0 && needHead <= room:
		tail = min(room/3, room-needHead)
	default:
		tail = room / 3
	}
	return takeHead(cs, room-tail) + termtext.Ellipsis + takeTail(cs, tail)
}

// separatorTail is the width of the longest end of least to most cells
// that begins just after a separator; least when there is none.
func separatorTail(cs []cluster, least, most int) int {
	tail, w := least, 0
	for i := len(cs) - 1; i > 0 && w < most; i-- {
		w += cs[i].cells
		if w >= least && w <= most && strings.Contains(". _-/:@", cs[i-1].text) {
			tail = w
		}
	}
	return tail
}

// takeHead is the longest start of whole clusters within cells cells.
func takeHead(cs []cluster, cells int) string {
	var b strings.Builder
	for _, c := range cs {
		if c.cells > cells {
			break
		}
		cells -= c.cells
		b.WriteString(c.text)
	}
	return b.String()
}

// takeTail is the longest end of whole clusters within cells cells.
func takeTail(cs []cluster, cells int) string {
	i := len(cs)
	for i > 0 && cs[i-1].cells <= cells {
		cells -= cs[i-1].cells
		i--
	}
	var b strings.Builder
	for _, c := range cs[i:] {
		b.WriteString(c.text)
	}
	return b.String()
}
