package retry

import "testing"

// The conventions' names come first with their framework, the common
// endings after, none twice; NamedAfter reads a name back to its queue.
func TestErrorQueueNamings(t *testing.T) {
	ns := ErrorQueueNamings()
	seen := map[string]bool{}
	var spring, common bool
	for _, n := range ns {
		if seen[n.Pattern] {
			t.Errorf("%s twice", n.Pattern)
		}
		seen[n.Pattern] = true
		switch n.Pattern {
		case "{queue}.dlq":
			spring = n.Framework == "Spring AMQP / Spring Cloud Stream"
		case "{queue}.failed":
			common = n.Framework == ""
		}
	}
	if !spring || !common {
		t.Errorf("{queue}.dlq is Spring's %v, {queue}.failed common %v: %+v", spring, common, ns)
	}
	for _, tt := range []struct{ pattern, name, want string }{
		{"{queue}.failure", "orders.failure", "orders"},
		{"{queue}.failure", "orders.failed", ""},
		{"{queue}.failure", ".failure", ""},
		{"{queue}_error", "a_b_error", "a_b"},
	} {
		if got := (QueueNaming{Pattern: tt.pattern}).NamedAfter(tt.name); got != tt.want {
			t.Errorf("%s of %s: %q, want %q", tt.pattern, tt.name, got, tt.want)
		}
	}
}
