package ui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/internal/files"
	"github.com/ladder-tui/ladder/internal/gate"
	"github.com/ladder-tui/ladder/keymap"
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/ui/style"
)

// Options configure the terminal UI.
type Options struct {
	// Client is the broker to show (live or the demo simulation).
	Client broker.Client
	// Open opens a client for another vhost (the vhost switcher); nil hides
	// the switcher.
	Open func(vhost string) (broker.Client, error)
	// Contexts are the config file's named brokers the context switcher
	// offers, Context the one shown (also in the title); OpenContext
	// opens a client for one, which the UI then shows with that
	// client's read-only (nil, or no Contexts: no switcher).
	Contexts    []string
	Context     string
	OpenContext func(name string) (broker.Client, error)
	// ReadOnly removes every mutating action from keys and help. A client
	// that reports ReadOnly() is treated the same way.
	ReadOnly bool
	// Who is who acts (the gate's principal): what a refused key says on
	// the screen names it ("read-only: this key may not move"). The zero
	// value is a local run.
	Who gate.Principal
	// NoColor draws without any colour (NO_COLOR in the environment too).
	NoColor bool
	// Refresh is the snapshot interval; 0 adapts it to the vhost's size
	// (each snapshot's Refresh, the live client's refresh budget).
	Refresh time.Duration
	// LogFile receives debug logs; LADDER_DEBUG=1 without it logs to
	// ladder-debug.log. Nothing is ever logged to the screen.
	LogFile string
	// Title names the session in the title bar ("demo").
	Title string
	// Policy, when set, is the retry policy whose next delay the move
	// dialog offers.
	Policy *retry.Policy
	// PeekLimit is how many messages the queue browser peeks (default 1000).
	PeekLimit int
	// APITimeout is the management API's per-request timeout
	// (--api-timeout): a snapshot is given three of them.
	APITimeout time.Duration
	// Scans, when set, hears each scan of a queue's messages by cause that
	// finished (the browser's g and S; not one esc stopped, nor one of
	// --where's choice): ladder serve --metrics reports them. nil: none.
	Scans ScanRecorder
	// Files is where the browser's dumps go and its replays come from;
	// nil: files.Local, the working directory and the paths typed.
	Files Files
	// Input and Output default to the terminal.
	Input  io.Reader
	Output io.Writer
	// Terminal, when set, is the terminal Input and Output lead to when
	// it is not the process's own (a session of ladder serve --ssh).
	Terminal *Terminal
}

// Terminal is a terminal the UI cannot ask about: its environment, size
// and size's changes come from elsewhere (an SSH session's pty request and
// window changes).
type Terminal struct {
	// Environ is its environment (TERM at least): the colour profile is
	// read from it, and NO_COLOR there draws without colour.
	Environ []string
	// Width and Height are its size when the UI starts.
	Width, Height int
	// Resize delivers each new size; nil when it never changes.
	Resize <-chan Size
}

// Size is a terminal's size in cells.
type Size struct{ Width, Height int }

// defaultPeekLimit keeps a peek affordable: peeking a classic queue
// redelivers every message it looks at.
const defaultPeekLimit = 1000

// CheckTerminal refuses a terminal the UI cannot draw on: TERM=dumb (an
// editor's shell buffer, a serial console) moves no cursor and has no
// alternate screen, so a full-screen UI would scroll garbage. Tools that
// need cursor addressing refuse it likewise (top, htop); the commands
// work there.
func CheckTerminal(term string) error {
	if term == "dumb" {
		return errors.New("TERM=dumb cannot show the terminal UI (it moves no cursor): use ladder topology, peek and move, or set TERM to your terminal's (xterm-256color)")
	}
	return nil
}

