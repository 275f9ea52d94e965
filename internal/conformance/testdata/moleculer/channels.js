// Moleculer Channels' AMQP adapter, driven to its dead-letter queue, on the
// npm packages pinned in package-lock.json (@moleculer/channels 0.1.8, the
// newest the registry serves; amqplib 0.9, the range that version supports).
// It follows moleculerjs/moleculer-channels: README.md ("AMQP (RabbitMQ)":
// the adapter's options, deadLettering) and src/adapters/amqp.js
// (subscribe: the channel's fanout exchange, the queue "<group>.<channel>"
// bound to it, the dead-letter fanout exchange DEAD_LETTER and its queue
// FAILED_MESSAGES, src/adapters/base.js's default; createConsumerHandler:
// a failed message is republished straight to its queue with
// x-redelivered-count until that reaches maxRetries; moveToDeadLetter:
// then its body is published to the dead-letter exchange with only
// x-original-channel and x-original-group, no other header or property).
//
// The handler fails every message; the script exits once every message is
// in the dead-letter queue.
//
// Environment: CONFORMANCE_URL (AMQP URL with the vhost), CONFORMANCE_COUNT
// (messages, ids "order-<i>" in the body: the dead-letter copy keeps
// nothing else of the message).
'use strict';
const { ServiceBroker } = require('moleculer');
const ChannelsMiddleware = require('@moleculer/channels').Middleware;
const amqplib = require('amqplib');

// amqplib 0.9 asks for 4 KiB frames unless the URL says otherwise, and
// RabbitMQ 4.1 and later refuse less than 8 KiB (the connection is reset):
// 128 KiB, the broker's default and amqplib 0.10's.
const url = withFrameMax(process.env.CONFORMANCE_URL, 131072);
const count = Number(process.env.CONFORMANCE_COUNT);
const channel = 'order.created';
const group = 'billing';
const dlq = 'FAILED_MESSAGES';
const maxRetries = 3;

async function main() {
  const broker = new ServiceBroker({
    logger: { type: 'Console', options: { level: 'error' } },
    middlewares: [
      ChannelsMiddleware({
        adapter: { type: 'AMQP', options: { amqp: { url }, maxRetries, deadLettering: { enabled: true } } },
      }),
    ],
  });
  let attempts = 0;
  broker.createService({
    name: 'billing',
    channels: {
      [channel]: {
        group,
        handler(payload) {
          attempts++;
          const err = new Error(`payment service unavailable for ${payload.id}`);
          err.name = 'PaymentUnavailableError';
          throw err;
        },
      },
    },
  });
  await broker.start();

  for (let i = 0; i < count; i++) {
    await broker.sendToChannel(channel, { id: `order-${i}` }, { correlationId: `order-${i}` });
  }

  // Its depth, read on a connection of its own (the adapter's is its own).
  const conn = await amqplib.connect(url);
  const ch = await conn.createChannel();
  const deadline = Date.now() + 60000;
  while ((await ch.checkQueue(dlq)).messageCount < count) {
    if (Date.now() > deadline) throw new Error(`${dlq} did not get ${count} messages in 60 s`);
    await new Promise((r) => setTimeout(r, 50));
  }
  await conn.close();
  await broker.stop();
  // Tried once and republished until x-redelivered-count reached maxRetries.
  if (attempts !== count * maxRetries) {
    throw new Error(`handler ran ${attempts} times, want ${count * maxRetries}`);
  }
  console.log(`moleculer: ${count} messages in ${dlq} after ${attempts} attempts`);
}

function withFrameMax(raw, bytes) {
  const u = new URL(raw);
  u.searchParams.set('frameMax', String(bytes));
  return u.toString();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
