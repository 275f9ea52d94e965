package ui

import (
	"strconv"
	"strings"
	"time"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/internal/present"
	"github.com/ladder-tui/ladder/internal/termtext"
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/ui/style"
)

// Pure renderers of the queue browser's table. A row's text is built once
// per data load (or resize); drawing a frame only picks the visible rows.

// browserCols are the table's column widths.
type browserCols struct {
	pos, id, age, retry, death, due, hol, size, rkey int
	long                                             bool // room for long labels
}

// browserLayout fits the columns into width (the mark column and its gap
// take the first two cells).
func browserLayout(width int) browserCols {
	// age fits fmtAge (6 cells); due fits "late 45s" and "23h59m".
	c := browserCols{pos: 5, id: 12, age: 6, retry: 6, death: 15, due: 8, hol: 4, size: 5}
	extra := max(0, width-80)
	if extra >= 40 {
		c.long = true
		c.retry += 10
		c.due += 6 // "overdue 23h59m"
		c.hol += 4
		c.age++
		c.size++
		extra -= 22
	}
	c.id += extra * 35 / 100
	c.death += extra * 35 / 100
	// cursor and mark glyphs, then nine columns separated by single spaces.
	used := 2 + c.pos + c.id + c.age + c.retry + c.death + c.due + c.hol + c.size + 8
	c.rkey = max(4, width-used)
	return c
}

// Sort orders of the browser.
type sortKey int

const (
	sortPosition sortKey = iota
	sortAge
	sortRetries
	sortDue
	sortSize
	sortKeys
)

func (s sortKey) String() string {
	return [...]string{"position", "age (oldest first)", "retries (most first)", "due (soonest first)", "size (largest first)"}[s]
}

func renderBrowserHeader(c browserCols, st *style.Styles) string {
	retries, rkey := "RETRY", "KEY"
	if c.long {
		retries = "RETRIES"
	}
	if c.rkey >= 11 {
		rkey = "ROUTING KEY"
	}
	cells := []string{
		" ",
		termtext.FitRight("POS", c.pos),
		termtext.Fit("MESSAGE ID", c.id),
		termtext.FitRight("AGE", c.age),
		termtext.Fit(retries, c.retry),
		termtext.Fit("LAST DEATH", c.death),
		termtext.FitRight("DUE", c.due),
		termtext.Fit("HOL", c.hol),
		termtext.FitRight("SIZE", c.size),
		termtext.Fit(rkey, c.rkey),
	}
	return st.Header.Render(strings.Join(cells, " "))
}

// renderBrowserRow is one message's row without the mark column: every
// broker-supplied field sanitised and fitted. at is when the peek was taken;
// ages and due times are relative to it.
func renderBrowserRow(m *broker.Message, c browserCols, at time.Time) string {
	var b strings.Builder
	b.Grow(c.pos + c.id + c.death + c.rkey + 64)
	cell := func(s string, w int, right bool) {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		if right {
			b.WriteString(termtext.FitRight(s, w))
		} else {
			b.WriteString(termtext.Fit(s, w))
		}
	}
	id := m.Properties.MessageID
	if id == "" {
		id = present.NoValue
	}
	var ts time.Time
	if m.Properties.Timestamp != nil {
		ts = *m.Properties.Timestamp
	}
	cell(strconv.Itoa(m.Position), c.pos, true)
	// Ids often share a prefix (app-timestamp-n): keep the end that differs.
	idText := termtext.Sanitize(id)
	if termtext.Width(idText) > c.id {
		idText = termtext.TruncateLeft(idText, c.id)
	}
	cell(idText, c.id, false)
	cell(present.Age(ts, at), c.age, true)
	cell(retryCell(m.Retry, c.long), c.retry, false)
	cell(termtext.Sanitize(lastDeath(m.Deaths)), c.death, false)
	cell(present.Due(m.HoL, at, dueForm(c.long)), c.due, true)
	cell(present.Blocked(m.HoL, c.long), c.hol, false)
	cell(present.Bytes(m.BodySize), c.size, true)
	cell(termtext.Sanitize(m.RoutingKey), c.rkey, false)
	return b.String()
}

