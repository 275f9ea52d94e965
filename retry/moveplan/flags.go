package moveplan

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// What a move or replay takes as text, read one way for every face: the
// command line's flags and the terminal UI's dialog call these, so a rate
// or a --where line means the same wherever it is typed.

// ParseRate reads a publish rate: N (a second), N/s or N/m ("" is no
// limit, 0). It returns messages a second.
func ParseRate(s string) (float64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	num, per := s, time.Second
	if n, unit, ok := strings.Cut(s, "/"); ok {
		num = n
		switch unit {
		case "s":
		case "m", "min":
			per = time.Minute
		default:
			return 0, fmt.Errorf("--rate %q: want N/s or N/m", s)
		}
	}
	n, err := strconv.ParseFloat(num, 64)
	if err != nil || n <= 0 || math.IsNaN(n) || math.IsInf(n, 0) {
		// NaN and Inf parse, and read as "no limit" further on.
		return 0, fmt.Errorf("--rate %q: want a positive number of messages, e.g. 50/s", s)
	}
	return n / per.Seconds(), nil
}

// CheckMaxMoves refuses a negative loop guard (--max-moves): 0 is none.
func CheckMaxMoves(n int) error {
	if n < 0 {
		return fmt.Errorf("--max-moves %d: want 0 (no guard) or more", n)
	}
	return nil
}

// ParseMaxMoves reads a typed loop guard ("" is none, as 0 is).
func ParseMaxMoves(s string) (int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("--max-moves %q: want 0 (no guard) or more", s)
	}
	return n, CheckMaxMoves(n)
}

// ParseWhereLine reads --where expressions typed on one line (the terminal
// UI's w filter and its move dialog): split as SplitWhere splits, then
// read as ParseWhere reads the command line's.
func ParseWhereLine(s string) (Where, error) {
	words, err := SplitWhere(s)
	if err != nil {
		return Where{}, err
	}
	return ParseWhere(words)
}

// SplitWhere splits a line into --where expressions as a shell splits
// arguments, so one can hold a space: spaces separate them, except inside
// '…' (taken as it is) or "…" (where \" is a quote and \\ a backslash).
// A backslash anywhere else is itself: regular expressions keep theirs
// (error~\d+).
func SplitWhere(s string) ([]string, error) {
	var out []string
	var cur strings.Builder
	in := false // inside a word
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		case c == '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return nil, fmt.Errorf("--where: a ' is not closed: %s", s[i:])
			}
			cur.WriteString(s[i+1 : i+1+end])
			i += end + 1
			in = true
		case c == '"':
			j := i + 1
			for ; j < len(s) && s[j] != '"'; j++ {
				if s[j] == '\\' && j+1 < len(s) && (s[j+1] == '"' || s[j+1] == '\\') {
					j++
				}
				cur.WriteByte(s[j])
			}
			if j >= len(s) {
				return nil, fmt.Errorf(`--where: a " is not closed: %s`, s[i:])
			}
			i = j
			in = true
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out, nil
}
