// Package retry is ladder's retry engine: the pure model of RabbitMQ retry
// ladders. It knows backoff policies, retry-state header conventions, x-death,
// ladder discovery from a vhost description, findings and head-of-line
// analysis. It does no I/O and imports no AMQP or UI package: plain Go values
// in, plain values out, so a worker can import it as well as ladder itself.
//
// Header values use plain Go types that mirror AMQP field types: int8, int16,
// int32, int64, uint8…uint64, float32, float64, string, []byte, bool,
// time.Time, []any (field array), map[string]any (field table) and nil.
package retry
