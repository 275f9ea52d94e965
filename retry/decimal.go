package retry

import (
	"encoding/json"
	"math"
	"strconv"
)

// Decimal is an AMQP decimal header value: Value × 10^-Scale. The engine
// keeps it as its own type so it is written back as a decimal (a client
// such as pika sends Python Decimals this way).
type Decimal struct {
	Scale uint8
	Value int32
}

// String writes the decimal exactly: "4", "-0.25".
func (d Decimal) String() string {
	neg := d.Value < 0
	v := int64(d.Value)
	if neg {
		v = -v
	}
	digits := strconv.FormatInt(v, 10)
	if s := int(d.Scale); s > 0 {
		for len(digits) <= s {
			digits = "0" + digits
		}
		digits = digits[:len(digits)-s] + "." + digits[len(digits)-s:]
	}
	if neg {
		return "-" + digits
	}
	return digits
}

// Float is the decimal's value as a float64.
func (d Decimal) Float() float64 { return float64(d.Value) / math.Pow10(int(d.Scale)) }

// MarshalJSON writes the exact text, as a JSON string.
func (d Decimal) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }
