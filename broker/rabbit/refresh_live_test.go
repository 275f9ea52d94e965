package rabbit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/broker/rabbit"
)

// Steady refreshes (Prometheus over the last full read) give the depths
// the management API gives, once both caught up with the publishes.
func TestSteadyRefreshDepthsMatchManagement(t *testing.T) {
	t.Parallel() // slow, and on names of its own
	r := brokertest.OwnVhost(t)
	ctx := context.Background()
	ch := brokertest.Channel(t, r, "test steady refresh")
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"work", "work.retry"} {
		if _, err := ch.QueueDeclare(q, true, false, false, false, nil); err != nil {
			t.Fatal(err)
		}
	}
	m, err := rabbit.NewManagement(r)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if _, err := m.Vhost(ctx, r.Vhost); err != nil { // the first, full read
		t.Fatal(err)
	}
	msgs := make([]amqp.Publishing, 7)
	for i := range msgs {
		msgs[i] = amqp.Publishing{Body: []byte("x")}
	}
	if err := brokertest.PublishConfirmed(ctx, ch, "", "work", msgs); err != nil {
		t.Fatal(err)
	}
	api := func(q string) int64 {
		req, _ := http.NewRequest(http.MethodGet, r.APIURL.String()+"/api/queues/"+url.PathEscape(r.Vhost)+"/"+q+"?columns=messages", nil)
		if err := r.SetAPIAuth(req); err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var row struct {
			Messages int64 `json:"messages"`
		}
		json.NewDecoder(resp.Body).Decode(&row)
		return row.Messages
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		var got []string
		for i := 0; i < 2; i++ {
			v, err := m.Vhost(ctx, r.Vhost)
			if err != nil {
				t.Fatal(err)
			}
			for _, q := range v.Queues {
				got = append(got, fmt.Sprintf("%s=%d/%d", q.Name, q.Messages, q.Ready))
			}
		}
		want := fmt.Sprintf("work=%d/%d", api("work"), api("work"))
		if api("work") == 7 && len(got) == 4 && got[0] == want && got[2] == want && got[1] == "work.retry=0/0" && got[3] == got[1] {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("two refreshes give %v, the API work=%d (want 7)", got, api("work"))
		}
		time.Sleep(500 * time.Millisecond)
	}
}
