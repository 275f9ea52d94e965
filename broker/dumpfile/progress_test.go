package dumpfile

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Each publish of a line left unanswered (no done, no failed before the
// line is sent again or the file ends) may have left a copy on the broker.
func TestReadProgressCountsEachUnansweredPublish(t *testing.T) {
	head := Header{Queue: "q", DumpedAt: time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)}
	p := filepath.Join(t.TempDir(), "d.jsonl.progress")
	lines := `{"run":"a","lock":{"pid":1,"host":"h","started":"2024-01-02T03:04:05Z"}}
{"dump":{"queue":"q","dumped_at":"2024-01-02T03:04:05Z"}}
{"run":"a","sent":[2,3,4,5]}
{"done":[2]}
{"run":"b","sent":[3,4,5]}
{"done":[4],"failed":[5]}
{"run":"c","sent":[3,5,6]}
{"done":[5]}
{"run":"d","sent":[7]}
{"fail`
	if err := os.WriteFile(p, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := ReadProgress(p, head)
	if err != nil {
		t.Fatal(err)
	}
	// 3: sent three times, never answered; 5: once in doubt, then failed,
	// then done (a later run published it: nothing left to count); 6 and
	// 7: once each (7's answer was torn off).
	want := map[int]int{3: 3, 6: 1, 7: 1}
	if len(st.Doubt) != len(want) {
		t.Fatalf("doubt %v, want %v", st.Doubt, want)
	}
	for l, n := range want {
		if st.Doubt[l] != n {
			t.Errorf("line %d: %d unanswered, want %d", l, st.Doubt[l], n)
		}
	}
	if !st.Exists || !st.Done[2] || !st.Done[4] || !st.Done[5] || st.Done[3] {
		t.Errorf("%+v", st)
	}
	// A file holding only a lock record (a run that stopped before it
	// published) is no earlier replay.
	only := filepath.Join(t.TempDir(), "e.progress")
	os.WriteFile(only, []byte(`{"run":"a","lock":{"pid":1,"host":"h","started":"2024-01-02T03:04:05Z"}}`+"\n"), 0o600)
	if st, err := ReadProgress(only, head); err != nil || st.Exists {
		t.Errorf("lock record alone: %+v %v", st, err)
	}
}
