package broker

import (
	"crypto/rand"
	"encoding/hex"
	"slices"
	"strings"

	"github.com/ladder-tui/ladder/retry/moveplan"
)

// Headers ladder writes on every moved message.
const (
	HeaderMovedFrom = moveplan.HeaderMovedFrom
	// HeaderMoveID ("<run>/<n>") ties a basic.return to the publish it
	// answers (returns carry no delivery tag) and lets consumers drop the
	// duplicate a crash between confirm and ack can leave.
	HeaderMoveID = "x-ladder-move-id"
	// HeaderOriginalExpiration keeps a message's expiration property when a
	// delayed move takes it off (it would shorten the delay).
	HeaderOriginalExpiration = moveplan.HeaderOriginalExpiration
)

// RunID names one run (a move, a replay) in HeaderMoveID.
func RunID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Requested is how many messages the move will take from the source.
func Requested(req MoveRequest, ready int) int {
	n := ready
	if len(req.Positions) > 0 {
		n = 0
		seen := map[int]bool{}
		for _, p := range req.Positions {
			if p >= 0 && p < ready && !seen[p] {
				seen[p] = true
				n++
			}
		}
	}
	if req.Limit > 0 && req.Limit < n {
		n = req.Limit
	}
	return n
}

// PreviewReads is how many of the source's first messages a dry run of
// req reads when ready are ready (the simulation's dry run reads as many):
// those the move would take, or up to the last position or pick asked for;
// a move that chooses (--where, picks) looks at every message, but no
// further than it can hold back.
func PreviewReads(req MoveRequest, ready int) int {
	n, _ := PreviewReadsCapped(req, ready)
	return n
}

// PreviewReadsCapped is PreviewReads; capped: the bound of what a move holds back
// cut it short.
func PreviewReadsCapped(req MoveRequest, ready int) (n int, capped bool) {
	look := req
	if req.Chooses() {
		look.Limit = 0 // every message is looked at; Limit counts chosen ones
	}
	n = Requested(look, ready)
	if len(req.Positions) > 0 {
		if last := slices.Max(req.Positions); last >= 0 {
			n = last + 1
		}
	}
	if req.Pick != nil {
		last := 0
		for _, k := range req.Pick {
			last = max(last, k.Position)
		}
		n = min(n, last+1) // no pick lies further back
	}
	if req.Chooses() && n > HeldBudget {
		// A move looks no further than it can hold: nor does its preview.
		return HeldBudget, true
	}
	return n, false
}

// PreviewCostNotes are the notes a dry run adds for what its browse of the
// source cost beyond the redelivered flag: a delivery counted, messages its
// return dead-lettered (the simulation's dry run says the same).
func PreviewCostNotes(res *PeekResult) []string {
	var out []string
	for _, e := range res.SideEffects {
		if strings.Contains(e, "x-delivery-count") || strings.Contains(e, "by this peek") || strings.Contains(e, "left the queue during the peek") {
			out = append(out, "dry run: "+e)
		}
	}
	return out
}

// MaxBody keeps a browsed body whole (dumps, --where on bodies).
const MaxBody = 1 << 30

// HeldBudget bounds the messages a move keeps unacked because it cannot
// move them (deliveries sit in memory until the move ends).
const HeldBudget = 10000
