package files

import (
	"fmt"
	"strconv"
	"strings"
)

// Size is a byte count given on a command line (--session-quota 1GiB): a
// number of bytes, with B, KiB, MiB, GiB or TiB (powers of 1024) or KB, MB,
// GB or TB (powers of 1000). It is a pflag.Value.
type Size int64

var units = []struct {
	suffix string
	n      int64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"B", 1},
}

// ParseSize reads a Size.
func ParseSize(s string) (Size, error) {
	t := strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range units {
		if strings.HasSuffix(strings.ToUpper(t), strings.ToUpper(u.suffix)) {
			t, mult = strings.TrimSpace(t[:len(t)-len(u.suffix)]), u.n
			break
		}
	}
	n, err := strconv.ParseFloat(t, 64)
	if err != nil || n < 0 || n*float64(mult) > 1<<62 {
		return 0, fmt.Errorf("%q: want a size such as 1GiB, 500MiB or 0", s)
	}
	return Size(n * float64(mult)), nil
}

// FormatSize writes n bytes in the largest binary unit it reaches.
func FormatSize(n int64) string {
	for _, u := range []struct {
		suffix string
		n      int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.n {
			if n%u.n == 0 {
				return strconv.FormatInt(n/u.n, 10) + " " + u.suffix
			}
			return strconv.FormatFloat(float64(n)/float64(u.n), 'f', 1, 64) + " " + u.suffix
		}
	}
	return strconv.FormatInt(n, 10) + " B"
}

func (s *Size) String() string { return FormatSize(int64(*s)) }

// Set is pflag.Value's.
func (s *Size) Set(v string) error {
	n, err := ParseSize(v)
	if err != nil {
		return err
	}
	*s = n
	return nil
}

// Type is pflag.Value's.
func (s *Size) Type() string { return "size" }
