"""An application's own retry code, as a framework nobody has named does it
(pika, Debian's python3-pika): the worker consumes CONFORMANCE_QUEUE, and on
failure republishes the message to the same queue with its attempts and the
error in headers of its own naming (x-attempts, x-error, x-error-class,
x-failed-at); after CONFORMANCE_ATTEMPTS attempts it republishes it to
CONFORMANCE_QUEUE + "-graveyard" and acks. A second kind of message carries
its record in the JSON body instead ({"meta": {"retryCount": N,
"lastError": ...}}, headers none), as body-first frameworks do.

Environment: CONFORMANCE_URL, CONFORMANCE_QUEUE, CONFORMANCE_COUNT,
CONFORMANCE_ATTEMPTS.
"""
import json
import os
import time

import pika

URL = os.environ["CONFORMANCE_URL"]
QUEUE = os.environ["CONFORMANCE_QUEUE"]
GRAVE = QUEUE + "-graveyard"
COUNT = int(os.environ["CONFORMANCE_COUNT"])
ATTEMPTS = int(os.environ["CONFORMANCE_ATTEMPTS"])

conn = pika.BlockingConnection(pika.URLParameters(URL))
ch = conn.channel()
ch.confirm_delivery()
for q in (QUEUE, GRAVE):
    ch.queue_declare(q, durable=True)

for i in range(COUNT):
    ch.basic_publish("", QUEUE, json.dumps({"order": i}).encode(),
                     pika.BasicProperties(message_id="%s-h-%d" % (QUEUE, i), delivery_mode=2,
                                          content_type="application/json", headers={"x-attempts": 1}))
    ch.basic_publish("", QUEUE, json.dumps({"order": i, "meta": {"retryCount": 0}}).encode(),
                     pika.BasicProperties(message_id="%s-b-%d" % (QUEUE, i), delivery_mode=2,
                                          content_type="application/json"))

done = 0
while done < 2 * COUNT:
    method, props, body = ch.basic_get(QUEUE)
    if method is None:
        time.sleep(0.05)
        continue
    # The handler fails every time.
    error = "payment service unavailable (order %s)" % json.loads(body)["order"]
    headers = dict(props.headers or {})
    if "x-attempts" in headers:
        attempts = headers["x-attempts"]
        headers.update({"x-error": error, "x-error-class": "PaymentTimeout",
                        "x-failed-at": int(time.time())})
        last = attempts >= ATTEMPTS
        headers["x-attempts"] = attempts if last else attempts + 1
    else:
        doc = json.loads(body)
        last = doc["meta"]["retryCount"] >= ATTEMPTS - 1
        if not last:
            doc["meta"]["retryCount"] += 1
        doc["meta"]["lastError"] = error
        body = json.dumps(doc).encode()
    props.headers = headers
    ch.basic_publish("", GRAVE if last else QUEUE, body, props)
    ch.basic_ack(method.delivery_tag)
    if last:
        done += 1
conn.close()
