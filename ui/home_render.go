package ui

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"charm.land/lipgloss/v2"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/internal/present"
	"github.com/ladder-tui/ladder/internal/termtext"
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/topology"
	"github.com/ladder-tui/ladder/ui/component/table"
	"github.com/ladder-tui/ladder/ui/style"
	"github.com/ladder-tui/ladder/ui/styled"
)

// Pure functions that turn a snapshot into the home screen's rows and
// lines. They take everything they need as arguments so they can be tested
// (and benchmarked) without a model.

type rowKind int

const (
	rowSection rowKind = iota // "LADDERS (3)": a title, not selectable
	rowMain
	rowTier
	rowDelayed // a delayed-message exchange: shown, not selectable
	rowRetry   // the main queue's built-in delayed retry (4.3): shown, not selectable
	rowDelays  // a shared delay infrastructure (NServiceBus's levels): shown, not selectable
	rowDLQ
	rowOther // a queue outside every ladder
)

// homeRow is one line of the ladder list.
type homeRow struct {
	kind   rowKind
	name   string // raw queue or exchange name; sanitised when drawn
	title  string // section title
	ladder int    // index into Snapshot.Ladders, -1 for others
	ttl    time.Duration
	last   bool // last member of its ladder: └ instead of ├
	held   int64
	q      *topology.Queue // nil when the snapshot lacks the queue
	owned  bool            // one of ladder's own wait queues (a delayed move's)
	finds  []topology.Finding
	dim    bool   // a ladder's member the filter does not match: context only
	detail string // rowRetry, rowDelays: what it is, drawn across the figures' columns
	// named: an error queue linked by a framework's naming (rowDLQ), not
	// by a dead-letter route: the naming (Ladder.DLQFrom) for the DLQ,
	// namedMore for Ladder.ErrorQueues.
	named string

	names *homeNames // the column's names, to cut this one among them
}

// namedMore marks a row of Ladder.ErrorQueues.
const namedMore = "more"

// selectable: the cursor lands only on queues, and with a filter only on
// those it matches.
func (r *homeRow) selectable() bool {
	return r.kind != rowSection && r.kind != rowDelayed && r.kind != rowRetry && r.kind != rowDelays && !r.dim
}

// homeSort is the order of the ladders screen's rows.
type homeSort int

const (
	sortName     homeSort = iota // ladders by main queue, queues by name: the broker's order
	sortDepth                    // most messages first
	sortGrowth                   // grown most within the history's last topology.DLQGrowingWindow first
	sortFindings                 // worst finding first, then most findings
	homeSorts
)

func (s homeSort) String() string {
	return [...]string{"name", "depth", "growth", "findings"}[s]
}

// homeView is how the ladders screen shows a snapshot: filtered (lower
// case), sorted, empty queues hidden or not. growth is how much a queue
// grew recently (sortGrowth).
type homeView struct {
	filter    string
	sort      homeSort
	hideEmpty bool
	growth    func(queue string) int64
}

// buildHomeRows lays out the snapshot in name order, nothing hidden.
func buildHomeRows(s *broker.Snapshot, filter string) []homeRow {
	return buildHomeRowsView(s, homeView{filter: filter})
}

