"""aio-pika's Master/Worker pattern (aio_pika/patterns/master.py, Debian's
python3-aio-pika) driven to its dead-letter queue.

JsonMaster(channel, requeue=True, reject_on_redelivered=True): a task that
raises is rejected with requeue the first time (it comes straight back,
redelivered), and rejected without requeue when it fails again
(IncomingMessage.process: reject_on_redelivered), which dead-letters it
through the arguments the worker's queue was declared with
(create_worker(..., arguments=...) passes them to declare_queue). The
dead-letter exchange and its queue are the application's: declared here.

Environment: CONFORMANCE_URL (AMQP URL with the vhost), CONFORMANCE_QUEUE
(the task's queue), CONFORMANCE_COUNT (tasks, message ids "thumb-<i>").
"""
import asyncio
import os
import sys

import aio_pika
from aio_pika.patterns import JsonMaster

URL = os.environ["CONFORMANCE_URL"]
QUEUE = os.environ["CONFORMANCE_QUEUE"]
COUNT = int(os.environ["CONFORMANCE_COUNT"])
DLX = QUEUE + ".dlx"
DLQ = QUEUE + ".dead"


async def main() -> None:
    conn = await aio_pika.connect_robust(URL)
    async with conn:
        ch = await conn.channel()
        dlx = await ch.declare_exchange(DLX, aio_pika.ExchangeType.DIRECT, durable=True)
        dlq = await ch.declare_queue(DLQ, durable=True)
        await dlq.bind(dlx, routing_key=QUEUE)

        master = JsonMaster(ch, requeue=True, reject_on_redelivered=True)

        async def resize(image_id: str) -> None:
            raise RuntimeError(f"cannot decode image {image_id}")

        await master.create_worker(QUEUE, resize, durable=True, arguments={"x-dead-letter-exchange": DLX})
        for i in range(COUNT):
            await master.create_task(QUEUE, kwargs={"image_id": f"img-{i}"}, message_id=f"thumb-{i}")

        for _ in range(1200):
            q = await ch.declare_queue(DLQ, passive=True)
            if q.declaration_result.message_count >= COUNT:
                print(f"aio-pika: {COUNT} tasks in {DLQ}")
                return
            await asyncio.sleep(0.05)
        sys.exit(f"{DLQ} did not get {COUNT} tasks in 60 s")


asyncio.run(main())
