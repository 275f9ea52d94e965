package sim

import (
	"github.com/ladder-tui/ladder/retry"
)

// cloneTable deep-copies a field table so that callers (and the UI) can
// never change the simulation's state through what it hands out.
func cloneTable(t map[string]any) map[string]any {
	if t == nil {
		return nil
	}
	out := make(map[string]any, len(t))
	for k, v := range t {
		out[k] = cloneValue(v)
	}
	return out
}

func cloneValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return cloneTable(x)
	case retry.Headers:
		return retry.Headers(cloneTable(x))
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = cloneValue(e)
		}
		return out
	case []byte:
		return append([]byte(nil), x...)
	}
	return v
}

// cloneHeaders deep-copies headers; nil becomes an empty table.
func cloneHeaders(h retry.Headers) retry.Headers {
	out := retry.Headers(cloneTable(h))
	if out == nil {
		out = retry.Headers{}
	}
	return out
}