// buildHomeRowsView lays out the snapshot: each ladder as a chain (main,
// tiers shortest first, delayed exchanges, DLQ), then every queue outside
// all ladders. filter (lower case) keeps ladders with a member whose name
// contains it, and other queues whose name does; a kept ladder's other
// members stay, dimmed, to show the chain around the matches. Sorted, a
// ladder keeps its chain and takes the place of its member that sorts
// first (its biggest, fastest growing or worst queue), among the ladders;
// other queues sort among themselves. With empty queues hidden, a ladder
// goes when none of its queues holds a message (a delayed exchange holding
// some keeps it), and so does another queue holding none.
func buildHomeRowsView(s *broker.Snapshot, view homeView) []homeRow {
	if s == nil {
		return nil
	}
	filter := view.filter
	queues := make(map[string]*topology.Queue, len(s.Topology.Queues))
	for i := range s.Topology.Queues {
		queues[s.Topology.Queues[i].Name] = &s.Topology.Queues[i]
	}
	finds := map[string][]topology.Finding{}
	for _, f := range s.Findings {
		if f.Queue != "" {
			finds[f.Queue] = append(finds[f.Queue], f)
		}
	}
	match := func(name string) bool {
		return filter == "" || strings.Contains(strings.ToLower(name), filter)
	}
	inLadder := map[string]bool{}
	var blocks [][]homeRow
	shown, hidden := 0, 0
	for li := range s.Ladders {
		l := &s.Ladders[li]
		names := []string{l.Main, l.DLQ}
		for _, t := range l.Tiers {
			inLadder[t.Queue] = true
			names = append(names, t.Queue)
		}
		for _, w := range l.WaitQueues {
			inLadder[w] = true
			names = append(names, w)
		}
		for _, w := range l.DelayQueues {
			inLadder[w] = true
			names = append(names, w)
		}
		for _, d := range l.DelayedExchanges {
			names = append(names, d.Name)
		}
		for _, e := range l.ErrorQueues {
			inLadder[e] = true
			names = append(names, e)
		}
		for _, d := range l.Delays {
			for _, q := range d.Queues {
				inLadder[q] = true
			}
			names = append(names, d.Name)
		}
		inLadder[l.Main] = true
		if l.DLQ != "" {
			inLadder[l.DLQ] = true
		}
		hit := false
		for _, n := range names {
			if n != "" && match(n) {
				hit = true
				break
			}
		}
		if !hit {
			continue
		}
		var rows []homeRow
		rows = append(rows, homeRow{kind: rowMain, name: l.Main, ladder: li, q: queues[l.Main], finds: finds[l.Main]})
		for _, t := range l.Tiers {
			rows = append(rows, homeRow{kind: rowTier, name: t.Queue, ladder: li, ttl: t.TTL, q: queues[t.Queue], finds: finds[t.Queue]})
		}
		for _, w := range l.WaitQueues {
			// ttl -1: no queue TTL, messages leave by their own expiration.
			rows = append(rows, homeRow{kind: rowTier, name: w, ladder: li, ttl: -1, q: queues[w], finds: finds[w]})
		}
		for _, w := range l.DelayQueues {
			rows = append(rows, homeRow{kind: rowTier, name: w, ladder: li, ttl: -1, q: queues[w], owned: true})
		}
		for _, d := range l.DelayedExchanges {
			rows = append(rows, homeRow{kind: rowDelayed, name: d.Name, ladder: li, held: d.MessagesDelayed})
		}
		if d := l.DelayedRetry; d != nil {
			rows = append(rows, homeRow{kind: rowRetry, name: "delayed retry", detail: present.DelayedRetry(d), ladder: li, held: -1})
		}
		for _, d := range l.Delays {
			var held int64
			for _, q := range d.Queues {
				if qq := queues[q]; qq != nil {
					held += qq.Messages
				}
			}
			detail := fmt.Sprintf("%d queues %s…%s · %s waiting", len(d.Queues), present.Approx(d.MinTTL), present.Approx(d.MaxTTL), present.Count(held))
			switch {
			case d.HeldByConsumers:
				detail = "held by the workers until due · " + present.Count(held) + " waiting"
			case d.PerMessageTTL:
				// No TTL to show: each message waits for its own expiration.
				detail = fmt.Sprintf("shared wait, %d queues · per-message TTL · %s waiting", len(d.Queues), present.Count(held))
			}
			rows = append(rows, homeRow{kind: rowDelays, name: d.Name, ladder: li, held: held, detail: detail})
		}
		if l.DLQ != "" {
			rows = append(rows, homeRow{kind: rowDLQ, name: l.DLQ, ladder: li, q: queues[l.DLQ], finds: finds[l.DLQ], named: l.DLQFrom})
		}
		for _, e := range l.ErrorQueues {
			rows = append(rows, homeRow{kind: rowDLQ, name: e, ladder: li, q: queues[e], finds: finds[e], named: namedMore})
		}
		if n := len(rows); rows[n-1].kind != rowMain {
			rows[n-1].last = true
		}
		if filter != "" {
			for i := range rows {
				rows[i].dim = !match(rows[i].name)
			}
		}
		if view.hideEmpty && blockEmpty(rows) {
			hidden++
			continue
		}
		shown++
		blocks = append(blocks, rows)
	}
	var others [][]homeRow
	hiddenOthers := 0
	for i := range s.Topology.Queues {
		q := &s.Topology.Queues[i]
		if inLadder[q.Name] || !match(q.Name) {
			continue
		}
		if view.hideEmpty && q.Messages == 0 {
			hiddenOthers++
			continue
		}
		others = append(others, []homeRow{{kind: rowOther, name: q.Name, ladder: -1, q: q, finds: finds[q.Name], owned: retry.OwnedByLadder(q.Name)}})
	}
	sortBlocks(blocks, view)
	sortBlocks(others, view)
	rows := []homeRow{{kind: rowSection, title: sectionTitle("LADDERS", shown, hidden, view)}}
	for _, b := range blocks {
		rows = append(rows, b...)
	}
	rows = append(rows, homeRow{kind: rowSection, title: sectionTitle("OTHER QUEUES", len(others), hiddenOthers, view)})
	for _, b := range others {
		rows = append(rows, b...)
	}
	return shareNames(rows)
}

