package rabbit_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker"
)

// Messages published by other ecosystems' clients carry the same logical
// headers typed their own way; the engine must read them alike.

const pikaScript = `
import sys, pika, decimal
conn = pika.BlockingConnection(pika.URLParameters(sys.argv[1]))
ch = conn.channel()
ch.confirm_delivery()
ch.basic_publish('', sys.argv[2], b'{"n":1}', pika.BasicProperties(message_id='py-1', headers={
    'x-retry-count': 3,
    'x-last-error': 'ValueError: boom',
    'x-retry-delay': decimal.Decimal('4000'),
    'x-death': [{'count': 2, 'queue': 'orders.process', 'reason': 'rejected',
                 'exchange': 'orders.topic', 'routing-keys': ['orders.created']}],
}))
conn.close()
`

const phpScript = `<?php
require '/usr/share/php/PhpAmqpLib/autoload.php';
use PhpAmqpLib\Connection\AMQPStreamConnection;
use PhpAmqpLib\Message\AMQPMessage;
use PhpAmqpLib\Wire\AMQPTable;
$u = parse_url($argv[1]);
$c = new AMQPStreamConnection($u['host'], $u['port'] ?? 5672, $u['user'], $u['pass']);
$ch = $c->channel();
$ch->confirm_select();
$ch->basic_publish(new AMQPMessage('job', ['message_id' => 'php-1',
    'application_headers' => new AMQPTable(['yii-attempt' => 4, 'yii-ttr' => 300])]), '', $argv[2]);
$ch->wait_for_pending_acks(5.0);
$ch->close(); $c->close();
`

func TestHeadersFromOtherClientsDecodeAlike(t *testing.T) {
	f := newFixture(t)
	amqpURL := f.r.AMQPURL
	cases := []struct {
		name, tool string
		run        func(q string) *exec.Cmd
		source     string
		deaths     int
	}{
		{"python3-pika", "/usr/bin/python3", func(q string) *exec.Cmd {
			return exec.Command("/usr/bin/python3", "-c", pikaScript, amqpURL, q)
		}, "x-retry-count", 1},
		{"php-amqplib", "php", func(q string) *exec.Cmd {
			file := t.TempDir() + "/pub.php"
			if err := os.WriteFile(file, []byte(phpScript), 0o600); err != nil {
				t.Fatal(err)
			}
			return exec.Command("php", file, amqpURL, q)
		}, "yii-attempt", 0},
		{"amqp-tools", "amqp-publish", func(q string) *exec.Cmd {
			// librabbitmq reads a trailing "/" as the empty vhost.
			u := strings.TrimSuffix(amqpURL, "/") + "/%2F"
			return exec.Command("amqp-publish", "--url", u, "-r", q, "-H", "x-retry-count: 3", "-b", "x")
		}, "x-retry-count", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := exec.LookPath(c.tool); err != nil {
				t.Skipf("%s not installed (scripts/clients.sh installs it)", c.name)
			}
			q := f.queue(c.name, nil)
			cmd := c.run(q)
			if out, err := cmd.CombinedOutput(); err != nil {
				if strings.Contains(string(out), "No module named") || strings.Contains(string(out), "Failed opening required") {
					t.Skipf("%s library missing: %s", c.name, out)
				}
				t.Fatalf("%s: %v\n%s", c.name, err, out)
			}
			f.waitDepth(q, 1)
			res, err := f.live(true).Peek(context.Background(), q, broker.PeekOptions{Limit: 1})
			if err != nil {
				t.Fatal(err)
			}
			m := res.Messages[0]
			// yii-attempt 4 is the 4th attempt: 3 retries.
			if m.Retry.Count != 3 || m.Retry.Source != c.source {
				t.Errorf("retry %+v (headers %#v)", m.Retry, m.Headers)
			}
			if len(m.Deaths) != c.deaths {
				t.Errorf("deaths %+v", m.Deaths)
			}
			if c.deaths > 0 && (m.Deaths[0].Count != 2 || m.Origin == nil || m.Origin.RoutingKey != "orders.created") {
				t.Errorf("x-death %+v origin %+v", m.Deaths, m.Origin)
			}
			if c.name == "python3-pika" && m.Retry.LastDelay != 4*time.Second {
				t.Errorf("x-retry-delay as an AMQP decimal: last delay %v", m.Retry.LastDelay)
			}
			t.Logf("%s: x-retry-count/yii-attempt arrived as %s", c.name, m.Retry.Kind)
		})
	}
}
