package usecase

import (
	"fmt"
	"testing"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/decode"
	"github.com/ladder-tui/ladder/retry"
)

// The grouping writer groups each message Dump hands it as it is, keeps the
// first few with a copy of their bodies' previews (not the browse's whole
// body), and takes the header line without grouping it.
func TestGroupWriterGroupsMessagesAsHandedOn(t *testing.T) {
	ms := make([]broker.Message, 50)
	body := []byte("0123456789abcdefghijklmnopqrstuvwxyz")
	for i := range ms {
		ms[i] = broker.Message{Position: i, Headers: retry.Headers{"x-last-error": fmt.Sprintf("order A-%d rejected (%d)", i, i%2)}}
		decode.DecodeMessage(&ms[i], body, len(body), nil, nil)
	}
	w := &groupWriter{g: NewGrouper(GroupError), keep: 2, preview: 16}
	if _, err := w.Write([]byte(`{"ladder_dump":1,"vhost":"/","queue":"q"}` + "\n")); err != nil {
		t.Fatal(err)
	}
	var _ MessageWriter = w // Dump hands it messages, not lines
	for i := range ms {
		m := ms[i] // the browse's own, the writer's only during the call
		if err := w.WriteMessage(&m); err != nil {
			t.Fatal(err)
		}
		m.Body[0] = '!' // a browse may reuse what it handed on
	}
	if w.g.Len() != 50 || len(w.kept) != 2 || w.kept[1].Position != 1 {
		t.Fatalf("grouped %d, kept %d", w.g.Len(), len(w.kept))
	}
	if got := w.g.Groups(); len(got) != len(GroupMessages(ms, GroupError)) {
		t.Fatalf("%d groups", len(got))
	}
	k := w.kept[0]
	if string(k.Body) != "0123456789abcdef" || !k.BodyTruncated || k.BodySize != len(body) || k.BodyPreview != "0123456789abcdef" {
		t.Fatalf("kept body %q (truncated %v, size %d, preview %q)", k.Body, k.BodyTruncated, k.BodySize, k.BodyPreview)
	}
}