// sectionTitle is "LADDERS (3)", or with a sort and hidden empty ones
// "LADDERS (3 of 50, 47 empty hidden) · by depth".
func sectionTitle(what string, shown, hidden int, view homeView) string {
	t := what + " (" + strconv.Itoa(shown)
	if hidden > 0 {
		t += " of " + strconv.Itoa(shown+hidden) + ", " + strconv.Itoa(hidden) + " empty hidden"
	}
	t += ")"
	if view.sort != sortName {
		t += " · by " + view.sort.String()
	}
	return t
}

// blockEmpty: no queue of a ladder's rows holds a message, nor does a
// delayed exchange of it (one that does not say counts as empty).
func blockEmpty(rows []homeRow) bool {
	for _, r := range rows {
		if r.q != nil && r.q.Messages > 0 || (r.kind == rowDelayed || r.kind == rowDelays) && r.held > 0 {
			return false
		}
	}
	return true
}

// sortBlocks orders ladders (or other queues, one row each) by view.sort,
// each by its member that sorts first; ties keep the name order.
func sortBlocks(blocks [][]homeRow, view homeView) {
	if view.sort == sortName {
		return
	}
	type key struct{ a, b int64 } // smaller sorts first
	keyOf := func(b []homeRow) key {
		best := key{a: 1 << 62, b: 1 << 62}
		for _, r := range b {
			if r.q == nil {
				continue
			}
			var k key
			switch view.sort {
			case sortDepth:
				k = key{-r.q.Messages, 0}
			case sortGrowth:
				g := int64(0)
				if view.growth != nil {
					g = view.growth(r.name)
				}
				k = key{-g, -r.q.Messages}
			case sortFindings:
				k = key{3, 0} // no finding: after every severity
				if len(r.finds) > 0 {
					k = key{int64(severityRank(r.finds[0].Severity)), -int64(len(r.finds))}
				}
			}
			if k.a < best.a || k.a == best.a && k.b < best.b {
				best = k
			}
		}
		return best
	}
	keys := make([]key, len(blocks))
	idx := make([]int, len(blocks))
	for i, b := range blocks {
		keys[i], idx[i] = keyOf(b), i
	}
	slices.SortStableFunc(idx, func(x, y int) int {
		kx, ky := keys[x], keys[y]
		return cmp.Or(cmp.Compare(kx.a, ky.a), cmp.Compare(kx.b, ky.b))
	})
	sorted := make([][]homeRow, len(blocks))
	for i, j := range idx {
		sorted[i] = blocks[j]
	}
	copy(blocks, sorted)
}

