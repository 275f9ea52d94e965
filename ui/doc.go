// Package ui is ladder's terminal UI (bubbletea v2).
//
// The root Model (root.go) owns a stack of screens, the global keys, the
// polling loop and the chrome (title bar, status line, help line). Each
// screen is a small model with Update(tea.Msg) tea.Cmd, View, SetSize and a
// help.KeyMap: home (ladders), browser (peeked messages), inspector (one
// message), move (the move / re-publish dialog), help and vhost. Keys go to
// the focused screen; data messages (messages.go) go to every screen.
// Below 80×24 the frame says "terminal too small" and only quitting acts.
// Help (the ? screen and the footer) shows the keys of the screen it is
// opened from, as that screen's ShortHelp and FullHelp list them: only the
// bindings that act there.
//
// The browser's DUE column counts from the peek: "9s" (in 9 seconds),
// "late 3m" (its TTL ran out 3 minutes ago and something holds it back),
// "never" (no TTL); wide layouts say "in 9s" and "overdue 3m12s".
//
// Broker calls run only in commands (commands.go) with deadlines and come
// back as typed messages tagged with a generation or request id, so a late
// answer is dropped. Drawing is done by pure functions in the *_render.go
// files; keys come from package keymap, styles from package ui/style, and
// every broker-supplied string passes through internal/termtext before it is drawn.
package ui
