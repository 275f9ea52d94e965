package topology

import (
	"regexp"
	"sort"
)

// PolicyDef is a user or operator policy as the management API lists it
// (GET /api/policies/VHOST, /api/operator-policies/VHOST). The management
// API's effective_policy_definition of a queue lags a new policy by its
// stats interval (5 s and more, seen on 3.10 and 4.3); the policy list does
// not, so a running move works out what applies from it.
type PolicyDef struct {
	Name       string         `json:"name"`
	Pattern    string         `json:"pattern"`
	ApplyTo    string         `json:"apply-to"`
	Priority   int            `json:"priority"`
	Definition map[string]any `json:"definition"`
}

// appliesTo says whether a policy's apply-to covers a queue of type typ.
func (p PolicyDef) appliesTo(typ string) bool {
	switch p.ApplyTo {
	case "", "all", "queues":
		return true
	case "classic_queues":
		return typ == QueueClassic || typ == ""
	case "quorum_queues":
		return typ == QueueQuorum
	case "streams":
		return typ == QueueStream
	}
	return false
}

// EffectivePolicy is the policy definition the broker applies to queue (of
// type typ), as rabbit_policy works it out: of the policies whose pattern
// matches the name and whose apply-to covers the queue, the one of highest
// priority; the same for operator policies; then each key an operator
// policy sets merges in — the smaller value for the numeric limits (a
// user's policy may only tighten what the operator allows), the operator's
// for a key only it sets. ok is false when a pattern does not compile as a
// Go regexp (Erlang's re reads more than RE2 does): the caller then keeps
// what the management API says.
func EffectivePolicy(queue, typ string, policies, operator []PolicyDef) (def map[string]any, ok bool) {
	user, ok1 := bestPolicy(queue, typ, policies)
	op, ok2 := bestPolicy(queue, typ, operator)
	if !ok1 || !ok2 {
		return nil, false
	}
	out := map[string]any{}
	if user != nil {
		for k, v := range user.Definition {
			out[k] = v
		}
	}
	if op != nil {
		for k, v := range op.Definition {
			old, had := out[k]
			if !had {
				out[k] = v
				continue
			}
			a, aok := dlInt(old)
			b, bok := dlInt(v)
			if aok && bok && b < a {
				out[k] = v
			}
		}
	}
	return out, true
}

func bestPolicy(queue, typ string, ps []PolicyDef) (*PolicyDef, bool) {
	var match []*PolicyDef
	for i := range ps {
		p := &ps[i]
		if !p.appliesTo(typ) {
			continue
		}
		re, err := regexp.Compile(p.Pattern)
		if err != nil {
			return nil, false
		}
		if re.MatchString(queue) {
			match = append(match, p)
		}
	}
	if len(match) == 0 {
		return nil, true
	}
	sort.SliceStable(match, func(i, j int) bool { return match[i].Priority > match[j].Priority })
	return match[0], true
}
