// Package wording holds the counted phrases the notes of moves, peeks and
// replays are written with ("1 message was", "3 messages were"), so the
// contract's use cases and the live client word them alike.
package wording

import "github.com/ladder-tui/ladder/retry/topology"

// Were is "1 message was", "3 messages were".
func Were(n int, one, many string) string {
	return topology.Plural(n, one, many) + " " + WasWere(n)
}

// WasWere is "was" for one, "were" otherwise.
func WasWere(n int) string {
	if n == 1 {
		return "was"
	}
	return "were"
}

// IsAre is "1 message is", "3 messages are".
func IsAre(n int, one, many string) string {
	if n == 1 {
		return topology.Plural(n, one, many) + " is"
	}
	return topology.Plural(n, one, many) + " are"
}

// StayStays is "stays" for one, "stay" otherwise.
func StayStays(n int) string {
	if n == 1 {
		return "stays"
	}
	return "stay"
}

// MayBe is "it may" for one, "they may" otherwise.
func MayBe(n int) string {
	if n == 1 {
		return "it may"
	}
	return "they may"
}

// Plain is one or many, without the count.
func Plain(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
