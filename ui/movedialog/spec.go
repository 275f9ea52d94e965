// Package movedialog is the UI's move / re-publish dialog: choose,
// preview (the dry run), confirm, watch progress, read the summary. It is
// the UI's only caller of Client.Move and usecase.Replay, so the
// confirmation rule lives in one place. The app opens it on a Spec and
// gives it an Env (keys, styles, a Mover: the roles of the client it uses,
// the program's context); it answers with BackMsg, ClosedMsg and AskMsg.
// Its renderers (render.go) are pure.
package movedialog

import (
	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/moveplan"
)

// Spec is what the move dialog is opened on: the screens that open it
// (home, the browser, the inspector, groups) fill it in; the dialog offers
// its scopes, targets and delays from it.
type Spec struct {
	Queue  string
	Ladder *retry.Ladder
	Depth  int64           // ready messages, for "whole queue"
	Cursor *broker.Message // the message under the cursor, if any
	Marked []int           // positions of marked messages (as the peek numbered them)
	// IDs are the message ids the peek saw at positions, so a move checks
	// that each position still holds the message that was marked.
	IDs map[int]string
	// Single: opened on one message (the inspector), so "this message"
	// comes first, before the marks.
	Single bool
	// Where is the browser's w filter: the dialog offers what it chooses
	// across the whole queue (the move's --where), Chosen of the Peeked
	// messages it chose (all of the queue when AllPeeked).
	Where     moveplan.Where
	Chosen    int
	Peeked    int
	AllPeeked bool
	// ReplayFile, when set, makes the dialog a replay of that dump file
	// (browser R): the same form, dry run, confirmation and progress.
	ReplayFile string
	// ReplayPath is the file the replay reads (the app's Files resolve
	// ReplayFile to it); ReplayFile itself when empty.
	ReplayPath string
	// Unblock, when set, is ladder unblock's move (usecase.PrepareUnblock):
	// the dialog skips the form and goes straight to its dry run.
	Unblock     *broker.MoveRequest
	UnblockPlan *moveplan.UnblockPlan
}

// replayPath is the file a replay reads.
func (s *Spec) replayPath() string {
	if s.ReplayPath != "" {
		return s.ReplayPath
	}
	return s.ReplayFile
}
