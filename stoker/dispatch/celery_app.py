"""The Celery application both sides share: the API side publishes, ``stoker worker`` consumes.

Late acknowledgement and reject-on-worker-lost make a task whose worker was
killed come back to another worker; one prefetched task per process keeps
a lost worker from taking others' work down with it.
"""

from __future__ import annotations

from typing import Any, Iterable

from celery import Celery

#: run (one step of) a resource's action in a traversal
RUN_NODE = "stoker.run_node"
#: run one step of a workflow execution
RUN_STEP = "stoker.run_step"
DEFAULT_QUEUE = "stoker"
#: publishing survives a broker restart of this long (about a minute)
PUBLISH_RETRY = {"max_retries": 30, "interval_start": 0.2, "interval_step": 0.5, "interval_max": 3}


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


def publish(app: Celery, queue: str, traversal_id: str, resource_ids: Iterable[int],
            countdown: float | None = None, step: int = 0, task: str = RUN_NODE) -> None:
    """Enqueue the nodes' tasks (one message each) on ``queue``, for their ``step``."""
    for resource_id in resource_ids:
        options: dict[str, Any] = {"queue": queue}
        if countdown:
            options["countdown"] = countdown
        app.send_task(task, args=[traversal_id, resource_id, queue, step], **options)