// severityRank orders severities worst first (findings arrive sorted so).
func severityRank(s topology.Severity) int {
	switch s {
	case topology.SeverityError:
		return 0
	case topology.SeverityWarning:
		return 1
	}
	return 2
}

// homeCols are the column widths of the ladder list for a screen width.
type homeCols struct {
	name, role, ready, unack, cons, in, out, spark, drain, badges int
	longBadges                                                    bool
	width                                                         int // the screen's
}

// homeLayout fits the columns into width: at 80 columns every column still
// shows; extra width goes to names, sparklines and badges.
func homeLayout(width int) homeCols {
	c := homeCols{role: 5, ready: 6, unack: 5, cons: 3, in: 5, out: 5, spark: 7, drain: 5, badges: 8, width: width}
	extra := max(0, width-80)
	c.spark += extra * 3 / 10
	c.badges += extra * 2 / 10
	if extra >= 20 {
		c.in, c.out, c.ready, c.unack, c.role = 7, 7, 8, 7, 6
	}
	c.longBadges = c.badges >= 14
	// The marker, then the name takes what the other columns leave.
	c.name = table.Remaining(width, homeLead, 8, c.role, c.ready, c.unack, c.cons, c.in, c.out, c.spark, c.drain, c.badges)
	return c
}

// homeLead is the row marker's width ("▸ ").
const homeLead = 2

// columns is the table's column spec, titles chosen for the room they have.
func (c homeCols) columns() []table.Column {
	trend, finds := "TREND", "ISSUES"
	if c.spark >= 11 {
		trend = "DEPTH TREND"
	}
	if c.badges >= 8 {
		finds = "FINDINGS"
	}
	return []table.Column{
		{Title: "QUEUE", Width: c.name}, {Title: "TTL", Width: c.role},
		{Title: "READY", Width: c.ready, Right: true}, {Title: "UNACK", Width: c.unack, Right: true},
		{Title: "CON", Width: c.cons, Right: true}, {Title: "IN/s", Width: c.in, Right: true},
		{Title: "OUT/s", Width: c.out, Right: true}, {Title: trend, Width: c.spark},
		{Title: "DRAIN", Width: c.drain, Right: true}, {Title: finds, Width: c.badges},
	}
}

// Column indexes of columns().
const (
	homeColSpark  = 7
	homeColBadges = 9
)

func renderHomeHeader(c homeCols, st *style.Styles) string {
	return st.Header.Render(strings.Repeat(" ", homeLead) + table.Header(c.columns()))
}

