// Package retry is what a RabbitMQ worker needs to retry failed messages
// through a ladder of wait queues, and the model ladder itself reads them
// with. On a failure a worker does three things:
//
//  1. ReadState(headers, DeathQueues(ladder)) reads the message's retry
//     state: its count in whichever convention it carries (x-retry-count,
//     x-death, the quorum delivery count, yii's attempt, MassTransit,
//     NServiceBus), its last delay and error.
//  2. Plan(headers, state, options) decides with a Policy (fixed, linear or
//     exponential backoff, jitter) on a Ladder (main queue, wait tiers, DLQ):
//     an Action to wait in the tier that fits the drawn delay, in a delayed
//     exchange or in a per-delay wait queue, or, once MaxAttempts is reached,
//     to park it in the DLQ (or drop it).
//  3. Publish as the Action says — Exchange, RoutingKey, Headers (with the
//     count incremented), after declaring Queue with QueueArgs for a
//     per-delay wait queue — wait for the publisher confirm, then ack the
//     delivery. Acking only after the confirm loses nothing: a crash between
//     the two redelivers the message (once more, at worst).
//
// Schedule previews the delays a policy gives on a ladder; XDeath and
// DecodeXDeath read the broker's own death records.
//
// The package does no I/O and imports no AMQP or UI package: plain Go values
// in, plain values out. The rest of ladder's engine builds on it:
// retry/topology discovers ladders in a vhost description and reports
// findings, routing and head-of-line blocking; retry/moveplan plans moves,
// replays and unblocks.
//
// Header values use plain Go types that mirror AMQP field types: int8, int16,
// int32, int64, uint8…uint64, float32, float64, string, []byte, bool,
// time.Time, []any (field array), map[string]any (field table) and nil.
package retry
