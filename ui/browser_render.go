package ui

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/internal/present"
	"github.com/ladder-tui/ladder/internal/termtext"
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/topology"
	"github.com/ladder-tui/ladder/ui/component/table"
	"github.com/ladder-tui/ladder/ui/style"
	"github.com/ladder-tui/ladder/ui/styled"
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
	// The cursor and mark glyphs, then the routing key takes what is left.
	c.rkey = table.Remaining(width, browserLead, 4, c.pos, c.id, c.age, c.retry, c.death, c.due, c.hol, c.size)
	return c
}

// browserLead is the mark column and its gap.
const browserLead = 2

// columns is the table's column spec, titles chosen for the room they have.
func (c browserCols) columns() []table.Column {
	retries, rkey := "RETRY", "KEY"
	if c.long {
		retries = "RETRIES"
	}
	if c.rkey >= 11 {
		rkey = "ROUTING KEY"
	}
	return []table.Column{
		{Title: "POS", Width: c.pos, Right: true}, {Title: "MESSAGE ID", Width: c.id},
		{Title: "AGE", Width: c.age, Right: true}, {Title: retries, Width: c.retry},
		{Title: "LAST DEATH", Width: c.death}, {Title: "DUE", Width: c.due, Right: true},
		{Title: "HOL", Width: c.hol}, {Title: "SIZE", Width: c.size, Right: true},
		{Title: rkey, Width: c.rkey},
	}
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
	return st.Header.Render(strings.Repeat(" ", browserLead-1) + " " + table.Header(c.columns()))
}

// renderBrowserRow is one message's row without the mark column: every
// broker-supplied field sanitised and fitted. at is when the peek was taken;
// ages and due times are relative to it. Alone, its LAST DEATH is cut at
// the end; buildBrowserRows cuts it knowing the other rows'.
func renderBrowserRow(m *broker.Message, c browserCols, at time.Time) string {
	return browserRowText(m, c, at, termtext.Sanitize(lastDeath(m.Deaths)))
}

// browserRowText is renderBrowserRow with the LAST DEATH cell as given
// (sanitised; cut to the column when wider).
func browserRowText(m *broker.Message, c browserCols, at time.Time, death string) string {
	id := m.Properties.MessageID
	if id == "" {
		id = present.NoValue
	}
	// AGE is the timestamp's; a time read elsewhere (x-death, a fault
	// time) is marked "~" (the inspector names where it came from).
	age := present.MessageAge(m, at)
	// Ids often share a prefix (app-timestamp-n): keep the end that differs.
	idText := termtext.Sanitize(id)
	if termtext.Width(idText) > c.id {
		idText = termtext.TruncateLeft(idText, c.id)
	}
	return table.Join(table.Cells(c.columns(),
		strconv.Itoa(m.Position), idText, age, retryCell(m.Retry, c.long),
		death, present.DueOf(m.HoL, m.Retry.DueTime, m.Retry.DueSource, at, dueForm(c.long)), present.Blocked(m.HoL, c.long),
		present.Bytes(m.BodySize), termtext.Sanitize(m.RoutingKey)))
}

// buildBrowserRows renders every message of a peek once.
func buildBrowserRows(res *broker.PeekResult, c browserCols, at time.Time) []browserRow {
	rows := make([]browserRow, len(res.Messages))
	for i := range res.Messages {
		message := &res.Messages[i]
		rows[i] = browserRow{message: message, search: searchText(message), warn: rowWarn(message)}
	}
	renderBrowserRows(rows, c, at)
	return rows
}

// renderBrowserRows draws rows' text. The LAST DEATH cells (reason@queue)
// are cut knowing each other (present.ShortenNames), so the tiers of one
// ladder, which share a long start, still read apart. (The routing key,
// the last column, keeps its start: at 80 columns it has 9 cells, too few
// for both ends.)
func renderBrowserRows(rows []browserRow, c browserCols, at time.Time) {
	deaths := make([]string, len(rows))
	for i := range rows {
		deaths[i] = termtext.Sanitize(lastDeath(rows[i].message.Deaths))
	}
	deaths = present.ShortenNames(deaths, c.death)
	for i := range rows {
		rows[i].text = browserRowText(rows[i].message, c, at, deaths[i])
	}
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
	n := present.RetryCount(r)
	if r.Source == "" || r.Source == retry.SourceNone {
		return n
	}
	if long {
		return n + " " + r.Source
	}
	if r.IsGuessed(retry.GuessedCount) {
		return n + " gss" // read from a name alone (the inspector says which)
	}
	if s, ok := sourceShort[r.Source]; ok {
		return n + " " + s
	}
	if s := retry.ShortName(r.Framework); s != "" {
		return n + " " + s // a framework's own counter (retry_info.num_attempts…)
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
		typ = topology.QueueClassic
	}
	head := termtext.Sanitize(res.Queue) + " · " + typ + " · peeked " + strconv.Itoa(len(res.Messages)) +
		" of " + present.Count(res.Total) + " (" + present.Count(res.Ready) + " ready) at " + present.Clock(at)
	lines := []string{st.Strong.Render(termtext.Truncate(head, width))}
	// Side effects are what the user must not miss: wrapped, not cut. A peek
	// that browsed nothing and released nothing changed nothing, whatever a
	// client reports.
	for _, s := range peekSideEffects(res) {
		lines = append(lines, styled.Wrap(st.Banner, present.GlyphWarning+" "+termtext.Sanitize(s), width)...)
	}
	// A peek that stopped short says why, whatever it read.
	if res.Incomplete != "" && !slices.Contains(peekSideEffects(res), res.Incomplete) {
		lines = append(lines, styled.Wrap(st.Banner, present.GlyphWarning+" incomplete: "+termtext.Sanitize(res.Incomplete), width)...)
	}
	if p := present.PeekPartial(res); p != "" {
		lines = append(lines, styled.Wrap(st.Banner, present.GlyphWarning+" "+termtext.Sanitize(p), width)...)
	}
	// Due times are the peek's, not the clock's: they do not count down,
	// so they say when they were true.
	if hasDue(res) {
		due := "due times as of the peek at " + present.Clock(at)
		if res.HoLBasis != "" {
			due += ", from " + termtext.Sanitize(res.HoLBasis)
		}
		lines = append(lines, styled.Wrap(st.Muted, due, width)...)
	}
	return lines
}

// hasDue says whether any message of the peek has a due time.
func hasDue(res *broker.PeekResult) bool {
	for i := range res.Messages {
		if res.Messages[i].HoL != nil || !res.Messages[i].Retry.DueTime.IsZero() {
			return true
		}
	}
	return false
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