// renderHomeRow draws one row in exactly the layout's width. Selected rows
// are reversed and carry a ▸ marker; stale rows (broker unreachable) are
// drawn faint as a whole, and so are rows a filter does not match.
func renderHomeRow(r *homeRow, rs broker.Trend, c homeCols, st *style.Styles, selected, stale bool) string {
	if r.kind == rowSection {
		line := termtext.Truncate(r.title, c.width)
		if stale {
			return st.Stale.Render(line)
		}
		return st.Section.Render(line)
	}
	marker := "  "
	if selected {
		marker = "▸ "
	}
	name := r.names.fit(termtext.Sanitize(r.name), c.name)
	switch r.kind {
	case rowTier, rowDelayed, rowDLQ, rowRetry, rowDelays:
		glyph := "├─"
		if r.last {
			glyph = "└─"
		}
		name = glyph + r.names.fit(termtext.Sanitize(r.name), c.name-termtext.Width(glyph))
	}
	var role string
	switch r.kind {
	case rowMain:
		role = "main"
	case rowTier:
		role = retry.FormatDelay(r.ttl)
		if r.ttl < 0 {
			role = present.PerMessageTTL // no queue TTL: per-message TTLs only (findings explain)
		}
	case rowDelayed:
		role = "delay"
	case rowRetry:
		role = "retry"
	case rowDelays:
		role = "delay" // a delay mechanism, as a delayed exchange's row
	case rowDLQ:
		role = "DLQ"
		if r.named == namedMore {
			role = "error"
		}
	case rowOther:
		if r.q != nil && r.q.Type != "" && r.q.Type != topology.QueueClassic {
			role = r.q.Type
		}
	}
	if r.owned {
		role = "own" // ladder's own wait queue: not part of the ladder's design
	}
	ready, unack, cons, in, out, drain := present.NoValue, present.NoValue, present.NoValue, present.NoValue, present.NoValue, ""
	spark := strings.Repeat(" ", c.spark)
	if r.kind == rowDelayed || r.kind == rowRetry || r.kind == rowDelays {
		ready, unack, cons, in, out = present.Count(r.held), "", "", "", ""
	} else if r.q != nil {
		q := r.q
		ready, unack, cons = present.Count(q.Ready), present.Count(q.Unacked), present.Consumers(q.Consumers, q.ConsumersUnknown)
		in, out = present.Inflow(q.Rates), present.Rate(q.Rates.Deliver, q.Rates.Known)
		spark = sparkline(rs.Depths, c.spark)
		drain = present.Drain(rs.Drain)
	}
	badges := renderBadges(r.finds, c.badges, c.longBadges, st)
	cells := table.Cells(c.columns(), name, role, ready, unack, cons, in, out, spark, drain, badges.text)
	if r.kind == rowRetry || r.kind == rowDelays {
		// The policy is all this row says, and the name column cut it at 80
		// columns: it takes the figures' columns, which it has none of (the
		// emptied cells keep their gaps, so the width is unchanged).
		cells[2] = termtext.Fit(termtext.Sanitize(r.detail), c.ready+c.unack+c.cons+c.in+c.out+c.spark+c.drain)
		for i := 3; i <= homeColSpark+1; i++ {
			cells[i] = ""
		}
	}
	switch {
	case stale:
		return st.Stale.Render(marker + table.Join(cells))
	case r.dim:
		return st.Dimmed.Render(marker + table.Join(cells))
	case selected:
		return st.Selected.Render(marker + table.Join(cells))
	}
	cells[homeColSpark] = st.Info.Render(cells[homeColSpark])
	if badges.text != "" {
		cells[homeColBadges] = badges.sev.Render(cells[homeColBadges])
	}
	return marker + table.Join(cells)
}

type badgeText struct {
	text string
	sev  lipgloss.Style
}

// badgeNames: short names fit the 80-column layout, long ones wider screens.
var badgeNames = map[string][2]string{
	topology.CodeUnroutableDeadLetter: {"UNRT", "unroutable"},
	topology.CodeStuck:                {"STUCK", "stuck"},
	topology.CodeHoLRisk:              {"HOL", "hol-risk"},
	topology.CodeHoLBlocked:           {"BLOCK", "hol-blocked"},
	topology.CodeNoDLQ:                {"NODLQ", "no-dlq"},
	topology.CodeDelayQueueSprawl:     {"SPRWL", "sprawl"},
	topology.CodeWaitQueueConsumers:   {"CONS", "consumed"},
	topology.CodeDeliveryLimit:        {"DLIM", "delivery-limit"},
	topology.CodeRequeueStorm:         {"STORM", "requeue-storm"},
	topology.CodeNoConsumers:          {"NOCON", "no-consumers"},
	topology.CodeDLQGrowing:           {"GROW", "dlq-growing"},
	topology.CodeQuorumLost:           {"NOQRM", "quorum-lost"},
	topology.CodeMemberDown:           {"MDOWN", "member-down"},
	topology.CodeQueueNodeDown:        {"NDOWN", "node-down"},
	topology.CodeNodeDown:             {"NDOWN", "node-down"},
	topology.CodeResourceAlarm:        {"ALARM", "alarm"},
	topology.CodePartition:            {"PART", "partition"},
}

