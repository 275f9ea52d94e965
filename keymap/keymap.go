// Package keymap is the only place ladder names keys. Every screen reads its
// bindings from here and help is generated from the same bindings, so a key
// that works is always listed and a listed key always works.
package keymap

import (
	"slices"

	"charm.land/bubbles/v2/key"
)

// KeyMap holds every binding of the terminal UI.
type KeyMap struct {
	Up        key.Binding
	Down      key.Binding
	PageUp    key.Binding
	PageDown  key.Binding
	Top       key.Binding
	Bottom    key.Binding
	Open      key.Binding
	Back      key.Binding
	Filter    key.Binding
	NextMatch key.Binding // the next row a kept filter matches (ladders, browser)
	PrevMatch key.Binding // the previous one; both wrap around
	Mark      key.Binding
	MarkAll   key.Binding
	Sort      key.Binding
	Move      key.Binding
	Group     key.Binding // group the browser's messages by what broke them
	// GroupAll groups the whole queue (a browse up to the dump bound), not
	// only the peeked messages (the grouped view).
	GroupAll  key.Binding
	Where     key.Binding // choose messages by --where expressions
	Dump      key.Binding // save the queue's messages to a file
	Replay    key.Binding // publish a dump file's messages again
	Unblock   key.Binding // move the messages holding a wait queue back
	Findings  key.Binding // every finding in full (ladders)
	HideEmpty key.Binding // hide or show the queues holding no message (ladders)
	Refresh   key.Binding
	Copy      key.Binding
	Vhost     key.Binding
	// Context switches to another named broker of the config file.
	Context key.Binding
	Help    key.Binding
	// TypingHelp opens help from a typed field too, where ? is a letter.
	TypingHelp key.Binding
	Quit       key.Binding
	ForceQuit  key.Binding

	// Dialog keys (move dialog, confirmations, prompts).
	Next     key.Binding
	Prev     key.Binding
	Confirm  key.Binding
	Toggle   key.Binding // next choice of the focused field
	Untoggle key.Binding // previous choice
	Cancel   key.Binding
	// Close dismisses a finished dialog (the move summary): confirm and
	// cancel keys alike.
	Close key.Binding
	// Pause pauses and resumes a running move or replay.
	Pause key.Binding

	// Typing a filter: enter keeps it and returns to the list, esc clears
	// it. ClearFilter's keys are Back's: the root routes esc to the screen.
	KeepFilter  key.Binding
	ClearFilter key.Binding
	// Editing typed text (filters, dialog fields, prompts). While a typed
	// field is focused these come first, before the screen's own keys that
	// share them (home, end, ctrl+u page up).
	CursorLeft    key.Binding
	CursorRight   key.Binding
	LineStart     key.Binding
	LineEnd       key.Binding
	DeleteChar    key.Binding // the character before the cursor
	DeleteNext    key.Binding // the character under the cursor
	DeleteWord    key.Binding // the word before the cursor
	DeleteToStart key.Binding
	DeleteToEnd   key.Binding
}

// Default returns ladder's default bindings.
func Default() KeyMap {
	return KeyMap{
		Up:         key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:       key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		PageUp:     key.NewBinding(key.WithKeys("pgup", "ctrl+u"), key.WithHelp("pgup/^u", "page up")),
		PageDown:   key.NewBinding(key.WithKeys("pgdown", "ctrl+d"), key.WithHelp("pgdn/^d", "page down")),
		Top:        key.NewBinding(key.WithKeys("home"), key.WithHelp("home", "first")),
		Bottom:     key.NewBinding(key.WithKeys("end", "G"), key.WithHelp("G/end", "last")),
		Open:       key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "open")),
		Back:       key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back")),
		Filter:     key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter")),
		NextMatch:  key.NewBinding(key.WithKeys("n"), key.WithHelp("n", "next match")),
		PrevMatch:  key.NewBinding(key.WithKeys("N"), key.WithHelp("N", "previous match")),
		Mark:       key.NewBinding(key.WithKeys("space"), key.WithHelp("space", "mark")),
		MarkAll:    key.NewBinding(key.WithKeys("a"), key.WithHelp("a", "mark all/none")),
		Sort:       key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "sort")),
		Move:       key.NewBinding(key.WithKeys("m"), key.WithHelp("m", "move/re-publish")),
		Group:      key.NewBinding(key.WithKeys("g"), key.WithHelp("g", "group")),
		GroupAll:   key.NewBinding(key.WithKeys("S"), key.WithHelp("S", "group the whole queue")),
		Where:      key.NewBinding(key.WithKeys("w"), key.WithHelp("w", "where")),
		Dump:       key.NewBinding(key.WithKeys("d"), key.WithHelp("d", "dump")),
		Replay:     key.NewBinding(key.WithKeys("R"), key.WithHelp("R", "replay file")),
		Unblock:    key.NewBinding(key.WithKeys("u"), key.WithHelp("u", "unblock (HoL)")),
		Findings:   key.NewBinding(key.WithKeys("f"), key.WithHelp("f", "findings in full")),
		HideEmpty:  key.NewBinding(key.WithKeys("e"), key.WithHelp("e", "hide empty queues")),
		Refresh:    key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "refresh")),
		Copy:       key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "copy body")),
		Vhost:      key.NewBinding(key.WithKeys("v"), key.WithHelp("v", "vhost")),
		Context:    key.NewBinding(key.WithKeys("x"), key.WithHelp("x", "context")),
		Help:       key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		TypingHelp: key.NewBinding(key.WithKeys("f1"), key.WithHelp("f1", "help")),
		Quit:       key.NewBinding(key.WithKeys("q"), key.WithHelp("q", "quit")),
		ForceQuit:  key.NewBinding(key.WithKeys("ctrl+c"), key.WithHelp("ctrl+c", "quit")),

		Next:     key.NewBinding(key.WithKeys("tab", "down", "j"), key.WithHelp("tab/↓", "next field")),
		Prev:     key.NewBinding(key.WithKeys("shift+tab", "up", "k"), key.WithHelp("shift+tab/↑", "previous field")),
		Confirm:  key.NewBinding(key.WithKeys("enter", "y"), key.WithHelp("enter/y", "confirm")),
		Toggle:   key.NewBinding(key.WithKeys("space", "right", "l"), key.WithHelp("→/space", "next choice")),
		Untoggle: key.NewBinding(key.WithKeys("left", "h"), key.WithHelp("←", "previous choice")),
		Cancel:   key.NewBinding(key.WithKeys("esc", "n"), key.WithHelp("esc/n", "cancel")),
		Close:    key.NewBinding(key.WithKeys("enter", "y", "esc", "n"), key.WithHelp("enter/esc", "close")),
		Pause:    key.NewBinding(key.WithKeys("p"), key.WithHelp("p", "pause/resume")),

		KeepFilter:  key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "keep filter")),
		ClearFilter: key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "clear filter")),

		CursorLeft:    key.NewBinding(key.WithKeys("left", "ctrl+b"), key.WithHelp("←", "cursor left")),
		CursorRight:   key.NewBinding(key.WithKeys("right", "ctrl+f"), key.WithHelp("→", "cursor right")),
		LineStart:     key.NewBinding(key.WithKeys("home", "ctrl+a"), key.WithHelp("home/ctrl+a", "start of text")),
		LineEnd:       key.NewBinding(key.WithKeys("end", "ctrl+e"), key.WithHelp("end/ctrl+e", "end of text")),
		DeleteChar:    key.NewBinding(key.WithKeys("backspace", "ctrl+h"), key.WithHelp("⌫", "delete")),
		DeleteNext:    key.NewBinding(key.WithKeys("delete"), key.WithHelp("del", "delete under cursor")),
		DeleteWord:    key.NewBinding(key.WithKeys("ctrl+w", "alt+backspace"), key.WithHelp("ctrl+w", "delete word")),
		DeleteToStart: key.NewBinding(key.WithKeys("ctrl+u"), key.WithHelp("ctrl+u", "delete to start")),
		DeleteToEnd:   key.NewBinding(key.WithKeys("ctrl+k"), key.WithHelp("ctrl+k", "delete to end")),
	}
}

