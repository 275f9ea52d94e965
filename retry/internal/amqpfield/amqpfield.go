// Package amqpfield reads and writes AMQP header values (field table and
// array types, integers in any width, text) for retry and its subpackages.
package amqpfield

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
)

// encodeCount writes n as the Go type named by kind, widening within the same
// family (signed, unsigned, float) when n does not fit.
func EncodeCount(kind string, n int64) any {
	switch kind {
	case "int8", "int16", "int32", "int64":
		switch {
		case kind == "int8" && n <= math.MaxInt8:
			return int8(n)
		case (kind == "int8" || kind == "int16") && n <= math.MaxInt16:
			return int16(n)
		case kind != "int64" && n <= math.MaxInt32:
			return int32(n)
		}
		return n
	case "uint8", "uint16", "uint32", "uint64":
		switch {
		case kind == "uint8" && n <= math.MaxUint8:
			return uint8(n)
		case (kind == "uint8" || kind == "uint16") && n <= math.MaxUint16:
			return uint16(n)
		case kind != "uint64" && n <= math.MaxUint32:
			return uint32(n)
		}
		return uint64(n)
	case "int":
		return int(n)
	case "uint":
		return uint(n)
	case "float32":
		if n <= 1<<24 { // float32 holds integers exactly up to 2^24
			return float32(n)
		}
		fallthrough
	case "float64":
		if n <= 1<<53 {
			return float64(n)
		}
		return n
	case "string":
		return strconv.FormatInt(n, 10)
	case "[]byte":
		return []byte(strconv.FormatInt(n, 10))
	}
	if n <= math.MaxInt32 {
		return int32(n)
	}
	return n
}

// countValue reads a non-negative integer count from any integer type, an
// integral float, or a decimal string.
func Count(v any) (int64, string, error) {
	n, kind, err := Int(v)
	if err == nil && n < 0 {
		return 0, kind, fmt.Errorf("%w count %d", ErrNegative, n)
	}
	return n, kind, err
}

// intValue reads a signed integer from any integer type, an integral float, or
// a decimal string ([]byte included); kind names the type it had.
func Int(v any) (int64, string, error) {
	switch x := v.(type) {
	case int8:
		return int64(x), "int8", nil
	case int16:
		return int64(x), "int16", nil
	case int32:
		return int64(x), "int32", nil
	case int64:
		return x, "int64", nil
	case int:
		return int64(x), "int", nil
	case uint8:
		return int64(x), "uint8", nil
	case uint16:
		return int64(x), "uint16", nil
	case uint32:
		return int64(x), "uint32", nil
	case uint64:
		if x > math.MaxInt64 {
			return 0, "uint64", fmt.Errorf("%d is out of range", x)
		}
		return int64(x), "uint64", nil
	case uint:
		if uint64(x) > math.MaxInt64 {
			return 0, "uint", fmt.Errorf("%d is out of range", x)
		}
		return int64(x), "uint", nil
	case float32:
		n, err := floatInt(float64(x))
		return n, "float32", err
	case float64:
		n, err := floatInt(x)
		return n, "float64", err
	case string:
		n, err := decimal(x)
		return n, "string", err
	case []byte:
		n, err := decimal(string(x))
		return n, "[]byte", err
	case floater:
		// retry.Decimal: this package sits below retry and cannot name it.
		n, err := floatInt(x.Float())
		return n, "decimal", err
	}
	return 0, TypeName(v), fmt.Errorf("want an integer, got %s", TypeName(v))
}

func floatInt(f float64) (int64, error) {
	switch {
	case math.IsNaN(f) || math.IsInf(f, 0):
		return 0, fmt.Errorf("%v is not a number", f)
	case f != math.Trunc(f):
		return 0, fmt.Errorf("%v is not a whole number", f)
	case f >= math.MaxInt64 || f < math.MinInt64:
		return 0, fmt.Errorf("%v is out of range", f)
	}
	return int64(f), nil
}

func decimal(s string) (int64, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		if len(s) > 40 {
			s = s[:40] + "…"
		}
		return 0, fmt.Errorf("%q is not a decimal integer", s)
	}
	return n, nil
}

// textValue reads a string or byte-array header.
func Text(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case []byte:
		return string(x), nil
	}
	return "", fmt.Errorf("want a string, got %s", TypeName(v))
}

// typeName names a header value's type the way this package's docs do.
func TypeName(v any) string {
	if v == nil {
		return "nil"
	}
	if _, ok := Table(v); ok {
		return "table"
	}
	if _, ok := Array(v); ok {
		return "array"
	}
	return reflect.TypeOf(v).String()
}

// hdrTable reads a field table: map[string]any, or a named map type
// with that underlying type (amqp091's amqp.Table).
func Table(v any) (map[string]any, bool) {
	switch t := v.(type) {
	case map[string]any:
		return t, true
	case nil:
		return nil, false
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Map && rv.Type().ConvertibleTo(tableType) {
		return rv.Convert(tableType).Interface().(map[string]any), true
	}
	return nil, false
}

// hdrArray reads a field array: []any or a named type with that underlying type.
func Array(v any) ([]any, bool) {
	switch a := v.(type) {
	case []any:
		return a, true
	case nil:
		return nil, false
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Slice && rv.Type().ConvertibleTo(arrayType) {
		return rv.Convert(arrayType).Interface().([]any), true
	}
	return nil, false
}

// errNegative marks a count below zero.
var ErrNegative = errors.New("negative")

var (
	tableType = reflect.TypeFor[map[string]any]()
	arrayType = reflect.TypeFor[[]any]()
)

// floater is a decimal header value (retry.Decimal).
type floater interface{ Float() float64 }
