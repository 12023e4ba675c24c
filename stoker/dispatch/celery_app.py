"""The Celery application both sides share: the API side publishes, ``stoker worker`` consumes.

Late acknowledgement and reject-on-worker-lost make a task whose worker was
killed come back to another worker; one prefetched task per process keeps
a lost worker from taking others' work down with it.
"""

from __future__ import annotations

from typing import Any, Iterable

from celery import Celery

#: the one task: run (one step of) a batch of a traversal's nodes (resource actions, or an execution's steps)
RUN_NODES = "stoker.run_nodes"
DEFAULT_QUEUE = "stoker"
#: publishing survives a broker restart of this long (about a minute)
PUBLISH_RETRY = {"max_retries": 30, "interval_start": 0.2, "interval_step": 0.5, "interval_max": 3}
#: ready nodes are cut into about this many tasks, so they spread over every worker slot...
SPREAD = 64
#: ...with no more nodes than this in one task
CHUNK_MAX = 250


def make_app(broker_url: str) -> Celery:
    app = Celery("stoker", broker=broker_url, set_as_current=False)
    app.conf.update(
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        task_serializer="json",
        accept_content=["json"],
        result_backend=None,
        task_ignore_result=True,
        task_publish_retry=True,
        task_publish_retry_policy=PUBLISH_RETRY,
        broker_connection_retry_on_startup=True,
        broker_connection_max_retries=None,
        worker_hijack_root_logger=False,
        worker_send_task_events=False,
        # Redis: a task not acknowledged within this time is given to another worker
        broker_transport_options={"visibility_timeout": 300},
    )
    return app


def chunk_size(count: int) -> int:
    """How many of ``count`` ready nodes one task takes: one each when they are few (each may be a
    slow action of its own), up to ``CHUNK_MAX`` when they are many."""
    return max(1, min(CHUNK_MAX, -(-count // SPREAD)))


def send(app: Celery, queue: str, traversal_id: str, nodes: Iterable[tuple[int, int]],
         countdown: float | None = None) -> None:
    """Enqueue one task for ``nodes`` ((resource id, step) pairs) on ``queue``."""
    nodes = [[resource_id, step] for resource_id, step in nodes]
    if not nodes:
        return
    # what logs show of the task, given: Celery's own repr of the arguments costs more than the message
    options: dict[str, Any] = {"queue": queue, "argsrepr": f"[{traversal_id!r}, {len(nodes)} nodes]",
                               "kwargsrepr": "{}"}
    if countdown:
        options["countdown"] = countdown
    app.send_task(RUN_NODES, args=[traversal_id, nodes, queue], **options)


def publish(app: Celery, queue: str, traversal_id: str, resource_ids: Iterable[int], batched: bool = True) -> None:
    """Enqueue ready nodes (their first step), cut in chunks (``chunk_size``) over the workers; one
    each when their kind runs no batches (``batched`` False: an update's resources, an execution's steps)."""
    ids = list(resource_ids)
    size = chunk_size(len(ids)) if batched else 1
    for first in range(0, len(ids), size):
        send(app, queue, traversal_id, [(resource_id, 0) for resource_id in ids[first:first + size]])
