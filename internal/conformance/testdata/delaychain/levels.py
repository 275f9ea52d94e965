"""A shared chain of delay levels, as NServiceBus's delay infrastructure
and its imitators build it (pika, Debian's python3-pika): queues
delay.level-N with a TTL of 2^N s and no consumer, each dead-lettering
through a topic exchange into the next lower level, level 0 into the topic
exchange delay.out, which routes to each endpoint by the key's last word
(#.orders, #.billing). One set of levels serves every endpoint.

The script declares it for CONFORMANCE_ENDPOINTS (comma-separated) and
sends one message per endpoint into a level (an endpoint's index picks
it: 0 enters level 0, 1 enters level 1…) with the key "delay.<endpoint>",
then waits until each arrives at its endpoint and takes it: the chain
really delivers, down its levels.

Environment: CONFORMANCE_URL, CONFORMANCE_ENDPOINTS, CONFORMANCE_LEVELS.
"""
import os
import time

import pika

URL = os.environ["CONFORMANCE_URL"]
ENDPOINTS = os.environ["CONFORMANCE_ENDPOINTS"].split(",")
LEVELS = int(os.environ["CONFORMANCE_LEVELS"])

conn = pika.BlockingConnection(pika.URLParameters(URL))
ch = conn.channel()
ch.confirm_delivery()
ch.exchange_declare("delay.out", "topic", durable=True)
for n in range(LEVELS):
    # delay.in-N routes into level N; level N dead-letters into
    # delay.in-(N-1), level 0 into delay.out.
    ch.exchange_declare("delay.in-%d" % n, "topic", durable=True)
for n in range(LEVELS):
    q = "delay.level-%d" % n
    ch.queue_declare(q, durable=True, arguments={
        "x-message-ttl": (2 ** n) * 1000,
        "x-dead-letter-exchange": "delay.in-%d" % (n - 1) if n > 0 else "delay.out"})
    ch.queue_bind(q, "delay.in-%d" % n, "#")
for ep in ENDPOINTS:
    ch.queue_declare(ep, durable=True)
    ch.queue_bind(ep, "delay.out", "#." + ep)

for i, ep in enumerate(ENDPOINTS):
    ch.basic_publish("delay.in-%d" % (i % LEVELS), "delay." + ep, b"{}",
                     pika.BasicProperties(message_id=ep + "-0", delivery_mode=2), mandatory=True)

deadline = time.monotonic() + 60
waiting = set(ENDPOINTS)
while waiting:
    for ep in sorted(waiting):
        method, props, _ = ch.basic_get(ep, auto_ack=True)
        if method is not None:
            assert props.message_id == ep + "-0", props.message_id
            waiting.discard(ep)
    if time.monotonic() > deadline:
        raise SystemExit("never arrived: %s" % sorted(waiting))
    time.sleep(0.1)
conn.close()
