package cli

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/usecase"
	"github.com/ladder-tui/ladder/internal/present"
	"github.com/ladder-tui/ladder/internal/termtext"
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/moveplan"
)

// readingPrinter shows a browse's progress on a terminal's stderr, once it
// has taken a moment (a quick peek prints nothing), at most ten times a
// second, and clears the line when the read ends. On any other stderr it
// prints nothing.
func readingPrinter(a *app) func(broker.PeekProgress) {
	if !isTerminal(a.stderr) {
		return nil
	}
	shown := false
	return func(p broker.PeekProgress) {
		switch {
		case p.Done && shown:
			fmt.Fprint(a.stderr, "\r\x1b[K")
		case !p.Done && p.Elapsed >= readingShownAfter:
			shown = true
			// One updating line: \x1b[K clears what a longer line left.
			fmt.Fprintf(a.stderr, "\r%s\x1b[K", present.ReadingLine(p))
		}
	}
}

// readingShownAfter: a read quicker than this shows no progress.
const readingShownAfter = 300 * time.Millisecond

func newPeekCmd(a *app) *cobra.Command {
	var (
		opt     broker.PeekOptions
		where   []string
		groupBy string
	)
	cmd := &cobra.Command{
		Use:   "peek QUEUE",
		Short: "Browse the first messages of a queue without removing them",
		Long: `Browse the first messages of a queue, decoded: retry count and its convention,
x-death history, origin, last error, head-of-line status.

Nothing is removed. What a peek costs depends on the queue and the broker,
and the result lists it (side_effects):
  - quorum queues on RabbitMQ 4.3+ are browsed over AMQP 1.0 and released:
    no delivery is counted (x-delivery-count and the delivery limit are
    untouched), the order stays; x-acquired-count rises, later consumers see
    the messages redelivered;
  - classic queues are consumed without acknowledging, then the channel is
    closed: the messages return in order with redelivered set;
  - quorum queues before 4.3 (or when AMQP 1.0 is refused) count a delivery
    per peek: refused in --read-only mode; where that counts toward a
    delivery limit (its own, or 4.0's default of 20), ladder cannot see how
    near the messages are without spending one, so the peek is asked for on
    a terminal and otherwise refused unless --force, and whatever a forced
    peek dead-letters is reported;
  - streams are read by offset, with no side effect;
  - a queue whose messages carry their own TTLs (a wait queue relying on
    per-message expiration, or one a look saw so) expires only its head:
    reading past the head releases at once the overdue messages behind it
    (dead-lettered, or dropped). The peek is asked for on a terminal and
    otherwise refused unless --force-peek, saying at most how many and
    where they go; --read-only refuses it; what it released is reported.

Other readers: messages another consumer holds cannot be seen. What left
the queue during the peek is called released (dead-lettered to X, or dropped)
only where nobody else was reading; otherwise "taken by another consumer or
expired". A view that is not the whole queue from its head says it is partial
and why (another reader, the limit): with another reader, positions count
among the messages ready to ladder.

--group-by groups the whole queue by what broke it when it holds up to 10000
ready messages, read within --max-time (-n N: the first N, up to 100000), and
says how much it covered ("grouped N of M · the whole queue", or "· partial:"
and why): error (the error's type and its message with ids, numbers and quoted
values masked, so one cause is one group), error-text (the exact text), reason,
queue or origin. FIRST and LAST are when the messages reached the queue where
that is known, else when they were published, else their first death: a line
above the groups says which.

A peek reads at most -n messages, and no more than the queue had ready when it
began: what arrives while it reads is not read (a wait queue whose messages keep
coming back cannot hold it). It stops after --max-time; one that stops before
it has read what it was to read says why ("incomplete") and exits 3. On a
terminal it shows its progress on standard error.

Allowed in --read-only mode where it changes no count.`,
		Args: exactlyOne("QUEUE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opt.Limit < 1 {
				return usageErr("--limit %d: want 1 or more", opt.Limit)
			}
			w, err := moveplan.ParseWhere(where)
			if err != nil {
				return usageErr("%w", err)
			}
			if groupBy != "" {
				if groupBy, err = usecase.ParseGroupBy(groupBy); err != nil {
					return usageErr("%w", err)
				}
			}
			if !w.Empty() && opt.BodyPreview < 1<<20 {
				opt.BodyPreview = 1 << 20 // body~RE reads the body, not a preview of it
			}
			if opt.Deadline <= 0 {
				return usageErr("--max-time %s: want more than 0", opt.Deadline)
			}
			c, closeClient, err := a.client("peek")
			if err != nil {
				return err
			}
			defer closeClient()
			opt.Progress = readingPrinter(a)
			var res *usecase.GroupedPeek // a plain peek's has no groups
			var partial error
			read := func(opt broker.PeekOptions) error {
				if groupBy != "" {
					var err error
					res, partial, err = groupPeek(cmd, c, args[0], groupBy, w, opt)
					return err
				}
				r, err := c.Peek(cmd.Context(), args[0], opt)
				if err == nil {
					r.Messages = usecase.Choose(r.Messages, w, r.PeekedAt)
					res = &usecase.GroupedPeek{PeekResult: r}
				}
				return err
			}
			err = read(opt)
			if opt, ok := peekConsent(a, err, opt); ok {
				err = read(opt)
			}
			if err != nil {
				return peekHint(err, "--force")
			}
			if a.json() {
				err = writeJSON(a.stdout, res)
			} else {
				_, err = io.WriteString(a.stdout, renderPeek(res, termWidth(a.stdout)))
			}
			if err == nil && partial != nil {
				return &exitErr{code: exitPartial, err: partial}
			}
			if err == nil && res.Incomplete != "" {
				// What was read is shown; the rest could not be.
				return &exitErr{code: exitPartial, err: fmt.Errorf("peek %s: %s", res.Queue, res.Incomplete)}
			}
			return err
		},
	}
	cmd.Flags().IntVarP(&opt.Limit, "limit", "n", 20, "messages to browse (with --group-by: to group; the whole queue up to 10000 when not given)")
	cmd.Flags().BoolVar(&opt.Force, "force", false, "peek a quorum queue although each peek counts a delivery toward its delivery limit")
	cmd.Flags().BoolVar(&opt.Force, "force-peek", false, "peek although the read costs something: a delivery toward a delivery limit, or releasing overdue messages of a queue whose messages carry their own TTLs")
	cmd.Flags().DurationVar(&opt.Deadline, "max-time", broker.DefaultPeekDeadline, "stop reading after this long (what was read is shown, marked incomplete)")
	cmd.Flags().IntVar(&opt.BodyPreview, "body-bytes", broker.DefaultBodyPreview, "bytes of each body to keep in the preview")
	cmd.Flags().StringArrayVar(&where, "where", nil, "show only the messages chosen (repeatable; see ladder move --help)")
	cmd.Flags().StringVar(&groupBy, "group-by", "", "group the queue's messages by error, error-text, reason, queue or origin")
	_ = cmd.RegisterFlagCompletionFunc("group-by", cobra.FixedCompletions(usecase.GroupBys, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// groupPeek is peek --group-by: the whole queue grouped (a browse, as dump
// does), or its first -n when given; the result lists the first -n (20)
// messages as a peek does. Its read is a peek's: bounded by --max-time, its
// progress shown on a terminal. partial is set when the read stopped short
// (what was read is grouped, and the result says why).
func groupPeek(cmd *cobra.Command, c broker.Client, queue, by string, w moveplan.Where, opt broker.PeekOptions) (res *usecase.GroupedPeek, partial, err error) {
	o := usecase.GroupScanOptions{Queue: queue, By: by, Where: w, Force: opt.Force, Keep: opt.Limit, BodyPreview: opt.BodyPreview,
		Deadline: opt.Deadline, Progress: opt.Progress}
	if cmd.Flags().Changed("limit") {
		o.Limit = opt.Limit
	}
	scan, err := usecase.ScanGroups(cmd.Context(), c, o)
	if scan == nil {
		return nil, nil, err
	}
	res = scan.PeekResult()
	switch {
	case res.Incomplete != "":
		partial = fmt.Errorf("peek %s --group-by %s: %s", queue, by, res.Incomplete)
	case err != nil:
		partial = fmt.Errorf("peek %s --group-by %s: %w", queue, by, err)
	}
	return res, partial, nil
}

// peekConsent asks, on a terminal, for a peek the broker refused because it
// would count a delivery toward a delivery limit (the question the terminal
// UI asks); yes gives the options to peek again with. Nothing was touched.
func peekConsent(a *app, err error, opt broker.PeekOptions) (broker.PeekOptions, bool) {
	var refused *broker.PeekRefused
	if !errors.As(err, &refused) || !errors.Is(err, broker.ErrPeekNeedsConsent) || a.json() || !isTerminal(a.stdin) || !isTerminal(a.stderr) {
		return opt, false
	}
	limit := opt.Limit
	if limit <= 0 {
		limit = broker.DefaultPeekLimit
	}
	if ask(a, present.PeekQuestion(clean(refused.Queue), limit, refused.Ready, refused.Cost)+" [y/N] ") != nil {
		return opt, false
	}
	opt.Force = true
	return opt, true
}

// peekHint adds to a peek refused for the delivery it would count the
// flag that peeks anyway (flag: the command's own).
func peekHint(err error, flag string) error {
	if errors.Is(err, broker.ErrPeekReleases) {
		flag = "--force-peek"
	}
	if errors.Is(err, broker.ErrPeekNeedsConsent) {
		return fmt.Errorf("%w; %s peeks anyway", err, flag)
	}
	return err
}

// peekColumn is one column of the peek table: its title, the shorter one
// it takes when cut narrower than the title, and, for a column that may
// give way to a narrow terminal, the fewest cells it keeps and how its
// cells are cut (all at once: some cuts read the other cells).
type peekColumn struct {
	title, short string
	least        int
	cut          func(cells []string, width int) []string
	cells        []string
	width        int
}

// peekTable is a peek's messages, a row each, with the browser's columns
// and its AGE (present.MessageAge: "~" before a time that is not the
// message's timestamp). Within width cells (0: no limit) the widest of
// the columns that may give way (message id, retries, last death, routing
// key) gives a cell at a time, down to its least: ids keep their end
// (they often share a start, as the browser cuts them), last deaths and
// routing keys the ends that tell them apart (present.ShortenNames).
// Columns are two spaces apart, as the commands' other tables, measured
// in cells.
func peekTable(r *broker.PeekResult, width int) string {
	cutEnd := func(cells []string, w int) []string {
		for i := range cells {
			cells[i] = termtext.Truncate(cells[i], w)
		}
		return cells
	}
	cutStart := func(cells []string, w int) []string {
		for i := range cells {
			cells[i] = termtext.TruncateLeft(cells[i], w)
		}
		return cells
	}
	cols := []*peekColumn{
		{title: "POS"}, {title: "MESSAGE ID", short: "ID", least: 8, cut: cutStart}, {title: "AGE"},
		{title: "RETRIES", least: 7, cut: cutEnd}, {title: "LAST DEATH", least: 12, cut: present.ShortenNames},
		{title: "DUE"}, {title: "ROUTING KEY", short: "KEY", least: 8, cut: present.ShortenNames}, {title: "SIZE"},
	}
	for _, m := range r.Messages {
		retries := present.RetryCount(m.Retry)
		switch {
		case m.Retry.IsGuessed(retry.GuessedCount):
			retries += " (" + m.Retry.Source + ", guessed)"
		case m.Retry.Source != "" && m.Retry.Source != retry.SourceNone:
			retries += " (" + m.Retry.Source + ")"
		}
		last := "-"
		if len(m.Deaths) > 0 {
			last = string(m.Deaths[0].Reason) + "@" + m.Deaths[0].Queue
		}
		row := []string{strconv.Itoa(m.Position), clean(m.Properties.MessageID), present.MessageAge(&m, r.PeekedAt), retries, clean(last),
			peekDue(m, r.PeekedAt), clean(m.RoutingKey), strconv.Itoa(m.BodySize)}
		for i, c := range cols {
			c.cells = append(c.cells, row[i])
		}
	}
	used := 2 * (len(cols) - 1)
	for _, c := range cols {
		c.width = termtext.Width(c.title)
		for _, cell := range c.cells {
			c.width = max(c.width, termtext.Width(cell))
		}
		used += c.width
	}
	for width > 0 && used > width {
		var widest *peekColumn
		for _, c := range cols {
			if c.cut != nil && c.width > c.least && (widest == nil || c.width > widest.width) {
				widest = c
			}
		}
		if widest == nil {
			break // every column at its least: wider than the terminal
		}
		widest.width--
		used--
	}
	var b strings.Builder
	line := func(cell func(c *peekColumn) string) {
		for i, c := range cols {
			s := cell(c)
			if i < len(cols)-1 {
				s = termtext.Fit(s, c.width) + "  "
			}
			b.WriteString(s)
		}
		b.WriteString("\n")
	}
	for _, c := range cols {
		if c.cut != nil && termtext.Width(c.title) > c.width {
			c.title = c.short
		}
		if c.cut != nil {
			c.cells = c.cut(c.cells, c.width)
		}
	}
	line(func(c *peekColumn) string { return c.title })
	for i := range r.Messages {
		line(func(c *peekColumn) string { return c.cells[i] })
	}
	return b.String()
}
