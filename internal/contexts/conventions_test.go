package contexts

import (
	"strings"
	"testing"

	"github.com/ladder-tui/ladder/retry"
)

// A declared convention becomes the table's first; a wrong one is a clear
// one-line error naming the file, the convention and the key.
func TestDeclaredConventions(t *testing.T) {
	f, err := parse("/etc/ladder.toml", []byte(`
[conventions.acme]
count        = "header:x-acme-tries"
error        = ["body:meta.lastError", "header:x-acme-error"]
origin-queue = "header:x-acme-queue"
error-queues = ["{queue}.graveyard"]
`))
	if err != nil {
		t.Fatal(err)
	}
	all := f.Table.All()
	if len(all) != len(retry.Conventions())+1 || all[0].Name != "acme" || all[0].Source != "config file /etc/ladder.toml" || all[0].Short != "acm" {
		t.Fatalf("table starts %+v", all[0])
	}
	st := f.Table.ReadMessage(retry.Headers{"x-acme-tries": int32(4), "x-acme-queue": "billing"}, []byte(`{"meta":{"lastError":"declined"}}`), nil)
	if st.Count != 4 || st.LastError != "declined" || st.ErrorSource != "body meta.lastError" || st.FailedQueue != "billing" || len(st.Guessed) != 0 {
		t.Errorf("read %+v", st)
	}

	for _, tc := range []struct{ file, want string }{
		{"[conventions.x]\ncount = \"x-tries\"\n", `convention "x": count "x-tries": want "header:NAME"`},
		{"[conventions.x]\norigin-queue = \"body:queue\"\n", `origin-queue "body:queue": origins are read from headers only`},
		{"[conventions.x]\ncount = 3\n", "want a path"},
		{"[conventions.x]\nshort = \"acme\"\ncount = \"header:a\"\n", "three letters at most"},
		{"[conventions.x]\nmarks = [\"a\"]\n", "nothing to read"},
		{"[conventions.Celery]\ncount = \"header:a\"\n", "exists already"},
		{"[conventions.x]\ncount = \"header:a\"\nbogus = 1\n", `unknown key "conventions.x.bogus" (a convention's keys`},
		{"[conventions.x]\nerror-queues = [\"{queue}.{queue}\"]\n", "{queue} at most once"},
	} {
		_, err := parse("/etc/ladder.toml", []byte(tc.file))
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "config file /etc/ladder.toml: ") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v, want one line with %q", tc.file, err, tc.want)
		}
	}
}
