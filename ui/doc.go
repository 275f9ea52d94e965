// Package ui is ladder's terminal UI (bubbletea v2).
//
// The root Model (root.go) owns a stack of screens, the global keys, the
// polling loop and the chrome (title bar, status line, help line). Each
// screen is a small model with Update(tea.Msg) tea.Cmd, View, SetSize and a
// help.KeyMap: home (ladders), browser (peeked messages), inspector (one
// message), the move / re-publish dialog (package ui/movedialog, opened
// on a movedialog.Spec), help and vhost. Keys go to the focused screen;
// data messages (messages.go) go to every screen.
// Below 80×24 the frame says "terminal too small" and only quitting acts.
// Help (the ? screen and the footer) shows the keys of the screen it is
// opened from, as that screen's ShortHelp and FullHelp list them: only the
// bindings that act there.
//
// The browser's DUE column counts from the peek: "9s" (in 9 seconds),
// "late 3m" (its TTL ran out 3 minutes ago and something holds it back),
// "never" (no TTL); wide layouts say "in 9s" and "overdue 3m12s".
//
// Lists (home, browser, vhost switcher) share ui/component/list — a cursor
// with a visible window, and a filter typed in place — and tables are laid
// out by ui/component/table from column specs; each screen keeps only what
// is its own (home's sections and details pane, the browser's sort and
// marks). Styled lines are fitted to a width by ui/styled; queue depth
// history (sparklines, the hol-blocked evidence) is internal/depthhistory.
// How a value reads (due times, targets, routes, durations,
// plurals) comes from internal/present, as in the commands' tables.
//
// Worth keeping as it is: the screen interface with Capturing (a screen
// typing text takes every key) and Back (esc closes what is open inside
// a screen before the screen itself); the generation or request id on every
// async result; help generated from the keymap, with the reflection test
// that every binding is listed somewhere; goldens at 80×24 and 160×48.
//
// Broker calls run only in commands (commands.go, and the dialog's own)
// with deadlines under the program's context (ui.Run's: its end stops a
// running move cleanly before the program ends) and come back as typed messages tagged with a generation or request id, so a late
// answer is dropped. Drawing is done by pure functions in the *_render.go
// files; keys come from package keymap, styles from package ui/style, and
// every broker-supplied string passes through internal/termtext before it is drawn.
package ui
