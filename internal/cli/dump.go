package cli

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/dumpfile"
	"github.com/ladder-tui/ladder/broker/usecase"
	"github.com/ladder-tui/ladder/retry/moveplan"
)

func newDumpCmd(a *app) *cobra.Command {
	var (
		o          usecase.DumpOptions
		out, body  string
		where      []string
		force, yes bool
	)
	cmd := &cobra.Command{
		Use:   "dump QUEUE --out FILE",
		Short: "Save a queue's messages to a file (JSON Lines), without removing them",
		Long: `Save a queue's messages to FILE, one JSON line each, with everything needed to
publish them again bit for bit: exchange, routing key, every property, headers with
their AMQP types, the body (base64; --body text keeps UTF-8 bodies readable). The
format is in docs/dump-format.md. ` + "`ladder replay`" + ` publishes them again.

By default the queue is browsed as peek does (the same side effects, reported),
and nothing is removed: the messages ready when it begins, at most 100,000 without
-n, each written as it is read (memory stays flat). A dump that stops before it
has them all (the bound, a message the client cannot read, Ctrl+C) keeps what it
wrote, says why ("incomplete") and exits 3. --consume drains the queue to the file instead: each
message is acked only after its line is written and the file synced; it asks for
confirmation (--yes without a terminal) and is refused in --read-only mode.

FILE "-" writes to standard output. An existing FILE is refused unless --force.`,
		Example: "  ladder dump orders.dlq --out orders.dlq.jsonl\n  ladder dump orders.dlq --out - --where reason=rejected --body text",
		Args:    exactlyOne("QUEUE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Queue = args[0]
			if out == "" {
				return usageErr("--out is required: the file to write (- for standard output)")
			}
			switch body {
			case "base64":
			case "text":
				o.BodyText = true
			default:
				return usageErr("--body %q: want base64 or text", body)
			}
			if o.Limit < 0 {
				return usageErr("--limit %d: want 0 (all) or more", o.Limit)
			}
			w, err := moveplan.ParseWhere(where)
			if err != nil {
				return usageErr("%w", err)
			}
			o.Where = w
			if o.Consume {
				if a.cfg.ReadOnly {
					return fmt.Errorf("dump --consume %s: %w", o.Queue, broker.ErrReadOnly)
				}
				if out == "-" {
					return usageErr("dump --consume: standard output cannot be synced before each ack: write to a file")
				}
				if !yes {
					if err := ask(a, fmt.Sprintf("Drain %s to %s (messages leave the queue once written)? [y/N] ", clean(o.Queue), out)); err != nil {
						return err
					}
				}
			}
			f, closeFile, err := openDumpFile(a, out, force)
			if err != nil {
				return err
			}
			c, closeClient, err := a.client("dump")
			if err != nil {
				closeFile(false)
				return err
			}
			defer closeClient()
			if !o.Consume {
				o.Progress = readingPrinter(a)
			}
			rep, err := usecase.Dump(cmd.Context(), c, o, f)
			// Refused for the delivery it would count (a limited quorum
			// queue before 4.3): on a terminal, asked as peek asks. Nothing
			// was read; a file is begun afresh (standard output has its
			// header already: it keeps the refusal).
			if po, ok := peekConsent(a, err, broker.PeekOptions{Limit: o.Limit}); ok && !o.Consume && out != "-" {
				closeFile(false)
				if f, closeFile, err = openDumpFile(a, out, force); err != nil {
					return err
				}
				o.Force = po.Force
				rep, err = usecase.Dump(cmd.Context(), c, o, f)
			}
			closeFile(err == nil || rep.Written > 0)
			if err != nil && !errors.Is(err, broker.ErrPartial) {
				return peekHint(err, "--force-peek")
			}
			if a.json() && out != "-" {
				if jerr := writeJSON(a.stdout, rep); jerr != nil {
					return jerr
				}
			} else {
				fmt.Fprint(a.stderr, renderDump(rep, out))
			}
			if err != nil {
				// Stopped early (a delivery limit, too many held back):
				// what was written was acked, the rest is still queued.
				return &exitErr{code: exitPartial, err: err}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&out, "out", "", "file to write (- for standard output)")
	f.IntVarP(&o.Limit, "limit", "n", 0, "at most N messages (0: all ready; a browse without -n reads at most 100,000)")
	f.StringArrayVar(&where, "where", nil, "choose messages (repeatable, all must hold; see ladder move --help)")
	f.BoolVar(&o.Consume, "consume", false, "drain the queue to the file (acked once written and synced)")
	f.StringVar(&body, "body", "base64", "body encoding: base64, or text for valid UTF-8 bodies")
	f.BoolVar(&force, "force", false, "overwrite an existing file")
	f.BoolVar(&o.Force, "force-peek", false, "browse although the read costs something: a delivery toward a quorum queue's delivery limit, or releasing the overdue messages of a queue whose messages carry their own TTLs")
	f.BoolVarP(&yes, "yes", "y", false, "do not ask for confirmation (--consume)")
	_ = cmd.MarkFlagFilename("out", "jsonl")
	return cmd
}

// openDumpFile opens out for writing: "-" is standard output; an existing
// file is refused unless force. close(keep) removes a new file that
// received nothing.
func openDumpFile(a *app, out string, force bool) (usecase.DumpWriter, func(keep bool), error) {
	if out == "-" {
		return stdoutWriter{a.stdout}, func(bool) {}, nil
	}
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if force {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(out, flags, 0o600)
	if errors.Is(err, os.ErrExist) {
		return nil, nil, fmt.Errorf("--out %s: the file exists (--force overwrites it)", out)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("--out %s: %w", out, err)
	}
	// A replay's progress belongs to the file this one replaces.
	if err := os.Remove(dumpfile.ProgressFile(out)); err == nil {
		fmt.Fprintf(a.stderr, "removed %s: the progress of a replay of the file this dump replaces\n", dumpfile.ProgressFile(out))
	}
	return f, func(keep bool) {
		f.Close()
		if !keep {
			os.Remove(out)
		}
	}, nil
}

// stdoutWriter is standard output as a dump writer: nothing to sync.
type stdoutWriter struct {
	w interface{ Write([]byte) (int, error) }
}

func (s stdoutWriter) Write(b []byte) (int, error) { return s.w.Write(b) }
func (stdoutWriter) Sync() error                   { return nil }
