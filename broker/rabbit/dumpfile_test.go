package rabbit

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/ladder-tui/ladder/broker/dumpfile"
	"github.com/ladder-tui/ladder/broker/wire"
)

// Every AMQP field type survives a dump line: the same table comes back,
// with the same Go (and so AMQP) types.
func TestDumpRecordKeepsEveryFieldType(t *testing.T) {
	in := everyType()
	in["latin1"] = "caf\xe9" // a longstr is bytes, not always UTF-8
	in["nan"] = float32(0)
	ts := int64(1764500000)
	r := dumpfile.Record{Position: 3, Exchange: "orders.dlx", RoutingKey: "orders.created", Redelivered: true,
		Headers: fromTable(in), Body: []byte{0, 1, 2, 0xff},
		Properties: dumpfile.Properties{ContentType: "application/octet-stream", DeliveryMode: 2, Priority: 4, MessageID: "m-1", Timestamp: &ts, Expiration: "60000"}}
	line, err := dumpfile.MarshalRecord(r, true)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.ContainsRune(line, '\n') {
		t.Fatal("a record spans lines")
	}
	back, err := dumpfile.UnmarshalRecord(line)
	if err != nil {
		t.Fatal(err)
	}
	if out := toTable(back.Headers); !reflect.DeepEqual(out, in) {
		t.Errorf("headers changed:\n in  %#v\n out %#v", in, out)
	}
	if !bytes.Equal(back.Body, r.Body) || back.BodyText || back.Properties.MessageID != "m-1" || *back.Properties.Timestamp != ts || back.RoutingKey != "orders.created" {
		t.Errorf("record changed: %+v", back)
	}
	again, _ := dumpfile.MarshalRecord(back, true)
	if !bytes.Equal(again, line) {
		t.Errorf("not stable:\n%s\n%s", line, again)
	}
	// Text bodies stay readable with --body text.
	r.Body = []byte(`{"order":1}`)
	line, _ = dumpfile.MarshalRecord(r, true)
	if !strings.Contains(string(line), `"body_text":"{\"order\":1}"`) {
		t.Errorf("text body: %s", line)
	}
}

func TestDumpRecordRefusesBadValuesNamingThem(t *testing.T) {
	for line, want := range map[string]string{
		`{"headers":{"n":{"int8":300}},"body":""}`:            `header "n": int8: 300 out of range`,
		`{"headers":{"n":{"float128":1}},"body":""}`:          `unknown type "float128"`,
		`{"headers":{"n":5},"body":""}`:                       `header "n"`,
		`{"headers":{},"body":"!!"}`:                          "body",
		`{"headers":{}}`:                                      `no "body"`,
		`{"headers":{"d":{"decimal":{"scale":1}}},"body":""}`: "decimal",
		`{"headers":{"u":{"uint64":"1"}},"body":""}`:          "uint64 is no AMQP 0-9-1 field type",
	} {
		if _, err := dumpfile.UnmarshalRecord([]byte(line)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", line, err, want)
		}
	}
	deep := strings.Repeat(`{"array":[`, 100) + `{"void":null}` + strings.Repeat(`]}`, 100)
	if _, err := dumpfile.UnmarshalRecord([]byte(`{"headers":{"d":` + deep + `},"body":""}`)); err == nil {
		t.Error("nesting beyond the bound accepted")
	}
	// Names the format cannot keep exactly are refused, not changed.
	for _, r := range []dumpfile.Record{
		{Properties: dumpfile.Properties{MessageID: "id-\xe9"}},
		{RoutingKey: "k\xff"},
		{Headers: map[string]any{"bad\xff": int32(1)}},
		{Headers: map[string]any{"u": uint64(1)}},
	} {
		if _, err := dumpfile.MarshalRecord(r, false); err == nil {
			t.Errorf("%+v written", r)
		}
	}
}

// A dump file is untrusted input: no line makes the decoder panic.
func FuzzUnmarshalRecord(f *testing.F) {
	r := dumpfile.Record{Headers: fromTable(everyType()), Body: []byte("x")}
	line, _ := dumpfile.MarshalRecord(r, false)
	f.Add(line)
	f.Add([]byte(`{"headers":{"a":{"table":{"b":{"array":[{"timestamp":1}]}}}},"body_text":"hi"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		rec, err := dumpfile.UnmarshalRecord(b)
		if err != nil {
			return
		}
		for k, v := range rec.Headers {
			if !wire.PlainHeaderValue(v) {
				t.Fatalf("%s: %T", k, v)
			}
		}
		if _, err := dumpfile.MarshalRecord(rec, false); err != nil {
			t.Fatalf("a read record cannot be written: %v", err)
		}
	})
}
