"""Dramatiq's RabbitmqBroker and Retries middleware, reproduced on pika
(Dramatiq itself is not packaged for Debian; pika is the client it runs on).

Follows Bogdanp/dramatiq (master, 848b35f):
dramatiq/brokers/rabbitmq.py: _declare_queue, _declare_dq_queue (the queue
and its delay queue <q>.DQ, durable, both with x-dead-letter-exchange "" and
x-dead-letter-routing-key <q>.XQ), _declare_xq_queue (<q>.XQ, durable,
x-message-ttl DEAD_MESSAGE_TTL = 7 days); enqueue (basic_publish through
the default exchange with only delivery_mode 2: no headers, no message_id;
a delayed message goes to <q>.DQ with options.eta = now + delay);
_RabbitmqConsumer._nack (basic_nack requeue=False: the broker dead-letters
it into <q>.XQ).
dramatiq/common.py: dq_name, xq_name, q_name, compute_backoff.
dramatiq/message.py, dramatiq/encoder.py: the body is the JSON of the
message's fields (queue_name, actor_name, args, kwargs, options,
message_id, message_timestamp), compact separators.
dramatiq/middleware/retries.py: Retries.after_process_message (options
retries += 1, traceback, requeue_timestamp; once the retries before this
attempt reach max_retries the message fails, else it is enqueued again
with a backoff delay, and the delivery is acked).
dramatiq/worker.py: _ConsumerThread.handle_message (a message with an eta
is held until due), handle_delayed_messages (a copy without eta is
enqueued to the canonical queue, then the delay queue's delivery is
acked), post_process_message (failed: nack; else ack).

The actor here always raises, as an actor whose function raises does. The
message ids are "<queue>-<i>" (Message(message_id=...): Dramatiq's default
is a uuid4); they are in the body only. It exits once every message has
been rejected into <q>.XQ.

Environment: CONFORMANCE_URL (AMQP URL with the vhost), CONFORMANCE_QUEUE,
CONFORMANCE_COUNT, CONFORMANCE_RETRIES (max_retries),
CONFORMANCE_MIN_BACKOFF_MS (min_backoff; max_backoff is 4 times it).
"""
import heapq
import json
import os
import random
import time
import traceback

import pika

URL = os.environ["CONFORMANCE_URL"]
QUEUE = os.environ["CONFORMANCE_QUEUE"]
COUNT = int(os.environ["CONFORMANCE_COUNT"])
MAX_RETRIES = int(os.environ["CONFORMANCE_RETRIES"])
MIN_BACKOFF = int(os.environ["CONFORMANCE_MIN_BACKOFF_MS"])
MAX_BACKOFF = 4 * MIN_BACKOFF
DEAD_MESSAGE_TTL = 86400000 * 7
ACTOR = "send_invoice"


def dq_name(q):
    return q + ".DQ"


def xq_name(q):
    return q + ".XQ"


def current_millis():
    return int(time.time() * 1000)


def compute_backoff(attempts, factor, max_backoff):
    """common.compute_backoff with its jitter: factor * 2**attempts, up to
    twice that, brought back to 50-100% of max_backoff when over it."""
    backoff = int(factor * (2 ** min(attempts, 32)) * random.uniform(1, 2))
    if backoff > max_backoff:
        backoff = int(max_backoff * random.uniform(0.5, 1))
    return attempts + 1, backoff


def encode(message):
    return json.dumps(message, separators=(",", ":")).encode("utf-8")


class Broker:
    def __init__(self, url):
        self.connection = pika.BlockingConnection(pika.URLParameters(url))
        self.channel = self.connection.channel()

    def _arguments(self, q):
        return {"x-dead-letter-exchange": "", "x-dead-letter-routing-key": xq_name(q)}

    def declare_queue(self, q):
        self.channel.queue_declare(queue=q, durable=True, arguments=self._arguments(q))
        self.channel.queue_declare(queue=dq_name(q), durable=True, arguments=self._arguments(q))
        self.channel.queue_declare(queue=xq_name(q), durable=True,
                                   arguments={"x-message-ttl": DEAD_MESSAGE_TTL})

    def enqueue(self, message, delay=None):
        queue_name = message["queue_name"]
        if delay is not None:
            queue_name = dq_name(queue_name)
            message = dict(message, queue_name=queue_name,
                           options=dict(message["options"], eta=current_millis() + delay))
        self.channel.basic_publish(exchange="", routing_key=queue_name, body=encode(message),
                                   properties=pika.BasicProperties(delivery_mode=2))


def main():
    broker = Broker(URL)
    broker.declare_queue(QUEUE)
    for i in range(COUNT):
        broker.enqueue({"queue_name": QUEUE, "actor_name": ACTOR, "args": [i], "kwargs": {},
                        "options": {}, "message_id": "%s-%d" % (QUEUE, i),
                        "message_timestamp": current_millis()})

    # One consumer per queue, as a worker has (the work queue and its
    # delay queue), on one channel here: the script is single-threaded.
    ch = broker.channel
    ch.basic_qos(prefetch_count=COUNT * 2)
    held = []  # (eta, seq, delivery tag, message): handle_message's delay queue
    rejected = set()
    seq = 0

    def on_work(channel, method, properties, body):
        message = json.loads(body)
        try:
            raise RuntimeError("invoice %s: payment gateway refused" % message["message_id"])
        except RuntimeError:
            options = message["options"]
            retries = options.setdefault("retries", 0)
            options["retries"] += 1
            options["traceback"] = traceback.format_exc(limit=30)
            options["requeue_timestamp"] = current_millis()
            if retries >= MAX_RETRIES:
                # message.fail(), then post_process_message's nack.
                channel.basic_nack(method.delivery_tag, requeue=False)
                rejected.add(message["message_id"])
                return
            _, delay = compute_backoff(retries, factor=MIN_BACKOFF, max_backoff=MAX_BACKOFF)
            broker.enqueue(message, delay=delay)
            channel.basic_ack(method.delivery_tag)

    def on_delayed(channel, method, properties, body):
        nonlocal seq
        message = json.loads(body)
        seq += 1
        heapq.heappush(held, (message["options"]["eta"], seq, method.delivery_tag, message))

    ch.basic_consume(QUEUE, on_work)
    ch.basic_consume(dq_name(QUEUE), on_delayed)
    deadline = time.monotonic() + 60
    while len(rejected) < COUNT:
        if time.monotonic() > deadline:
            raise SystemExit("dramatiq: %d of %d messages rejected after 60 s" % (len(rejected), COUNT))
        broker.connection.process_data_events(time_limit=0.02)
        while held and held[0][0] <= current_millis():
            _, _, tag, message = heapq.heappop(held)
            message = dict(message, queue_name=QUEUE,
                           options={k: v for k, v in message["options"].items() if k != "eta"})
            broker.enqueue(message)
            ch.basic_ack(tag)
    # The nacks are sent; a round trip makes sure the broker has them.
    ch.queue_declare(queue=xq_name(QUEUE), passive=True)
    broker.connection.close()
    print("dramatiq: %d messages in %s" % (COUNT, xq_name(QUEUE)))


if __name__ == "__main__":
    main()
