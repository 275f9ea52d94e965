// amqplib-retry (npm, pinned in package-lock.json: its own code, and the
// amqplib it depends on) retrying the failures of two work queues through
// its one shared wait queue: each handler always fails; amqplib-retry
// publishes the message to amqplib-retry.delayed with a per-message
// expiration and a _targetQueue header, the queue dead-letters it into
// amqplib-retry.ready, and the library's ready-queue consumer sends it
// back to the queue the header names. The delay function gives the first
// retry 200 ms and the second CONFORMANCE_PARK_MS; the script ends (and
// with it the library's ready-queue consumer: the router down) once every
// second retry waits in amqplib-retry.delayed, so the messages end in
// amqplib-retry.ready when their expiration comes.
//
// Environment: CONFORMANCE_URL, CONFORMANCE_QUEUES (comma-separated),
// CONFORMANCE_COUNT (messages per queue), CONFORMANCE_PARK_MS.
'use strict'
const amqp = require('amqplib')
const retry = require('amqplib-retry')

// amqplib 0.4 (amqplib-retry's dependency) asks for a frame_max of 4096,
// below RabbitMQ 4's minimum of 8192, which then closes the connection.
const url = process.env.CONFORMANCE_URL + '?frameMax=131072'
const queues = process.env.CONFORMANCE_QUEUES.split(',')
const count = Number(process.env.CONFORMANCE_COUNT)
const park = Number(process.env.CONFORMANCE_PARK_MS)
const delayed = 'amqplib-retry.delayed'

let delivered = 0
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

async function main () {
  const conn = await amqp.connect(url)
  const ch = await conn.createChannel()
  for (const q of queues) {
    // amqplib-retry only checks the work and failure queues: the
    // application declares them.
    await ch.assertQueue(q, { durable: true })
    await ch.assertQueue(q + '.failure', { durable: true })
  }
  for (const q of queues) {
    await ch.consume(q, retry({
      channel: ch,
      consumerQueue: q,
      failureQueue: q + '.failure',
      delay: (attempts) => attempts === 1 ? 200 : (attempts === 2 ? park : -1),
      handler: (msg) => {
        delivered++
        throw new Error('payment service unavailable for ' + msg.properties.messageId)
      }
    }))
  }
  // amqplib-retry declares its queues as the consumers start.
  for (let i = 0; ; i++) {
    try {
      await (await conn.createChannel()).checkQueue('amqplib-retry.ready')
      break
    } catch (e) {
      if (i > 100) throw e
      await sleep(50)
    }
  }
  for (const q of queues) {
    for (let i = 0; i < count; i++) {
      ch.sendToQueue(q, Buffer.from(JSON.stringify({ n: i })), { persistent: true, messageId: q + '-' + i })
    }
  }
  // Every message delivered twice: its first retry went round through
  // the ready queue; its second waits, for CONFORMANCE_PARK_MS, and finds
  // no router when it is ready.
  const want = queues.length * count
  const probe = await conn.createChannel()
  for (;;) {
    const { messageCount } = await probe.checkQueue(delayed)
    if (delivered >= 2 * want && messageCount >= want) break
    await sleep(100)
  }
  await conn.close()
}

main().catch((err) => { console.error(err); process.exit(1) })
