// rascal's documented delayed-retry recovery, driven to its dead letter
// queue. config.json follows onebeyond/rascal: README.md ("Chaining
// Recovery Strategies": republish, then forward to a delay queue whose TTL
// dead-letters to the "retry" exchange, which routes back by the CC key
// "<queue>.<routing key>" rascal adds, then nack into "dead_letters") and
// examples/advanced/config.js (the service, delay, retry and dead_letters
// exchanges, "delay[delay.1m] -> delay:1m", "retry[<queue>.#] -> <queue>",
// the work queue's x-dead-letter-exchange). The recovery strategies are
// rascal's own (lib/amqp/SubscriberError.js: republish and forward count
// their attempts in headers.rascal.recovery.<queue>.{republished,forwarded}
// and write headers.rascal.error).
//
// The subscriber fails every message; the script exits once every message
// is in the dead letter queue.
//
// Environment: CONFORMANCE_URL (AMQP URL with the vhost), CONFORMANCE_VHOST,
// CONFORMANCE_COUNT (messages, message ids "invoice-<i>").
'use strict';
const path = require('path');
const fs = require('fs');
const Rascal = require('rascal');
const amqplib = require('amqplib');

const url = process.env.CONFORMANCE_URL;
const vhost = process.env.CONFORMANCE_VHOST;
const count = Number(process.env.CONFORMANCE_COUNT);
const dlq = 'dead_letters:billing';


async function main() {
  const raw = JSON.parse(fs.readFileSync(path.join(__dirname, 'config.json'), 'utf8'));
  // The test's own vhost, reached by the URL the test gives.
  const config = { vhosts: { [vhost]: { ...raw.vhosts.VHOST, connection: { url } } }, recovery: raw.recovery };
  const broker = await Rascal.BrokerAsPromised.create(Rascal.withDefaultConfig(config));
  broker.on('error', (err) => console.error('rascal:', err.message));

  const subscription = await broker.subscribe('save_invoice');
  subscription
    .on('message', (message, content, ackOrNack) => {
      const err = new Error(`payment service unavailable for ${message.properties.messageId}`);
      err.code = 'ECONNREFUSED';
      ackOrNack(err, broker.config.recovery.deferred_retry);
    })
    .on('error', (err) => console.error('rascal subscription:', err.message));

  for (let i = 0; i < count; i++) {
    const publication = await broker.publish('invoice_created', { invoice: i }, { options: { messageId: `invoice-${i}` } });
    await new Promise((resolve, reject) => publication.on('success', resolve).on('error', reject).on('return', () => reject(new Error('returned'))));
  }

  // Its depth, read on a connection of its own (rascal's are its broker's).
  const conn = await amqplib.connect(url);
  const ch = await conn.createChannel();
  const deadline = Date.now() + 60000;
  while ((await ch.checkQueue(dlq)).messageCount < count) {
    if (Date.now() > deadline) throw new Error(`${dlq} did not get ${count} messages in 60 s`);
    await new Promise((r) => setTimeout(r, 50));
  }
  await conn.close();
  await broker.shutdown();
  console.log(`rascal: ${count} messages in ${dlq}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
