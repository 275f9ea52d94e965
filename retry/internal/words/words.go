// Package words holds the phrases topology and moveplan both write into
// notes and errors, so they read the same.
package words

import "fmt"

// Plural is one when n is 1, else many.
func Plural(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Target names where a publish goes: a queue through the default exchange,
// or an exchange and routing key.
func Target(exchange, key string) string {
	if exchange == "" {
		return fmt.Sprintf("queue %q (default exchange)", key)
	}
	return fmt.Sprintf("exchange %q key %q", exchange, key)
}
