package retry

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
)

// ReplayQueueName names the per-delay wait queue for one target:
// ladder.delay.<ms>.<exchange or "default">.<routing key>.<hash>. The hash
// of exchange and key keeps targets apart whose dotted names would read
// alike ("a" + "b.c" and "a.b" + "c"); the readable part is shortened to
// stay far below the broker's 255-byte limit.
func ReplayQueueName(exchange, routingKey string, ms int64) string {
	return replayQueuePrefix + replayQueueSuffix(exchange, routingKey, ms)
}

// replayQueuePrefix starts the name of every wait queue ladder declares.
const replayQueuePrefix = "ladder.delay."

func replayQueueSuffix(exchange, routingKey string, ms int64) string {
	ex := exchange
	if ex == "" {
		ex = "default"
	}
	sum := sha256.Sum256([]byte(exchange + "\x00" + routingKey))
	readable := ex + "." + routingKey
	if len(readable) > 160 {
		readable = readable[:160]
	}
	return strconv.FormatInt(ms, 10) + "." + readable + "." + hex.EncodeToString(sum[:4])
}