// buildBrowserRows renders every message of a peek once.
func buildBrowserRows(res *broker.PeekResult, c browserCols, at time.Time) []browserRow {
	rows := make([]browserRow, len(res.Messages))
	for i := range res.Messages {
		message := &res.Messages[i]
		rows[i] = browserRow{message: message, text: renderBrowserRow(message, c, at), search: searchText(message), warn: rowWarn(message)}
	}
	return rows
}

// sourceShort names retry-count conventions in three letters for 80 columns.
var sourceShort = map[string]string{
	retry.SourceRetryCount:    "xrc",
	retry.SourceYiiAttempt:    "yii",
	retry.SourceMassTransit:   "mt",
	retry.SourceNServiceBus:   "nsb",
	retry.SourceXDeath:        "xd",
	retry.SourceAcquiredCount: "acq",
	retry.SourceDeliveryCount: "dlv",
}

// retryCell is "3 xd" (count and where it was read), "0" for a first delivery.
func retryCell(r retry.RetryState, long bool) string {
	n := strconv.FormatInt(r.Count, 10)
	if r.Source == "" || r.Source == retry.SourceNone {
		return n
	}
	if long {
		return n + " " + r.Source
	}
	if s, ok := sourceShort[r.Source]; ok {
		return n + " " + s
	}
	return n + " " + r.Source
}

// lastDeath is the most recent x-death entry as reason@queue.
func lastDeath(ds []retry.Death) string {
	if len(ds) == 0 {
		return ""
	}
	d := ds[0]
	r := string(d.Reason)
	if d.Reason == retry.ReasonOther && d.RawReason != "" {
		r = d.RawReason
	}
	return r + "@" + d.Queue
}

// rowWarn marks rows worth a look: held back or overdue.
func rowWarn(m *broker.Message) bool {
	return m.HoL != nil && (m.HoL.Blocked || m.HoL.Overdue > 0)
}

// searchText is what the filter matches, lower case: id, routing key,
// deaths, the last error and the exchange.
func searchText(m *broker.Message) string {
	parts := []string{m.Properties.MessageID, m.RoutingKey, m.Exchange, lastDeath(m.Deaths), m.Retry.LastError, m.Properties.Type, m.Properties.CorrelationID}
	return strings.ToLower(strings.Join(parts, "\x00"))
}

// renderPeekBanner states what the peek saw and what it cost.
func renderPeekBanner(res *broker.PeekResult, at time.Time, width int, st *style.Styles) []string {
	if res == nil {
		return nil
	}
	typ := res.Type
	if typ == "" {
		typ = retry.QueueClassic
	}
	head := termtext.Sanitize(res.Queue) + " · " + typ + " · peeked " + strconv.Itoa(len(res.Messages)) +
		" of " + present.Count(res.Total) + " (" + present.Count(res.Ready) + " ready) at " + present.Clock(at)
	lines := []string{st.Strong.Render(termtext.Truncate(head, width))}
	// Side effects are what the user must not miss: wrapped, not cut. A peek
	// that browsed nothing and released nothing changed nothing, whatever a
	// client reports.
	for _, s := range peekSideEffects(res) {
		lines = append(lines, wrapStyled(st.Banner, "⚠ "+termtext.Sanitize(s), width)...)
	}
	if res.HoLBasis != "" {
		lines = append(lines, st.Muted.Render(termtext.Truncate("due times from "+termtext.Sanitize(res.HoLBasis), width)))
	}
	return lines
}

// peekSideEffects are the side effects worth showing: none when the peek
// saw no message and released none.
func peekSideEffects(res *broker.PeekResult) []string {
	if len(res.Messages) == 0 && res.Released == 0 {
		return nil
	}
	return res.SideEffects
}

// dueForm is the due-time form a column of this width takes.
func dueForm(long bool) present.DueForm {
	if long {
		return present.DueWide
	}
	return present.DueCell
}
