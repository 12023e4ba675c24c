"""Stoker's Cloudify REST API on a loopback port of this process: the manager plugin tasks talk to.

A process running plugin operations (``stoker install``, ``stoker api``, each
``stoker worker`` process) serves the API over the database it runs them on,
from a thread, on ``127.0.0.1`` and a port the system picks: started by the
first task that needs it, kept for the process's life (a later execution
reuses it), never reachable from another host.  It takes only tokens
(``auth token``); each task gets one of its own project, which acts as that
tenant's manager and is deleted when the task ends, so a plugin reaches its own
tenant and nothing else, and only while it runs (give or take the API's 5 s
memory of checked tokens, ``identity.CACHE_SECONDS``).  Because the database is
what is shared, a worker on another machine serves the same deployments
through its own loopback port.
"""

from __future__ import annotations

import socket
import threading
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Callable

from sqlalchemy import delete

from stoker.api.auth import TokenStore
from stoker.store.api_tables import TOKENS
from stoker.workflows.rest_manager import RestAccess

HOST = "127.0.0.1"
#: a task's token stops working after this even if its release never came (the process was killed)
TASK_TOKEN_LIFETIME = timedelta(hours=6)


@dataclass
class _Served:
    store: Any
    port: int
    server: Any
    thread: threading.Thread
    tokens: TokenStore


class LoopbackManager:
    """One loopback server per database this process runs plugin tasks on, serving ``make_app(store)``
    (``api.app.loopback_manager``)."""

    def __init__(self, make_app: Callable[[Any], Any]) -> None:
        self.make_app = make_app
        self._served: dict[int, _Served] = {}
        self._lock = threading.Lock()

    def grant(self, store: Any, project_id: str, purpose: str) -> RestAccess:
        served = self._serving(store)
        issued = served.tokens.create(project_id, description=purpose, expires_in=TASK_TOKEN_LIFETIME)
        return RestAccess(HOST, served.port, "http", issued.token, issued.id)

    def release(self, store: Any, access: RestAccess) -> None:
        with store.engine.execution_options(stoker_write=True).begin() as conn:
            conn.execute(delete(TOKENS).where(TOKENS.c.id == access.grant_id))

    def close(self) -> None:
        """Stop every server (a test's end; a process's servers otherwise end with it)."""
        with self._lock:
            served, self._served = list(self._served.values()), {}
        for one in served:
            one.server.should_exit = True
            one.thread.join(timeout=10)

    def _serving(self, store: Any) -> _Served:
        with self._lock:
            found = self._served.get(id(store))
            if found is None or found.store is not store:
                found = self._served[id(store)] = _serve(store, self.make_app(store))
            return found


def _serve(store: Any, app: Any) -> _Served:
    import uvicorn

    # TCP by protocol too: asyncio turns Nagle's algorithm off only for such sockets (api_cmds.serve)
    listening = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listening.bind((HOST, 0))
    listening.listen(128)  # connections wait in the backlog until the server's loop takes them
    server = uvicorn.Server(uvicorn.Config(app, lifespan="off", log_level="warning", access_log=False))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listening]}, name="stoker-loopback-api",
                              daemon=True)
    thread.start()
    return _Served(store, listening.getsockname()[1], server, thread, TokenStore(store.engine))
