package rabbit

import (
	"encoding/json"
	"testing"
	"time"
)

func decodeQueue(t *testing.T, s string) apiQueue {
	t.Helper()
	var q apiQueue
	if err := json.Unmarshal([]byte(s), &q); err != nil {
		t.Fatal(err)
	}
	return q
}

func TestRatesPreferServerRates(t *testing.T) {
	q := decodeQueue(t, `{"name":"q","messages":10,"message_stats":{"publish":100,"publish_details":{"rate":4.5},"ack":90,"ack_details":{"rate":4.0},"redeliver":3,"redeliver_details":{"rate":0.5}}}`)
	_, c := adaptQueue(q)
	r := rates(q, c, queueCounters{}, false, 0)
	if !r.Known || r.Publish != 4.5 || r.Ack != 4.0 || r.Redeliver != 0.5 || r.NetKnown {
		t.Fatalf("%+v", r)
	}
}

// Stats lag or are disabled: the counters' deltas between polls give rates.
func TestRatesFromCounterDeltas(t *testing.T) {
	prevQ := decodeQueue(t, `{"name":"q","messages":10,"message_stats":{"publish":100,"deliver_get":80,"ack":70,"redeliver":5}}`)
	curQ := decodeQueue(t, `{"name":"q","messages":30,"message_stats":{"publish":140,"deliver_get":100,"ack":90,"redeliver":25}}`)
	_, prev := adaptQueue(prevQ)
	_, cur := adaptQueue(curQ)
	r := rates(curQ, cur, prev, true, 2*time.Second)
	if !r.Known || r.Publish != 20 || r.Deliver != 10 || r.Ack != 10 || r.Redeliver != 10 {
		t.Fatalf("%+v", r)
	}
	if !r.NetKnown || r.Net != 10 {
		t.Fatalf("net %+v", r)
	}
	// A restarted node resets counters: no negative rates.
	reset := decodeQueue(t, `{"name":"q","messages":0,"message_stats":{"publish":1}}`)
	_, rc := adaptQueue(reset)
	if r := rates(reset, rc, cur, true, time.Second); r.Publish != 0 {
		t.Fatalf("after reset %+v", r)
	}
}

func TestRatesUnknownWithoutStats(t *testing.T) {
	q := decodeQueue(t, `{"name":"q","messages":3}`)
	_, c := adaptQueue(q)
	if r := rates(q, c, c, true, time.Second); r.Known || !r.NetKnown || r.Net != 0 {
		t.Fatalf("%+v", r)
	}
}

func TestAdaptQueueReadsFieldsRabbitHoleLacks(t *testing.T) {
	q, _ := adaptQueue(decodeQueue(t, `{"name":"q","type":"quorum","effective_policy_definition":{"message-ttl":5000},"head_message_timestamp":1764500000,"messages_ready":2,"messages_unacknowledged":1,"messages":3}`))
	if q.Type != "quorum" || q.Policy["message-ttl"] != float64(5000) || q.HeadMessageTimestamp.Unix() != 1764500000 || q.Ready != 2 || q.Unacked != 1 {
		t.Fatalf("%+v", q)
	}
}
