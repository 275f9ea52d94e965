package rabbit

import (
	"context"
	"errors"
	"net"
	"reflect"
	"strings"
	"testing"

	"github.com/ladder-tui/ladder/broker"
)

func TestSplitURLs(t *testing.T) {
	for _, tt := range []struct {
		raw  string
		want []string
	}{
		{"", nil},
		{"amqp://h/", []string{"amqp://h/"}},
		{"amqp://a:5672/,amqp://b:5672/, amqps://c/", []string{"amqp://a:5672/", "amqp://b:5672/", "amqps://c/"}},
		// A comma in a password is no separator.
		{"amqp://u:p,w@a/,amqp://u:p,x@b/", []string{"amqp://u:p,w@a/", "amqp://u:p,x@b/"}},
	} {
		if got := splitURLs(tt.raw, "amqp", "amqps"); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("splitURLs(%q) = %q, want %q", tt.raw, got, tt.want)
		}
	}
}

func TestResolveSeveralAddresses(t *testing.T) {
	r, err := Config{AMQPURL: "amqp://u:pw@n1:5672/v,amqp://u:pw@n2:5673/v"}.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Addresses) != 2 || r.AMQP.Host != "n1:5672" || r.Addresses[1].AMQP.Host != "n2:5673" ||
		r.Addresses[0].APIURL.Host != "n1:15672" || r.Addresses[1].APIURL.Host != "n2:15672" || r.Addresses[1].Vhost != "v" {
		t.Fatalf("addresses: %+v", r.Addresses)
	}
	r, err = Config{AMQPURL: "amqp://n1/,amqp://n2/", APIURL: "http://api1:1,http://api2:2"}.Resolve()
	if err != nil || r.Addresses[1].APIURL.Host != "api2:2" {
		t.Fatalf("paired API URLs: %v %+v", err, r)
	}
	r, err = Config{AMQPURL: "amqp://n1/,amqp://n2/", APIURL: "http://lb:15672"}.Resolve()
	if err != nil || r.Addresses[0].APIURL.Host != "lb:15672" || r.Addresses[1].APIURL.Host != "lb:15672" {
		t.Fatalf("one shared API URL: %v %+v", err, r)
	}
	if _, err := (Config{AMQPURL: "amqp://n1/,amqp://n2/,amqp://n3/", APIURL: "http://a,http://b"}).Resolve(); err == nil || !strings.Contains(err.Error(), "--api-url lists 2 URLs for 3 AMQP URLs") {
		t.Errorf("mismatched lists: %v", err)
	}
	if _, err := (Config{AMQPURL: "amqp://u:s3cret@n1/,amqp://u:s3cret@:5672/"}).Resolve(); err == nil || !strings.Contains(err.Error(), "address 2 of 2") || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("a bad second URL: %v", err)
	}
}

// Reach takes the first address whose AMQP port and API accept a
// connection, and says why it passed over the others.
func TestReachPicksTheFirstThatAnswers(t *testing.T) {
	up := func() string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
		return l.Addr().String()
	}
	down := func() string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		return addr
	}
	amqpUp, apiUp, amqpDown := up(), up(), down()
	r, err := Config{AMQPURL: "amqp://" + amqpDown + "/,amqp://" + amqpUp + "/", APIURL: "http://" + apiUp}.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	got, passed, err := Reach(context.Background(), r)
	if err != nil || got.Address() != amqpUp || len(passed) != 1 || !strings.Contains(passed[0], amqpDown+" (AMQP): connection refused") {
		t.Fatalf("Reach = %v, %q, %v; want %s, passing over %s", got, passed, err, amqpUp, amqpDown)
	}
	if len(got.Addresses) != 2 {
		t.Errorf("the address reached knows %d addresses, want both (a move goes on through the others)", len(got.Addresses))
	}
	r, err = Config{AMQPURL: "amqp://" + amqpUp + "/,amqp://" + amqpUp + "/", APIURL: "http://" + down()}.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	if _, passed, err := Reach(context.Background(), r); !errors.Is(err, broker.ErrUnreachable) || len(passed) != 2 || !strings.Contains(err.Error(), "(management API): connection refused") {
		t.Errorf("no API answers: %v %q", err, passed)
	}
	// One address: untouched, no probe.
	one, _ := Config{AMQPURL: "amqp://" + amqpDown + "/"}.Resolve()
	if got, passed, err := Reach(context.Background(), one); got != one || passed != nil || err != nil {
		t.Errorf("one address: %v %v %v", got, passed, err)
	}
}
