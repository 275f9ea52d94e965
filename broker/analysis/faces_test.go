package analysis

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The faces draw what the analysis found and compute none of it (issue
// 32: the TUI's home model and topology each added findings of their own,
// and disagreed). This walks every non-test Go file of the faces — the
// TUI, the commands, ladder serve — for the calls that make a finding, a
// rate, a trend or a drain.
func TestFacesComputeNoFindingRateOrDrain(t *testing.T) {
	forbidden := regexp.MustCompile(`topology\.(Findings|FindingsAt|Inflow|Discover|DLQGrowingFinding|HoLBlockedFinding|DeadLetterQueues|HoL)\(` +
		`|analysis\.(Analyze|Trends|NewHistory)\(` +
		`|\.(NetRateOver|NetRate|Growth|Quiet)\(` +
		`|(^|[^\]])topology\.Finding\{`)
	for _, dir := range []string{"../../ui", "../../internal/cli", "../../internal/sshserve"} {
		err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for i, line := range strings.Split(string(b), "\n") {
				code, _, _ := strings.Cut(line, "//")
				if m := forbidden.FindString(code); m != "" {
					t.Errorf("%s:%d computes what the analysis gives (%s): %s", path, i+1, m, strings.TrimSpace(line))
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
