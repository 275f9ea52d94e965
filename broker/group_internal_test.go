package broker

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/ladder-tui/ladder/retry"
)

// The grouping writer reads whole records however the dump's writes split
// them, and skips the header line.
func TestGroupWriterReadsRecordsAcrossWrites(t *testing.T) {
	ms := make([]Message, 50)
	for i := range ms {
		ms[i] = Message{Position: i, Headers: retry.Headers{"x-last-error": fmt.Sprintf("order A-%d rejected (%d)", i, i%2)}}
		DecodeMessage(&ms[i], nil, 0, nil, nil)
	}
	var dump bytes.Buffer
	dump.WriteString(`{"ladder_dump":1,"vhost":"/","queue":"q"}` + "\n")
	for i := range ms {
		ms[i].Body = []byte("{}")
		line, err := MarshalRecord(RecordOf(&ms[i]), false)
		if err != nil {
			t.Fatal(err)
		}
		dump.Write(append(line, '\n'))
	}
	for _, chunk := range []int{1, 7, 4096, dump.Len()} {
		w := &groupWriter{g: NewGrouper(GroupError), keep: 2, preview: 16}
		b := dump.Bytes()
		for len(b) > 0 {
			n := min(chunk, len(b))
			if _, err := w.Write(b[:n]); err != nil {
				t.Fatalf("chunk %d: %v", chunk, err)
			}
			b = b[n:]
		}
		if w.g.Len() != 50 || len(w.kept) != 2 || w.kept[1].Position != 1 {
			t.Fatalf("chunk %d: grouped %d, kept %d", chunk, w.g.Len(), len(w.kept))
		}
		if got := w.g.Groups(); len(got) != len(GroupMessages(ms, GroupError)) {
			t.Fatalf("chunk %d: %d groups", chunk, len(got))
		}
	}
	w := &groupWriter{g: NewGrouper(GroupError)}
	if _, err := w.Write([]byte("{}\n{not json\n")); err == nil {
		t.Fatal("a broken record was grouped")
	}
}
