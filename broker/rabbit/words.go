package rabbit

import "github.com/ladder-tui/ladder/retry"

// Wording helpers of the live client's notes (as broker's report.go
// words its own).

// Counted phrases for notes: "1 message was", "3 messages were".
func were(n int, one, many string) string {
	return retry.Plural(n, one, many) + " " + wasWere(n)
}

func wasWere(n int) string {
	if n == 1 {
		return "was"
	}
	return "were"
}

func isAre(n int, one, many string) string {
	if n == 1 {
		return retry.Plural(n, one, many) + " is"
	}
	return retry.Plural(n, one, many) + " are"
}

func stayStays(n int) string {
	if n == 1 {
		return "stays"
	}
	return "stay"
}

func plainPlural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
