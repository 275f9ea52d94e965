// foo-foo-mq's documented failure paths, driven to the dead-letter queue
// (its own code: the npm package pinned in package-lock.json). The
// topology is docs/topology.md's JSON configuration: a topic exchange, a
// work queue with `deadLetter` (x-dead-letter-exchange) and a fanout
// dead-letter exchange bound to the DLQ. Two kinds of failure end there:
//   - the handler rejects what it cannot process (docs/receiving.md,
//     message.reject(): "rejects the message without re-queueing it");
//   - a body its serializer cannot read is rejected without requeueing
//     before any handler runs (docs/receiving.md, "Failed Serialization";
//     src/amqp/queue.js subscribe: ops.reject() when deserialize throws).
// The script exits once every message is in the DLQ.
//
// Environment: CONFORMANCE_URL (AMQP URL with the vhost), CONFORMANCE_COUNT
// (messages of each kind: ids "order-<i>", rejected by the handler, and
// "garbled-<i>", whose JSON is broken).
'use strict';
const rabbit = require('foo-foo-mq');
const amqplib = require('amqplib');

const url = process.env.CONFORMANCE_URL;
const count = Number(process.env.CONFORMANCE_COUNT);
const exchange = 'orders';
const queue = 'orders.fulfil';
const dlx = 'orders.dead-letter';
const dlq = 'orders.fulfil.dead';

async function main () {
  rabbit.handle('order.placed', (msg) => {
    console.error(`cannot fulfil ${msg.properties.messageId}: out of stock`);
    msg.reject();
  });
  await rabbit.configure({
    connection: { uri: url },
    exchanges: [
      { name: exchange, type: 'topic', persistent: true },
      { name: dlx, type: 'fanout' }
    ],
    queues: [
      { name: queue, subscribe: true, deadLetter: dlx, limit: 10 },
      { name: dlq }
    ],
    bindings: [
      { exchange, target: queue, keys: ['order.#'] },
      { exchange: dlx, target: dlq, keys: [] }
    ]
  });

  for (let i = 0; i < count; i++) {
    await rabbit.publish(exchange, {
      type: 'order.placed', routingKey: 'order.placed', messageId: `order-${i}`,
      body: { order: i, sku: 'A-1' }, persistent: true
    });
  }
  // A producer elsewhere sends JSON that is not: amqplib, not foo-foo-mq,
  // which would serialize it.
  const conn = await amqplib.connect(url);
  const ch = await conn.createConfirmChannel();
  for (let i = 0; i < count; i++) {
    ch.publish(exchange, 'order.placed', Buffer.from('{"order": ' + i + ', "sku": '),
      { messageId: `garbled-${i}`, contentType: 'application/json', type: 'order.placed', persistent: true });
  }
  await ch.waitForConfirms();

  const deadline = Date.now() + 60000;
  while ((await ch.checkQueue(dlq)).messageCount < 2 * count) {
    if (Date.now() > deadline) throw new Error(`${dlq} did not get ${2 * count} messages in 60 s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await conn.close();
  await rabbit.shutdown();
  console.log(`foo-foo-mq: ${2 * count} messages in ${dlq}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
