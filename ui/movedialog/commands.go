package movedialog

import (
	"context"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/usecase"
	"github.com/ladder-tui/ladder/keymap"
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/ui/style"
)

// Mover is the part of a broker client the dialog uses: Move for a move
// and its dry run, what usecase.Replay publishes a dump file through for a
// replay, and ReadOnly to refuse either before its dry run. The app hands
// it its broker.Client; a test, a fake of these alone.
type Mover interface {
	broker.Mover
	usecase.ReplayTarget
	// ReadOnly reports whether the session refuses mutations.
	ReadOnly() bool
}

// Env is what the dialog takes from the app around it.
type Env struct {
	Keys   *keymap.KeyMap
	Styles *style.Styles
	// Policy, when set, is the retry policy whose next delay the dialog
	// offers.
	Policy *retry.Policy
	// Client is the broker the dialog's moves run on now (a vhost switch
	// changes it).
	Client func() Mover
	// Context is the program's: every move's and dry run's context
	// derives from it, so its end (SIGTERM) stops a running move as esc
	// does, after the batch in flight.
	Context func() context.Context
	// AppKeys end the dialog's full help (help, ctrl+c).
	AppKeys func() []key.Binding
}

// Messages the dialog sends to the app around it.
type (
	// BackMsg closes the dialog (esc on the form, an unblock's dry run).
	BackMsg struct{}
	// ClosedMsg says the dialog closed after its summary. Changed: a move
	// ran and may have changed Queue (anything but every message skipped),
	// so the browser re-peeks it and an inspector showing one of its
	// messages closes.
	ClosedMsg struct {
		Queue   string
		Changed bool
	}
	// AskMsg asks the user about the running move (stop it?); a yes sends
	// Answer back. The question closes by itself if the move ends first.
	AskMsg struct {
		Title, Yes, No string
		Answer         tea.Msg
	}
)

// Messages of the dialog's own commands; the app routes them back (and
// reads DoneMsg: a dry run counted a delivery).
type (
	// ProgressMsg is one progress report of move ID, read from the channel
	// the progress callback feeds; the wait command is re-issued after each.
	ProgressMsg struct {
		ID       int
		Progress broker.MoveProgress
	}
	// DoneMsg is the result of Client.Move (dry run or real) for ID.
	DoneMsg struct {
		ID     int
		DryRun bool
		Report *broker.MoveReport
		Err    error
	}
)

const (
	// dryRunTimeout bounds a whole dry run (its read of the source is a
	// peek's, bounded as the browser's is).
	dryRunTimeout = 60 * time.Second
	// moveTimeout bounds a whole move; the user can cancel sooner (esc).
	moveTimeout = 30 * time.Minute
)

func navCmd(m tea.Msg) tea.Cmd {
	return func() tea.Msg { return m }
}

// moveCmd runs Client.Move under ctx (cancelled by the dialog's esc). The
// progress callback keeps only the newest report in ch (capacity 1): the bar
// needs the latest figures, not every batch, and the mover never blocks on
// a slow screen. ch is closed when Move returns, which ends the wait loop.
func moveCmd(ctx context.Context, c broker.Mover, id int, req broker.MoveRequest, ch chan broker.MoveProgress) tea.Cmd {
	return func() tea.Msg {
		var progress func(broker.MoveProgress)
		if ch != nil {
			defer close(ch)
			progress = func(p broker.MoveProgress) {
				for {
					select {
					case ch <- p:
						return
					default:
					}
					select {
					case <-ch: // drop the stale report the screen has not read
					default:
					}
				}
			}
		}
		rep, err := c.Move(ctx, req, progress)
		return DoneMsg{ID: id, DryRun: req.DryRun, Report: rep, Err: err}
	}
}

// replayCmd replays file as the move dialog's request says (the browser's
// R): usecase.Replay, the same the command runs.
func replayCmd(ctx context.Context, c usecase.ReplayTarget, id int, file string, req broker.MoveRequest, ch chan broker.MoveProgress) tea.Cmd {
	return func() tea.Msg {
		var progress func(broker.MoveProgress)
		if ch != nil {
			defer close(ch)
			progress = func(p broker.MoveProgress) {
				select {
				case <-ch:
				default:
				}
				ch <- p
			}
		}
		rep, err := usecase.Replay(ctx, c, replayRequest(file, req), progress)
		return DoneMsg{ID: id, DryRun: req.DryRun, Report: rep, Err: err}
	}
}

// replayRequest is the dialog's request as a replay of file: every flag
// the form took (count, --where, --rate, --max-moves) goes with it.
func replayRequest(file string, req broker.MoveRequest) usecase.ReplayRequest {
	return usecase.ReplayRequest{
		File: file, To: req.To, Delay: req.Delay, Limit: req.Limit, DryRun: req.DryRun,
		ResetRetries: req.ResetRetries, Where: req.Where, Rate: req.Rate, MaxMoves: req.MaxMoves, Force: req.Force,
		Hold: req.Hold, Expect: req.Expect,
	}
}

// waitProgress reads one progress report; the dialog re-issues it after each.
func waitProgress(id int, ch <-chan broker.MoveProgress) tea.Cmd {
	return func() tea.Msg {
		p, ok := <-ch
		if !ok {
			return nil
		}
		return ProgressMsg{ID: id, Progress: p}
	}
}
