"""A Celery app whose task always fails: it retries with a countdown (self.retry,
which publishes the task again with retries+1 and an eta), and once its
retries are spent raises Reject(requeue=False), which an acks_late task's
worker answers with basic.reject: the broker dead-letters the message
through the work queue's x-dead-letter-exchange into its DLQ.

Follows celery/celery (Debian's python3-celery 5.2.6):
celery/app/task.py (Task.retry: countdown becomes eta, retries+1),
celery/app/amqp.py (as_task_v2: the id, task, retries and eta headers),
celery/worker/request.py (Request.on_failure: Reject -> reject(requeue)),
celery/exceptions.py (Reject). The queues are kombu Queue declarations with
queue_arguments, as Celery's task_queues setting takes them.

Run as a script it declares the queues, sends CONFORMANCE_COUNT tasks
(task ids "<queue>-<i>"), runs a solo worker on the work queue and stops it
once every task is in the DLQ.

Environment: CONFORMANCE_URL (AMQP URL with the vhost), CONFORMANCE_QUEUE
(work queue; its DLQ is "<queue>.dlq" behind direct exchange
"<queue>.dlx"), CONFORMANCE_COUNT, CONFORMANCE_RETRIES (max_retries),
CONFORMANCE_COUNTDOWN_S (the retry countdown, seconds).
"""
import os
import signal
import sys
import threading
import time

from celery import Celery
from celery.exceptions import Reject
from kombu import Connection, Exchange, Queue

URL = os.environ["CONFORMANCE_URL"]
QUEUE = os.environ["CONFORMANCE_QUEUE"]
COUNT = int(os.environ["CONFORMANCE_COUNT"])
RETRIES = int(os.environ["CONFORMANCE_RETRIES"])
COUNTDOWN = float(os.environ["CONFORMANCE_COUNTDOWN_S"])

work_exchange = Exchange(QUEUE, type="direct", durable=True)
dlx = Exchange(QUEUE + ".dlx", type="direct", durable=True)
work_queue = Queue(QUEUE, work_exchange, routing_key=QUEUE, durable=True,
                   queue_arguments={"x-dead-letter-exchange": dlx.name,
                                    "x-dead-letter-routing-key": QUEUE + ".dlq"})
dead_queue = Queue(QUEUE + ".dlq", dlx, routing_key=QUEUE + ".dlq", durable=True)

app = Celery("conformance", broker=URL)
app.conf.update(
    task_queues=[work_queue],
    task_default_queue=QUEUE,
    task_default_exchange=QUEUE,
    task_default_routing_key=QUEUE,
    # Nothing but the work queue on the broker: no result backend, no
    # events, no remote control (its pidbox queues).
    task_ignore_result=True,
    worker_send_task_events=False,
    worker_enable_remote_control=False,
    worker_hijack_root_logger=False,
    broker_connection_retry_on_startup=False,
    # The solo worker sends the reject of a task it ran from its eta timer
    # when its event loop next wakes: up to 10 s later when nothing else
    # wakes it. The AMQP heartbeat's checks wake it every 2 s.
    broker_heartbeat=4,
)


@app.task(bind=True, acks_late=True, max_retries=RETRIES, name="conformance.charge")
def charge(self, order):
    if self.request.retries < self.max_retries:
        raise self.retry(countdown=COUNTDOWN, exc=RuntimeError("card declined for order %s" % order))
    raise Reject("card declined for order %s, retries spent" % order, requeue=False)


def dlq_depth(conn):
    return dead_queue(conn.default_channel).queue_declare(passive=True).message_count


def main():
    with app.connection_for_write() as conn:
        ch = conn.default_channel
        work_queue(ch).declare()
        dead_queue(ch).declare()
    for i in range(COUNT):
        charge.apply_async(args=[i], task_id="%s-%d" % (QUEUE, i))

    def stop_when_done():
        # A connection of its own: the app's pool is the worker's.
        with Connection(URL) as conn:
            while dlq_depth(conn) < COUNT:
                time.sleep(0.05)
        # A warm shutdown: the solo worker finishes what it holds.
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=stop_when_done, daemon=True).start()
    app.worker_main(["worker", "--pool=solo", "--concurrency=1", "-Q", QUEUE,
                     "--without-gossip", "--without-mingle", "--without-heartbeat",
                     "--loglevel=WARNING"])
    with Connection(URL) as conn:
        print("celery: %d tasks in %s" % (dlq_depth(conn), dead_queue.name))


if __name__ == "__main__":
    sys.exit(main())
