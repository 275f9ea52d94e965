package broker

import "github.com/ladder-tui/ladder/retry/moveplan"

// Book books one message's planned route into the report, the one way a
// live move, the simulation and a replay do it: one --where did not choose
// is counted only; the others give their notes; one that stays is counted
// skipped and listed (with its body's digest, which a move works out only
// now); one that moves is counted and listed in a dry run, while a move
// counts it as its publish settles. It returns r as listed.
func (rep *MoveReport) Book(msg moveplan.Message, r moveplan.Route) moveplan.Route {
	if r.Unmatched {
		rep.Unmatched++
		return r
	}
	if !r.Moves() && r.BodyDigest == "" && len(msg.Body) >= msg.BodySize {
		r.BodyDigest = moveplan.BodyDigest(msg.Body)
	}
	rep.Note(r.Note)
	rep.Note(r.CrashRisk)
	if !r.Moves() {
		rep.Skipped++
	} else if rep.DryRun {
		rep.Count(r)
	}
	if rep.DryRun || !r.Moves() {
		rep.Planned = append(rep.Planned, r)
	}
	return r
}
