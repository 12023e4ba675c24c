"""Where a stack's resource actions run: in this process (default) or on Celery workers.

Chosen by configuration, one code path either way: with no broker
configured every action runs in-process exactly as before; with a broker
(``--broker``, ``$STOKER_BROKER_URL`` or ``broker_url`` in ``stoker.conf``)
stack actions are spread over ``stoker worker`` processes, one resource
action per task, and workflow executions one operation step per task.
"""

from __future__ import annotations

import os
from typing import Any

from stoker.dispatch.inprocess import InProcess

__all__ = ["InProcess", "broker_url", "dispatcher", "queue_name"]


def broker_url(given: str | None = None) -> str | None:
    """The broker to use: given, else ``$STOKER_BROKER_URL``, else ``stoker.conf``'s ``broker_url``."""
    if given:
        return given
    if os.environ.get("STOKER_BROKER_URL"):
        return os.environ["STOKER_BROKER_URL"]
    from stoker.home import config

    return config().defaults().get("broker_url") or None


def queue_name(given: str | None = None) -> str:
    """The Celery queue actions go to: given, ``$STOKER_QUEUE``, ``stoker.conf``'s ``queue``, or ``stoker``."""
    from stoker.home import config

    return given or os.environ.get("STOKER_QUEUE") or config().defaults().get("queue") or "stoker"


def dispatcher(broker: str | None = None, queue: str | None = None) -> Any:
    """In-process without a broker; Celery workers with one."""
    url = broker_url(broker)
    if url is None:
        return InProcess()
    from stoker.dispatch.distributed import CeleryDispatch

    return CeleryDispatch(url, queue_name(queue))
