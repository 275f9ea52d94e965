package present

import (
	"testing"

	"github.com/ladder-tui/ladder/internal/termtext"
)

func TestFitCause(t *testing.T) {
	const timedOut = `org.springframework.web.client.ResourceAccessException: I/O error on POST request for "…": Connect timed out after <n> (request-id <uuid>); nested exception is java.net.SocketTimeoutException: Connect timed out`
	const refused = `org.springframework.web.client.ResourceAccessException: I/O error on POST request for "…": Connection refused; nested exception is java.net.ConnectException: Connection refused`
	for _, tc := range []struct {
		key  string
		w    int
		want string
	}{
		{"Order <id> rejected", 40, "Order <id> rejected"},
		// 80 columns leave the key about 60: the type's name and both ends
		// of the message.
		{timedOut, 60, "o.s.w.c.ResourceAccessException: I/O error on POST …imed out"},
		{refused, 60, "o.s.w.c.ResourceAccessException: I/O error on POST … refused"},
		// Narrower: the type's name is cut from the left, the message keeps
		// 16 cells and both its ends.
		{timedOut, 40, "…sourceAccessException: I/O error …d out"},
		{refused, 40, "…sourceAccessException: I/O error …fused"},
		// Room for the whole type.
		{"java.net.SocketTimeoutException: Connect timed out after <n> while reading the response", 60,
			"j.n.SocketTimeoutException: Connect timed out aft…e response"},
		{"TypeError: Cannot read properties of undefined (reading '…')", 40, "TypeError: Cannot read propert…ding '…')"},
		// A type alone keeps its name.
		{"org.springframework.amqp.AmqpRejectAndDontRequeueException", 30, "…RejectAndDontRequeueException"},
		{"org.springframework.amqp.AmqpRejectAndDontRequeueException", 40, "o.s.a.AmqpRejectAndDontRequeueException"},
		// No type: the middle goes.
		{"could not reach the ledger service within the deadline, giving up", 30, "could not reach the …giving up"},
		{"short", 3, "sh…"},
		{"x", 0, ""},
	} {
		got := FitCause(tc.key, tc.w)
		if got != tc.want {
			t.Errorf("FitCause(%.30q…, %d) = %q, want %q", tc.key, tc.w, got, tc.want)
		}
		if termtext.Width(got) > tc.w {
			t.Errorf("FitCause(%.30q…, %d) is %d cells", tc.key, tc.w, termtext.Width(got))
		}
	}
	// The two causes of one type read differently however narrow.
	for _, w := range []int{30, 40, 60} {
		if FitCause(timedOut, w) == FitCause(refused, w) {
			t.Errorf("two causes of one type read the same at %d cells", w)
		}
	}
}

func TestShortType(t *testing.T) {
	for in, want := range map[string]string{
		"org.springframework.web.client.ResourceAccessException": "o.s.w.c.ResourceAccessException",
		"com.acme.Outer$InnerException":                          "c.a.Outer$InnerException",
		"TypeError":                                              "TypeError",
	} {
		if got := ShortType(in); got != want {
			t.Errorf("ShortType(%q) = %q, want %q", in, got, want)
		}
	}
}

// A queue name is no type: cut in the middle, never to initials.
func TestFitGroupKey(t *testing.T) {
	if got := FitGroupKey("Billing.Payments.DeadLetters", "queue", 20); got != "Billing.Payme…etters" {
		t.Errorf("queue key: %q", got)
	}
	if got := FitGroupKey("org.acme.BillingException: card declined for order <id> at the gateway", "error", 40); got != "o.a.BillingException: card decline…teway" {
		t.Errorf("error key: %q", got)
	}
}