// Run shows the UI until the user quits or ctx ends. The terminal is
// restored on return, whatever happened.
//
// Signals are the caller's: it cancels ctx on them (the CLI does on
// SIGINT and SIGTERM). ctx's end stops the UI as a keyed quit does: every
// broker call in flight is cancelled (their contexts derive from ctx), a
// running move or replay stops after the batch in flight and writes its
// audit line, and then the program ends, returning ctx's error.
func Run(ctx context.Context, opts Options) error {
	if opts.Client == nil {
		return errors.New("ui: no broker client")
	}
	if opts.Output == nil {
		if err := CheckTerminal(os.Getenv("TERM")); err != nil {
			return err
		}
	}
	logger, closeLog, err := openLog(opts.LogFile)
	if err != nil {
		return err
	}
	defer closeLog()
	term := opts.Terminal
	if term == nil {
		// Libraries that log through the standard logger must not write
		// over the screen: send them to the same file (or nowhere) while
		// we run. (A served session's screen is not the process's: the
		// standard logger is left alone, as concurrent sessions would
		// race to set it and put it back.)
		prevOut, prevFlags, prevPrefix := log.Writer(), log.Flags(), log.Prefix()
		log.SetOutput(logger.Writer())
		defer func() { log.SetOutput(prevOut); log.SetFlags(prevFlags); log.SetPrefix(prevPrefix) }()
		if os.Getenv("NO_COLOR") != "" {
			opts.NoColor = true
		}
	} else if slices.ContainsFunc(term.Environ, func(e string) bool { return strings.HasPrefix(e, "NO_COLOR=") && e != "NO_COLOR=" }) {
		opts.NoColor = true
	}
	m := New(opts)
	m.c.log = logger
	m.c.ctx = ctx
	// The program outlives ctx until a running move has stopped: killed
	// with ctx, it would end the process mid-move, before the move's audit
	// line. It is killed only if stopping takes longer than stopGrace.
	// Bubble Tea's own signal handler would quit at once on SIGTERM, so it
	// is off: the caller's cancel is the one way a signal stops the UI.
	progCtx, kill := context.WithCancel(context.WithoutCancel(ctx))
	defer kill()
	popts := []tea.ProgramOption{tea.WithContext(progCtx), tea.WithoutSignalHandler()}
	if opts.Input != nil {
		popts = append(popts, tea.WithInput(opts.Input))
	}
	if opts.Output != nil {
		popts = append(popts, tea.WithOutput(opts.Output))
	}
	if term != nil {
		// Bubble Tea cannot ask a remote terminal its size or profile:
		// they are given, and a suspend (ctrl+z) would stop the server.
		popts = append(popts, tea.WithEnvironment(term.Environ), tea.WithWindowSize(term.Width, term.Height),
			tea.WithColorProfile(colorprofile.Env(term.Environ)), tea.WithFilter(noSuspend))
	}
	if opts.NoColor {
		popts = append(popts, tea.WithColorProfile(colorprofile.Ascii))
	}
	p := tea.NewProgram(m, popts...)
	ended := make(chan struct{})
	go stopOnDone(ctx, p, kill, ended)
	if term != nil && term.Resize != nil {
		go forwardResize(p, term.Resize, ended)
	}
	final, err := p.Run()
	close(ended)
	if fm, ok := final.(*Model); ok {
		for _, c := range fm.owned {
			_ = c.Close()
		}
	}
	if ctx.Err() != nil && (err == nil || errors.Is(err, tea.ErrProgramKilled)) {
		return ctx.Err()
	}
	if err != nil {
		return fmt.Errorf("ui: %w", err)
	}
	return nil
}

// stopGrace bounds how long the UI waits, after its context ended, for a
// running move to stop: the broker's settle wait (30s) and some.
const stopGrace = time.Minute

// stopOnDone asks the program to stop when ctx ends (stopMsg: a running
// move stops cleanly first) and kills it if it has not ended stopGrace
// later. ended is closed when the program has returned.
func stopOnDone(ctx context.Context, p *tea.Program, kill func(), ended <-chan struct{}) {
	select {
	case <-ended:
		return
	case <-ctx.Done():
	}
	// Send returns once the program has taken the message or has ended.
	go p.Send(stopMsg{})
	t := time.NewTimer(stopGrace)
	defer t.Stop()
	select {
	case <-ended:
	case <-t.C:
		kill()
	}
}

// forwardResize sends the program each new size of its terminal until
// the program has ended.
func forwardResize(p *tea.Program, resize <-chan Size, ended <-chan struct{}) {
	for {
		select {
		case <-ended:
			return
		case sz, ok := <-resize:
			if !ok {
				return
			}
			p.Send(tea.WindowSizeMsg{Width: sz.Width, Height: sz.Height})
		}
	}
}

// noSuspend turns a suspend into a resume: a served session must not stop
// the process that serves it.
func noSuspend(_ tea.Model, msg tea.Msg) tea.Msg {
	if _, ok := msg.(tea.SuspendMsg); ok {
		return tea.ResumeMsg{}
	}
	return msg
}

// New builds the root model without running it (tests drive it directly).
func New(opts Options) *Model { return newModel(opts, newCommon(opts)) }

// newCommon is what the screens share, as opts set it (a screen's test
// builds one to drive that screen alone).
func newCommon(opts Options) *common {
	keys := keymap.Default()
	ro := opts.ReadOnly || (opts.Client != nil && opts.Client.ReadOnly())
	if ro {
		keys.ReadOnly()
	}
	limit := opts.PeekLimit
	if limit <= 0 {
		limit = defaultPeekLimit
	}
	var fs Files = files.Local{}
	if opts.Files != nil {
		fs = opts.Files
	}
	return &common{
		files:     fs,
		ctx:       context.Background(), // Run gives the program's
		policy:    opts.Policy,
		keys:      &keys,
		styles:    style.New(style.DefaultTheme(), opts.NoColor),
		readOnly:  ro,
		who:       opts.Who,
		refresh:   opts.Refresh,
		now:       time.Now,
		tick:      tea.Tick,
		log:       log.New(io.Discard, "", 0),
		peekLimit: limit,
	}
}

// openLog opens the debug log: opts' file, or ladder-debug.log under
// LADDER_DEBUG=1, else a logger that discards.
func openLog(path string) (*log.Logger, func(), error) {
	if path == "" && os.Getenv("LADDER_DEBUG") == "1" {
		path = "ladder-debug.log"
	}
	l := log.New(io.Discard, "", log.LstdFlags|log.Lmicroseconds)
	if path == "" {
		return l, func() {}, nil
	}
	f, err := tea.LogToFileWith(path, "ladder ", l)
	if err != nil {
		return nil, nil, fmt.Errorf("ui: log file: %w", err)
	}
	return l, func() { _ = f.Close() }, nil
}
