package sim

import (
	"slices"
	"strconv"
	"strings"
)

// describe names where a publish goes, for notes.
func describe(exchange, key string) string {
	if exchange == "" {
		return "queue " + key
	}
	return "exchange " + exchange + " with key " + strconv.Quote(key)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func joinKeys(m map[string]bool) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return strings.Join(keys, ", ")
}
