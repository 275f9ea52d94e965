package moveplan

import (
	"github.com/ladder-tui/ladder/retry"
	"strings"
	"testing"
	"time"
)

func whereSubjects(now time.Time) map[string]Subject {
	return map[string]Subject{
		"rejected-old": {
			Deaths:  []retry.Death{{Queue: "orders.process", Reason: retry.ReasonRejected, Time: now.Add(-2 * time.Hour)}, {Queue: "orders.wait.5s", Reason: retry.ReasonExpired}},
			Origin:  &retry.Origin{Exchange: "orders.topic", RoutingKey: "orders.created"},
			Retry:   retry.RetryState{Count: 3, LastError: "card declined: insufficient funds"},
			Headers: retry.Headers{"tenant": "acme", "x-retry-count": int32(3), "blob": []byte("bin"), "n": int16(7)},
			Body:    []byte(`{"order":"A-1"}`),
		},
		"expired-new": {
			Deaths:  []retry.Death{{Queue: "payments.wait", Reason: retry.ReasonExpired, Time: now.Add(-time.Minute)}},
			Origin:  &retry.Origin{Exchange: "payments", RoutingKey: "payments.authorize"},
			Retry:   retry.RetryState{Count: 1, LastError: "timeout talking to bank"},
			Headers: retry.Headers{"tenant": "globex"},
			Body:    []byte{0xff, 0xfe},
		},
		"never-died": {
			Headers:   retry.Headers{},
			Timestamp: now.Add(-30 * time.Minute),
			Body:      []byte("plain text"),
		},
	}
}

// Every expression kind chooses exactly the messages it names.
func TestWhereChoosesExactlyTheIntendedMessages(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	subjects := whereSubjects(now)
	for _, c := range []struct {
		exprs []string
		want  string // sorted names, space separated
	}{
		{[]string{"reason=rejected"}, "rejected-old"},
		{[]string{"reason=expired"}, "expired-new"},
		{[]string{"queue=orders.wait.5s"}, "rejected-old"},
		{[]string{"queue=payments.wait"}, "expired-new"},
		{[]string{"origin=orders.topic"}, "rejected-old"},
		{[]string{"origin=payments:payments.authorize"}, "expired-new"},
		{[]string{"origin=payments:other"}, ""},
		{[]string{"error~(?i)DECLINED"}, "rejected-old"},
		{[]string{"error~bank|funds"}, "expired-new rejected-old"},
		{[]string{"header:tenant=acme"}, "rejected-old"},
		{[]string{"header:tenant~^g"}, "expired-new"},
		{[]string{"header:n=7"}, "rejected-old"},
		{[]string{"header:blob=bin"}, "rejected-old"},
		{[]string{"body~order"}, "rejected-old"},
		{[]string{"body~."}, "never-died rejected-old"}, // a binary body is never matched
		{[]string{"age>1h"}, "rejected-old"},
		{[]string{"age<45m"}, "expired-new never-died"},
		{[]string{"retries>=3"}, "rejected-old"},
		{[]string{"retries<3"}, "expired-new never-died"},
		{[]string{"retries=1"}, "expired-new"},
		{[]string{"retries>0", "reason=expired"}, "expired-new"},
		{nil, "expired-new never-died rejected-old"},
	} {
		w, err := ParseWhere(c.exprs)
		if err != nil {
			t.Fatalf("%v: %v", c.exprs, err)
		}
		var got []string
		for _, name := range []string{"expired-new", "never-died", "rejected-old"} {
			if w.Match(subjects[name], now) {
				got = append(got, name)
			}
		}
		if strings.Join(got, " ") != c.want {
			t.Errorf("%v chose %v, want %q", c.exprs, got, c.want)
		}
	}
}

func TestWhereRefusesBadExpressionsNamingThem(t *testing.T) {
	for expr, want := range map[string]string{
		"reason=lost":   `reason "lost"`,
		"age>soon":      `age "soon"`,
		"retries>=many": `retries "many"`,
		"error~(":       "regular expression",
		"colour=red":    `unknown field "colour"`,
		"queue~x":       `queue does not take "~"`,
		"header:":       "header:NAME",
		"nonsense":      "want FIELD=VALUE",
	} {
		_, err := ParseWhere([]string{expr})
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), `--where "`+expr+`"`) {
			t.Errorf("%q: %v, want %q", expr, err, want)
		}
	}
}
