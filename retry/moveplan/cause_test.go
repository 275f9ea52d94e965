package moveplan

import (
	"github.com/ladder-tui/ladder/retry"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestNormaliseError(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		// ids and numbers
		{"Order A-1 rejected", "Order <id> rejected"},
		{"Order ORD-2024-0001 rejected", "Order <id> rejected"},
		{"ticket #123 closed", "ticket <id> closed"},
		{"user_42 not found", "<id> not found"},
		{"rejected value: -27.87", "rejected value: <n>"},
		{"rejected value [-27.87]; codes [Positive]", "rejected value [<n>]; codes [Positive]"},
		{"line: 1, column: 178", "line: <n>, column: <n>"},
		{"timeout after 30000ms (limit 2.5s, 10MB)", "timeout after <n> (limit <n>, <n>)"},
		{"x=+5 y=-1e-3", "x=<n> y=<n>"},
		{"range 1 - 2", "range <n> - <n>"},
		{"offset 18446744073709551615", "offset <n>"},
		{"version v1.2.3", "version <id>.<n>.<n>"},
		{"in com.acme.v2.Handler", "in com.acme.<id>.Handler"},
		// UUIDs, hex, digests
		{"message 550e8400-e29b-41d4-a716-446655440000 failed", "message <uuid> failed"},
		{"MESSAGE 550E8400-E29B-41D4-A716-446655440000", "MESSAGE <uuid>"},
		{"object 5f2b9c1e3a7d at 0x7ffd5fbff8c8", "object <hex> at <hex>"},
		{"java.lang.Object@1b6d3586", "java.lang.Object@<hex>"},
		{"sha deadbeef", "sha deadbeef"}, // no digit: a word
		// addresses, hosts, times
		{"mail to jane.doe+x@example.co.uk bounced", "mail to <email> bounced"},
		{"connect 10.0.0.17:5432 refused", "connect <ip>:<n> refused"},
		{"connect [fe80:0:0:0:202:b3ff:fe1e:8329]:80", "connect [<ip>]:<n>"},
		{"db-7.internal:5432 is down", "<host>:<n> is down"},
		{"payments:8080 is down", "payments:<n> is down"},
		{"at OrderService.java:42", "at OrderService.java:<n>"},
		{"at 2024-03-01T10:15:30.123Z", "at <time>"},
		{"at 2024-03-01 10:15:30+02:00 ok", "at <time> ok"},
		{"on 2024-03-01 only", "on <date> only"},
		{"at 10:15:30 sharp", "at <time> sharp"},
		// quoted values
		{"Field 'amount' must be positive", "Field '…' must be positive"},
		{`Unknown column "foo" in 'field list'`, `Unknown column "…" in '…'`},
		{"can't parse `x y` here", "can't parse `…` here"},
		{"it’s “smart” and ‘curly’", "it’s “…” and ‘…’"},
		{"users' orders", "users' orders"},
		{"'a' 'b'", "'…' '…'"},
		{"unclosed 'quote here", "unclosed 'quote here"},
		// HTTP statuses stay: they tell causes apart
		{"Request failed with status code 404", "Request failed with status code 404"},
		{"Request failed with status code 503", "Request failed with status code 503"},
		{"404 Not Found: [no body]", "404 Not Found: [no body]"},
		{"HTTP 500 from upstream", "HTTP 500 from upstream"},
		{"status=429 retry later", "status=429 retry later"},
		{"HTTP/1.1 404", "HTTP/<n> <n>"},
		{"got 404 items", "got <n> items"},
		{"A1status 404", "<id> <n>"},
		// white space
		{"  two\n\tlines  ", "two lines"},
		{"", ""},
	} {
		if got := normaliseError(tc.in); got != tc.want {
			t.Errorf("normaliseError(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestErrorKeyGroupsValuesTogether(t *testing.T) {
	same := [][]string{
		{"Order A-1 rejected", "Order A-2 rejected", "Order B-77 rejected"},
		{
			"org.springframework.web.client.ResourceAccessException: I/O error on POST request for \"http://payments:8080/charge/ORD-1\": Connect timed out",
			"org.springframework.web.client.ResourceAccessException: I/O error on POST request for \"http://payments:8080/charge/ORD-99\": Connect timed out",
		},
		{"KeyError: 'customer_17'", "KeyError: 'x'"},
	}
	for _, texts := range same {
		k := errorKey(texts[0])
		for _, s := range texts[1:] {
			if got := errorKey(s); got != k {
				t.Errorf("errorKey(%q) = %q, want %q (as %q)", s, got, k, texts[0])
			}
		}
	}
	if a, b := errorKey("TypeError: x is undefined"), errorKey("RangeError: x is undefined"); a == b {
		t.Errorf("two types, one key %q", a)
	}
}

func TestSplitErrorType(t *testing.T) {
	for _, tc := range []struct {
		in, typ, msg string
		ok           bool
	}{
		{"java.net.SocketTimeoutException: Connect timed out", "java.net.SocketTimeoutException", "Connect timed out", true},
		{"System.InvalidOperationException: Sequence contains no elements", "System.InvalidOperationException", "Sequence contains no elements", true},
		{"com.acme.Outer$InnerException: x", "com.acme.Outer$InnerException", "x", true},
		{"Ns.Outer+Nested: x", "Ns.Outer+Nested", "x", true},
		{"TypeError: Cannot read properties of undefined (reading 'id')", "TypeError", "Cannot read properties of undefined (reading 'id')", true},
		{"requests.exceptions.ConnectionError: HTTPConnectionPool(host='x', port=80)", "requests.exceptions.ConnectionError", "HTTPConnectionPool(host='x', port=80)", true},
		{"java.lang.NullPointerException", "java.lang.NullPointerException", "", true},
		{"KeyError:", "KeyError", "", true},
		{"Order A-1 rejected", "", "", false},
		{"Order: rejected", "", "", false},                 // a capitalised word that is no error type
		{"example.com: connection refused", "", "", false}, // a host: the last part is not capitalised
		{"dial tcp 10.0.0.1:5432: connect: connection refused", "", "", false},
		{"pq: duplicate key", "", "", false},
		{"a..B: x", "", "", false},
		{".Foo: x", "", "", false},
		{"Foo.: x", "", "", false},
	} {
		typ, msg, ok := SplitErrorType(tc.in)
		if typ != tc.typ || msg != tc.msg || ok != tc.ok {
			t.Errorf("SplitErrorType(%q) = %q, %q, %v; want %q, %q, %v", tc.in, typ, msg, ok, tc.typ, tc.msg, tc.ok)
		}
	}
}

// A Spring stack trace as RepublishMessageRecoverer writes it (the outer
// ListenerExecutionFailedException, then the cause whose message is
// x-exception-message).
const springTrace = "org.springframework.amqp.rabbit.support.ListenerExecutionFailedException: Listener method 'public void com.acme.billing.ChargeListener.onCharge(com.acme.billing.Charge)' threw exception\n" +
	"\tat org.springframework.amqp.rabbit.listener.adapter.MessagingMessageListenerAdapter.invokeHandler(MessagingMessageListenerAdapter.java:270)\n" +
	"\tat org.springframework.amqp.rabbit.listener.AbstractMessageListenerContainer.doInvokeListener(AbstractMessageListenerContainer.java:1663)\n" +
	"Caused by: com.acme.billing.CardDeclinedException: card 4111-xxxx declined for order ORD-2024-0007\n" +
	"\tat com.acme.billing.ChargeListener.onCharge(ChargeListener.java:41)\n" +
	"\t... 23 more\n"

func TestCauseOf(t *testing.T) {
	for _, tc := range []struct {
		name           string
		h              retry.Headers
		typ, from, key string
	}{
		{"spring: the type of the cause, the message of x-exception-message",
			retry.Headers{"x-exception-stacktrace": springTrace, "x-exception-message": "card 4111-xxxx declined for order ORD-2024-0007"},
			"com.acme.billing.CardDeclinedException", "x-exception-stacktrace", "com.acme.billing.CardDeclinedException: card <id> declined for order <id>"},
		{"spring without a cause: the first line",
			retry.Headers{"x-exception-stacktrace": "java.lang.IllegalStateException: boom 3\n\tat x.y(Z.java:1)", "x-exception-message": "boom 3"},
			"java.lang.IllegalStateException", "x-exception-stacktrace", "java.lang.IllegalStateException: boom <n>"},
		{"masstransit",
			retry.Headers{"MT-Fault-ExceptionType": "System.TimeoutException", "MT-Fault-Message": "The operation timed out after 00:00:30"},
			"System.TimeoutException", "MT-Fault-ExceptionType", "System.TimeoutException: The operation timed out after <time>"},
		{"nservicebus, a message that repeats its type",
			retry.Headers{"NServiceBus.ExceptionInfo.ExceptionType": "System.Exception", "NServiceBus.ExceptionInfo.Message": "System.Exception: order 17 failed"},
			"System.Exception", "NServiceBus.ExceptionInfo.ExceptionType", "System.Exception: order <n> failed"},
		{"a type header and no text",
			retry.Headers{"NServiceBus.ExceptionInfo.ExceptionType": []byte("System.Exception")},
			"System.Exception", "NServiceBus.ExceptionInfo.ExceptionType", "System.Exception"},
		{"type from the text",
			retry.Headers{"x-last-error": "ValueError: invalid literal for int() with base 10: 'abc'"},
			"ValueError", "text", "ValueError: invalid literal for int() with base <n>: '…'"},
		{"no type",
			retry.Headers{"x-last-error": "Order A-1 rejected"},
			"", "", "Order <id> rejected"},
		{"nothing", retry.Headers{}, "", "", ""},
		{"a type header of another type is ignored", retry.Headers{"MT-Fault-ExceptionType": int32(3), "x-last-error": "boom"}, "", "", "boom"},
	} {
		c := CauseOf(tc.h, retry.ReadState(tc.h, nil))
		if c.Type != tc.typ || c.TypeFrom != tc.from || c.Key != tc.key {
			t.Errorf("%s: got type %q from %q, key %q; want %q from %q, key %q", tc.name, c.Type, c.TypeFrom, c.Key, tc.typ, tc.from, tc.key)
		}
	}
}

func TestNormaliseErrorBoundsLongTexts(t *testing.T) {
	long := strings.Repeat("word ", 1000) + "tail"
	got := normaliseError(long)
	if len(got) > maxKey || !strings.HasSuffix(got, " …") {
		t.Fatalf("a long text is %d bytes, ending %q", len(got), got[len(got)-10:])
	}
	if again := normaliseError(got); again != got {
		t.Fatal("a cut key changed when normalised again")
	}
}

// The masking stages as regular expressions: each scanner must replace
// exactly what its expression matches.
var stageSpecs = []struct {
	name string
	re   *regexp.Regexp
	scan func(string) string
	mask func(string) string
}{
	{"email", regexp.MustCompile(`[A-Za-z0-9_.+-]+@[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)+`), maskEmails, func(string) string { return maskEmail }},
	{"uuid", regexp.MustCompile(`\b[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}\b`),
		func(s string) string { return replaceWords(s, matchUUID, maskUUID) }, func(string) string { return maskUUID }},
	{"stamp", regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2}\b)?)?`),
		func(s string) string { return replaceWords(s, matchStamp, "") },
		func(m string) string {
			if len(m) == len("2006-01-02") {
				return maskDate
			}
			return maskTime
		}},
	{"ipv4", regexp.MustCompile(`\b\d{1,3}(?:\.\d{1,3}){3}\b`), func(s string) string { return replaceWords(s, matchIPv4, maskIP) }, func(string) string { return maskIP }},
	{"clock", regexp.MustCompile(`\b\d{1,2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?\b`), func(s string) string { return replaceWords(s, matchClock, maskTime) }, func(string) string { return maskTime }},
	{"ipv6", regexp.MustCompile(`\b(?:[0-9A-Fa-f]{1,4}:){2,7}[0-9A-Fa-f]{1,4}\b`), func(s string) string { return replaceWords(s, matchIPv6, maskIP) }, func(string) string { return maskIP }},
	{"hostport", regexp.MustCompile(`\b[A-Za-z][A-Za-z0-9-]*(?:\.[A-Za-z0-9-]+)+:\d{1,5}\b`), func(s string) string { return replaceWords(s, matchHostPort, "") },
		func(m string) string {
			colon := strings.LastIndexByte(m, ':')
			if sourceFile(m[:colon]) {
				return m
			}
			return maskHost + m[colon:]
		}},
	{"hex", regexp.MustCompile(`\b0[xX][0-9A-Fa-f]+\b`), func(s string) string { return replaceWords(s, matchHex0x, maskHex) }, func(string) string { return maskHex }},
}

// checkStages compares every scanner with its expression on s.
func checkStages(t *testing.T, s string) {
	t.Helper()
	for _, st := range stageSpecs {
		if got, want := st.scan(s), st.re.ReplaceAllStringFunc(s, st.mask); got != want {
			t.Fatalf("%s on %q: scanner %q, expression %q", st.name, s, got, want)
		}
	}
}

func TestScannersMatchTheirExpressions(t *testing.T) {
	for _, s := range []string{
		"a 550e8400-e29b-41d4-a716-446655440000 b", "550e8400-e29b-41d4-a716-4466554400001", "x550e8400-e29b-41d4-a716-446655440000",
		"2024-03-01", "2024-03-01T10:15", "2024-03-01T10:15:30.123Z", "2024-03-01 10:15:30+02:00", "2024-03-01T10:15:30+0200x",
		"2024-03-01T10:15:30+02:00x", "2024-03-015", "12024-03-01", "2024-03-01T1:15",
		"10.0.0.1", "10.0.0.1:80", "1.2.3.4.5", "1234.1.1.1", "1.1.1.1234", "10.0.0.1x",
		"10:15", "10:15:30", "10:15:30.5", "10:15:30x", "10:15:30.5x", "100:15", "1:155", "9:05,",
		"fe80:0:0:0:202:b3ff:fe1e:8329", "a:b:c", "a:b:", "a:b:c:d:e:f:1:2:3", "abcde:1:2", "1:2:3x", "1:2:3:abcde",
		"db-7.internal:5432", "a.b:123456", "OrderService.java:42", "x-db.internal:80", "9-db.x:1", "a.b.:80", "a..b:80",
		"0x1F", "0x", "0xg", "0x1Fg", "a0x1",
		"jane.doe+x@example.co.uk", "a@b", "a@b@c.d", "x@y a@b.c", "@a.b", "a@.b", "a@b.", "a@b.c@d.e", "..@a.b",
	} {
		checkStages(t, s)
	}
}

// FuzzNormaliseError: never panics, always valid UTF-8, bounded, and
// idempotent: a key normalised again (alone or as an error text) is itself;
// every scanner replaces what its expression matches.
func FuzzNormaliseError(f *testing.F) {
	for _, s := range []string{
		"Order A-1 rejected", "rejected value: -27.87", "line: 1, column: 178", "'a' 'b'", "can't 'x'",
		"java.net.SocketTimeoutException: Connect timed out", "status code 404", "404 Not Found", "x@y.z 10.0.0.1:80",
		"2024-03-01T10:15:30Z 550e8400-e29b-41d4-a716-446655440000", "‘a’ “b” «c»", "#1 +2 -3 0x4f", "HTTP/1.1 503",
		"db-7.internal:5432", "a\u00a0b\u2028c", "\xff\xfe", "TypeError:\t404 x",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkStages(t, s)
		n := normaliseError(s)
		if !utf8.ValidString(n) {
			t.Fatalf("normaliseError(%q) = %q: not UTF-8", s, n)
		}
		if len(n) > maxKey {
			t.Fatalf("normaliseError(%q) is %d bytes", s, len(n))
		}
		if again := normaliseError(n); again != n {
			t.Fatalf("not idempotent: %q → %q → %q", s, n, again)
		}
		k := errorKey(s)
		if again := errorKey(k); again != k {
			t.Fatalf("errorKey not idempotent: %q → %q → %q", s, k, again)
		}
	})
}

// --group-by error over the four frameworks' records: one group per
// exception type (the type their conventions read: Symfony's
// ErrorDetailsStamp exceptionClass, Moleculer's x-error-name), the
// values in the message masked; Watermill records no type, so its texts
// group by their masked form; Dramatiq's error is in the body: one group
// without an error.
func TestCauseGroupsMoreFrameworksByType(t *testing.T) {
	symfony := func(class, msg string) retry.Headers {
		return retry.Headers{`X-Message-Stamp-Symfony\Component\Messenger\Stamp\ErrorDetailsStamp`: `[{"exceptionClass":"` + class + `","exceptionCode":0,"exceptionMessage":"` + msg + `"}]`}
	}
	moleculer := func(name, msg string) retry.Headers {
		return retry.Headers{"x-original-group": "billing", "x-original-channel": "order.created", "x-error-name": name, "x-error-message": msg}
	}
	watermill := func(msg string) retry.Headers {
		return retry.Headers{"reason_poisoned": msg, "topic_poisoned": "orders"}
	}
	dramatiq := rejectedIn("default", "", "default")
	for _, tt := range []struct {
		name   string
		msgs   []retry.Headers
		groups int
		types  []string
	}{
		{"Symfony Messenger", []retry.Headers{
			symfony(`App\\Exception\\CardDeclined`, "Card A-1 declined"), symfony(`App\\Exception\\CardDeclined`, "Card B-22 declined"),
			symfony("RuntimeException", "Card A-1 declined")}, 2, []string{`App\Exception\CardDeclined`, `App\Exception\CardDeclined`, "RuntimeException"}},
		{"Moleculer Channels", []retry.Headers{
			moleculer("MoleculerRetryableError", "Order A-1 rejected"), moleculer("MoleculerRetryableError", "Order A-2 rejected"),
			moleculer("ValidationError", "Order A-1 rejected")}, 2, []string{"MoleculerRetryableError", "MoleculerRetryableError", "ValidationError"}},
		{"Watermill", []retry.Headers{
			watermill("order A-1: payment service unavailable"), watermill("order B-9: payment service unavailable"),
			watermill("order A-1: card declined")}, 2, []string{"", "", ""}},
		{"Dramatiq", []retry.Headers{dramatiq, dramatiq}, 1, []string{"", ""}},
	} {
		keys := map[string]bool{}
		for i, h := range tt.msgs {
			c := CauseOf(h, retry.ReadState(h, nil))
			keys[c.Key] = true
			if c.Type != tt.types[i] {
				t.Errorf("%s message %d: type %q (from %q), want %q", tt.name, i, c.Type, c.TypeFrom, tt.types[i])
			}
		}
		if len(keys) != tt.groups {
			t.Errorf("%s: %d groups %v, want %d", tt.name, len(keys), keys, tt.groups)
		}
	}
}
