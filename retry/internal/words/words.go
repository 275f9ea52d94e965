package words

import "fmt"

func Plural(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func Target(exchange, key string) string {
	if exchange == "" {
		return fmt.Sprintf("queue %q (default exchange)", key)
	}
	return fmt.Sprintf("exchange %q key %q", exchange, key)
}