// ReadOnly removes every mutating action: the keys stop working and vanish
// from help. Marking only chooses messages to move, so it goes too.
func (k *KeyMap) ReadOnly() {
	k.Move.SetEnabled(false)
	k.Mark.SetEnabled(false)
	k.MarkAll.SetEnabled(false)
	k.Replay.SetEnabled(false)
	k.Unblock.SetEnabled(false)
}

// Withheld says which action a key ReadOnly took away would have begun
// ("move", "replay", "unblock"), so the screen can say it is refused
// rather than do nothing.
func (k *KeyMap) Withheld(pressed string) (action string, ok bool) {
	for _, w := range []struct {
		b      key.Binding
		action string
	}{{k.Move, "move"}, {k.Mark, "move"}, {k.MarkAll, "move"}, {k.Replay, "replay"}, {k.Unblock, "unblock"}} {
		if !w.b.Enabled() && slices.Contains(w.b.Keys(), pressed) {
			return w.action, true
		}
	}
	return "", false
}

// ReadWrite gives back what ReadOnly took: a switch to a context that
// may change the broker.
func (k *KeyMap) ReadWrite() {
	k.Move.SetEnabled(true)
	k.Mark.SetEnabled(true)
	k.MarkAll.SetEnabled(true)
	k.Replay.SetEnabled(true)
	k.Unblock.SetEnabled(true)
}

// ShortHelp is the footer's help when no screen offers its own. Screens
// list their own bindings (only those that act there); FullHelp below is the
// whole catalogue, which no single screen shows.
func (k KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Help, k.Quit}
}

// FullHelp lists every binding in groups: moving around, acting on what is
// selected, the app itself, and dialogs. Disabled bindings drop out of the
// rendered help (bubbles/help skips them).
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom},
		{k.Open, k.Back, k.Filter, k.NextMatch, k.PrevMatch, k.Where, k.Group, k.GroupAll, k.Sort, k.Mark, k.MarkAll},
		{k.Move, k.Unblock, k.Dump, k.Replay, k.Findings, k.HideEmpty, k.Refresh, k.Copy, k.Vhost, k.Context, k.Help, k.TypingHelp, k.Quit, k.ForceQuit},
		{k.Next, k.Prev, k.Toggle, k.Untoggle, k.Confirm, k.Cancel, k.Close, k.Pause},
		{k.KeepFilter, k.ClearFilter},
		k.EditKeys(),
	}
}

// EditKeys are the keys that edit typed text (input.Line), for help
// wherever a typed field is focused.
func (k KeyMap) EditKeys() []key.Binding {
	return []key.Binding{k.CursorLeft, k.CursorRight, k.LineStart, k.LineEnd,
		k.DeleteChar, k.DeleteNext, k.DeleteWord, k.DeleteToStart, k.DeleteToEnd}
}

// As is b with another description: the same keys, enabled or not as b is,
// described for where it is shown ("enter/y move now" instead of
// "enter/y confirm"), so a dialog's hints and the footer say the same.
func As(b key.Binding, desc string) key.Binding {
	b.SetHelp(b.Help().Key, desc)
	return b
}
