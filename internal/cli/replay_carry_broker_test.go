package cli

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ladder-tui/ladder/broker/brokertest"
	"github.com/ladder-tui/ladder/retry/topology"
)

// Dead in main, dumped with --consume, replayed to its origin, dead again:
// peek's JSON counts both deaths on every broker version. 4.x restarts
// x-death on a re-published message, so the first death is the one ladder
// carried in x-ladder-deaths ("carried": true); 3.x keeps x-death itself,
// so nothing is carried and nothing counted twice.
func TestDeathsAddUpAcrossADumpAndReplay(t *testing.T) {
	r := brokerEnv(t)
	dlq := testQueue(t, r, "dlq", 0, nil)
	main := testQueue(t, r, "main", 0, amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": dlq})
	ch := brokertest.Channel(t, r, "test carry")
	reject := func() {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			d, ok, err := ch.Get(main, false)
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				if err := d.Reject(false); err != nil {
					t.Fatal(err)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("nothing to reject in main")
			}
			time.Sleep(20 * time.Millisecond)
		}
		for depthOf(t, r, dlq) < 1 {
			if time.Now().After(deadline) {
				t.Fatal("the rejected message never reached the DLQ")
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	if err := ch.PublishWithContext(context.Background(), "", main, false, false, amqp.Publishing{MessageId: "twice", Body: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	reject()
	file := filepath.Join(t.TempDir(), "dlq.jsonl")
	if code, _, errOut := runLadder(t, "dump", dlq, "--out", file, "--consume", "--yes"); code != exitOK {
		t.Fatalf("dump --consume: %d %s", code, errOut)
	}
	if code, out, errOut := runLadder(t, "replay", file, "--to", "origin", "--yes"); code != exitOK {
		t.Fatalf("replay: %d %s %s", code, errOut, out)
	}
	reject()

	code, out, errOut := runLadder(t, "peek", dlq, "-n", "1", "-o", "json")
	if code != exitOK {
		t.Fatalf("peek: %d %s", code, errOut)
	}
	// Read as raw JSON: "carried" is part of the contract, not only the
	// struct's field.
	var res struct {
		Messages []struct {
			Deaths []map[string]any `json:"deaths"`
		} `json:"messages"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Messages) != 1 {
		t.Fatalf("peek JSON: %v\n%s", err, out)
	}
	deaths := res.Messages[0].Deaths
	version := liveVersion(t, r)
	var inMain float64
	carried := 0
	for _, d := range deaths {
		if d["queue"] == main {
			inMain += d["count"].(float64)
		}
		if c, ok := d["carried"]; ok {
			if c != true {
				t.Errorf(`"carried" is %v; it is true or absent`, c)
			}
			carried++
		}
	}
	if inMain != 2 {
		t.Errorf("broker %s: died in main %v times by peek's deaths, want 2: %v", version, inMain, deaths)
	}
	if topology.CarriesDeaths(version) {
		// The first death, carried by the replay; the second, the broker's.
		if len(deaths) != 2 || carried != 1 || deaths[1]["carried"] != true || deaths[0]["carried"] != nil {
			t.Errorf("broker %s: want the broker's death then one carried, got %v", version, deaths)
		}
	} else if carried != 0 || len(deaths) != 1 {
		// 3.x counts on in its own x-death entry: a carried copy would
		// count the first death twice.
		t.Errorf("broker %s: want one x-death entry (count 2) and nothing carried, got %v", version, deaths)
	}
	t.Logf("broker %s: %v", version, deaths)
}