func badgeName(code string, long bool) string {
	n, ok := badgeNames[code]
	if !ok {
		return code
	}
	if long {
		return n[1]
	}
	return n[0]
}

// renderBadges lists the findings' badges that fit in width, then "+N" for
// the rest. Findings arrive sorted by severity, so the worst shows first;
// its severity colours the cell.
func renderBadges(fs []topology.Finding, width int, long bool, st *style.Styles) badgeText {
	var out badgeText
	if len(fs) == 0 {
		return out
	}
	out.sev = severityStyle(fs[0].Severity, st)
	var b strings.Builder
	for i, f := range fs {
		// The glyph carries the severity where colour does not (NO_COLOR).
		name := severityGlyph(f.Severity) + badgeName(f.Code, long)
		rest := ""
		if i < len(fs)-1 {
			rest = "+" + strconv.Itoa(len(fs)-i-1)
		}
		sep := ""
		if i > 0 {
			sep = " "
		}
		if i > 0 && termtext.Width(b.String()+sep+name+rest) > width {
			b.WriteString("+" + strconv.Itoa(len(fs)-i))
			break
		}
		b.WriteString(sep + name)
	}
	out.text = b.String()
	return out
}

// severityStyle picks the style a finding's severity is drawn with.
func severityStyle(s topology.Severity, st *style.Styles) lipgloss.Style {
	switch s {
	case topology.SeverityError:
		return st.Error
	case topology.SeverityWarning:
		return st.Warning
	}
	return st.Info
}

func severityGlyph(s topology.Severity) string { return present.SeverityGlyph(s) }

// placement is where a queue lives, for its details: " · on rabbit@a", or
// for a quorum queue " · leader rabbit@a, 2 of 3 members online"; "" when
// the broker did not say.
func placement(q *topology.Queue) string {
	switch {
	case len(q.Members) > 0:
		out := " · "
		if q.Node != "" {
			out += "leader " + termtext.Sanitize(q.Node) + ", "
		}
		out += fmt.Sprintf("%d of %d members online", len(q.Online), len(q.Members))
		return out
	case q.Node != "":
		return " · on " + termtext.Sanitize(q.Node)
	}
	return ""
}

// renderRowDetails explains the selected row in at most height lines of
// width cells: what the queue is, then each finding's one line, wrapped at
// word boundaries. When that does not fit, the last line is more: how to
// read the rest (the findings view).
func renderRowDetails(r *homeRow, s *broker.Snapshot, width, height int, st *style.Styles, more string) []string {
	if r == nil || height <= 0 {
		return nil
	}
	var lines []string
	name := termtext.Sanitize(r.name)
	var what string
	switch r.kind {
	case rowMain:
		what = "main queue"
		if s.Ladders[r.ladder].RetriesInConsumer {
			what += ", no wait tier: its retries happen in the consumer"
		}
	case rowTier:
		ttl := "TTL " + retry.FormatDelay(r.ttl)
		if r.ttl < 0 {
			ttl = "no queue TTL (per-message TTLs only)"
		}
		what = "wait tier, " + ttl + ", returns to " + termtext.Sanitize(s.Ladders[r.ladder].Main)
	case rowDelayed:
		what = "delayed-message exchange for " + termtext.Sanitize(s.Ladders[r.ladder].Main)
	case rowDLQ:
		what = "dead-letter queue of " + termtext.Sanitize(s.Ladders[r.ladder].Main)
		if r.named != "" {
			// How it was linked: a framework's naming, or its messages
			// (Ladder.DLQFrom says which).
			what = "error queue of " + termtext.Sanitize(s.Ladders[r.ladder].Main) + " by its naming or its messages"
			if r.named != namedMore {
				what = "error queue of " + termtext.Sanitize(s.Ladders[r.ladder].Main) + " (" + termtext.Sanitize(r.named) + ")"
			}
			what += ": failures are published there, no dead-letter route"
		}
	case rowDelays:
		what = "delay infrastructure shared by every queue it delivers into, " + termtext.Sanitize(r.detail)
		for _, d := range s.Ladders[r.ladder].Delays {
			switch {
			case d.Name == r.name && d.HeldByConsumers:
				what = "delay queue of " + termtext.Sanitize(s.Ladders[r.ladder].Main) + ": its workers hold each message until due, then publish it back"
			case d.Name == r.name && d.PerMessageTTL:
				what = "shared wait queue " + termtext.Sanitize(strings.Join(d.Queues, " → ")) + ", its router sending each message back by header (" +
					termtext.Sanitize(d.From) + "): serves every queue its messages name"
			}
		}
	case rowOther:
		what = "queue outside every ladder"
	}
	if r.owned {
		what = "ladder's own wait queue (a delayed move), deletes itself when unused"
		if r.ladder >= 0 {
			what += ", returns to " + termtext.Sanitize(s.Ladders[r.ladder].Main)
		}
	}
	head := name + " · " + what
	if r.q != nil {
		typ := r.q.Type
		if typ == "" {
			typ = topology.QueueClassic
		}
		head += " · " + typ + " · " + present.Plural(int(r.q.Messages), "message", "messages")
		if from := present.InflowFrom(r.q.Rates); from != "" {
			head += " · in " + present.Inflow(r.q.Rates) + "/s " + from
		}
		head += placement(r.q)
	}
	// Wrapped at words, like the findings: a queue name is never cut.
	lines = append(lines, styled.Wrap(st.Strong, head, width)...)
	if len(r.finds) == 0 && r.kind != rowDelayed && r.kind != rowRetry && r.kind != rowDelays && r.kind != rowSection {
		lines = append(lines, st.Muted.Render(termtext.Truncate("no findings", width)))
	}
	for _, f := range r.finds {
		sev := severityStyle(f.Severity, st)
		prefix := severityGlyph(f.Severity) + " " + badgeName(f.Code, true) + ": "
		wrapped := termtext.Wrap(prefix+termtext.Sanitize(f.Message), width)
		for i, w := range wrapped {
			if i == 0 {
				lines = append(lines, sev.Render(w))
			} else {
				lines = append(lines, w)
			}
		}
	}
	// How discovery guessed comes last: findings matter more at 80×24.
	if r.ladder >= 0 && (r.kind == rowMain || (r.kind == rowTier && r.ttl < 0)) {
		if inf := s.Ladders[r.ladder].InferredFrom; len(inf) > 0 {
			lines = append(lines, styled.Wrap(st.Muted, "guessed from: "+termtext.Sanitize(strings.Join(inf, "; ")), width)...)
		}
	}
	if len(lines) > height {
		lines = lines[:height]
		lines[height-1] = st.Muted.Render(termtext.Truncate("… "+more, width))
	}
	return lines
}

var sparkLevels = []rune("▁▂▃▄▅▆▇█")

// sparkline draws depths in exactly width cells, newest on the right, scaled
// from 0 to the largest value shown. Zero is the lowest bar and any non-zero
// value at least the second, so "empty" and "a few" look different. Cells
// with no sample yet are blank.
func sparkline(s []int64, width int) string {
	if width <= 0 {
		return ""
	}
	if len(s) > width {
		s = s[len(s)-width:]
	}
	var hi int64
	for _, x := range s {
		hi = max(hi, x)
	}
	var b strings.Builder
	b.Grow(width * 3)
	for range width - len(s) {
		b.WriteByte(' ')
	}
	top := int64(len(sparkLevels) - 1)
	for _, x := range s {
		lvl := int64(0)
		if hi > 0 && x > 0 {
			lvl = max(1, x*top/hi)
		}
		b.WriteRune(sparkLevels[lvl])
	}
	return b.String()
}
