"""The application factory: ``create_app(db_url, auth_mode)``.

``uvicorn --factory stoker.api.app:app_from_env`` builds the same app from
environment variables (how ``stoker api --workers N`` hands its settings to
each worker process): ``STOKER_API_DB_URL``, ``STOKER_API_AUTH`` (``token`` or
``noauth``), ``STOKER_API_PLUGIN_DIRS`` (``os.pathsep``-separated),
``STOKER_API_MAX_BODY`` (bytes), ``STOKER_API_ACTION_THREADS`` (per project), ``STOKER_API_DEBUG``,
``STOKER_API_ALLOW_LOCAL`` (``1``: every project may use local resource types), ``STOKER_API_SCHEDULES_LOOK``
(seconds between two looks for due execution schedules; 5 by default).
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, Iterable

import anyio.to_thread
from fastapi import FastAPI

from stoker.api.auth import Authenticator, TokenStore
from stoker.api.body import MAX_JSON_BODY_SIZE
from stoker.api.error_bodies import install_handlers
from stoker.api.background import Runner
from stoker.api.hot_routes import install as install_hot_routes
from stoker.api.loopback import LoopbackManager
from stoker.dispatch.heartbeat import beating
from stoker.store.locks import ENGINE_BEAT, this_process
from stoker.store.keypairs import KeypairStore
from stoker.store.software import SoftwareStore
from stoker.limits import api_max_resources
from stoker.template.loader import kept_frozen
from stoker.workflows import rest_manager

ENV_PREFIX = "STOKER_API_"
LOG = logging.getLogger("stoker.api")


@dataclass
class State:
    engine: Any
    runner: Runner
    auth: Authenticator
    software: SoftwareStore
    auth_mode: str
    keypairs: KeypairStore


def create_app(db_url: str | None = None, auth_mode: str = "noauth", plugin_dirs: Iterable[str] = (),
               max_body_size: int = MAX_JSON_BODY_SIZE, action_threads: int = 4,
               debug: bool = False, engine: Any = None, broker: str | None = None,
               allow_local_resources: bool = False) -> FastAPI:
    """A Heat-compatible API over one database.  ``auth_mode`` is ``token`` or ``noauth``;
    with a ``broker`` (or one configured) stack actions run on ``stoker worker`` processes.

    Resource types acting on the server host are off unless ``allow_local_resources``
    or ``stoker.conf`` turns them on (``stoker/resources/policy.py``).
    """
    from stoker.dispatch import dispatcher
    from stoker.engine.engine import Engine
    from stoker.resources.policy import TypePolicy

    if engine is None:
        engine = Engine(db_url=db_url or os.environ.get("STOKER_DB_URL"), plugin_dirs=list(plugin_dirs),
                        dispatch=dispatcher(broker))
    for problem in engine.registry.problems:
        LOG.warning("plug-in %s", problem)
    engine.type_policy = TypePolicy.from_config(allow_local=allow_local_resources)
    engine.max_resources = api_max_resources()
    engine.max_resources_setting = "max_resources_per_stack"
    sa_engine = engine.store.engine
    tokens = TokenStore(sa_engine)
    state = State(engine=engine, runner=Runner(action_threads),
                  auth=Authenticator(auth_mode, tokens), software=SoftwareStore(sa_engine),
                  auth_mode=auth_mode, keypairs=KeypairStore(sa_engine))

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        # actions a stopped (or dead) server left go on at once, not after a lock timeout;
        # while this one serves, those of a server that dies meanwhile do too
        process = this_process()
        await asyncio.to_thread(engine.store.register_process, process)
        await asyncio.to_thread(state.runner.resume_abandoned, engine)
        pruning = asyncio.create_task(_prune_request_threads())
        with beating(lambda: _beat(state, process), every=ENGINE_BEAT), \
                beating(lambda: _fire_schedules(state), every=schedules_look()), kept_frozen():
            yield
        pruning.cancel()
        await asyncio.to_thread(state.runner.stop, engine)
        await asyncio.to_thread(engine.store.unregister_process, process)

    app = FastAPI(title="Stoker Orchestration API", version="1.0",
                  description="OpenStack Heat's Orchestration API v1, served by Stoker.",
                  lifespan=lifespan, redirect_slashes=True)
    app.state.stoker = state
    app.state.max_body_size = max_body_size
    install_handlers(app, debug=debug)
    from stoker.api.routes import all_routers

    for router in all_routers():
        app.include_router(router)
    from stoker.api.cloudify import install as install_cloudify

    install_cloudify(app, auth_mode, tokens)
    install_hot_routes(app)
    return app


#: seconds between two looks for due execution schedules
SCHEDULES_LOOK = 5.0
def schedules_look() -> float:
    """Seconds between two looks for due schedules: ``SCHEDULES_LOOK``, or ``STOKER_API_SCHEDULES_LOOK`` (a test's
    schedule due in a second or two runs without a wait)."""
    given = os.environ.get(ENV_PREFIX + "SCHEDULES_LOOK")
    try:
        return max(0.1, float(given)) if given else SCHEDULES_LOOK
    except ValueError:
        LOG.warning("%sSCHEDULES_LOOK=%r is not a number of seconds: looking every %s s", ENV_PREFIX, given,
                    SCHEDULES_LOOK)
        return SCHEDULES_LOOK


#: seconds between two looks at the request threads (anyio ends those idle for 10 s)
PRUNE_EVERY = 5.0


async def _prune_request_threads() -> None:
    """End the request threads left idle after a burst.  The routes that are plain functions run in
    anyio's threads, which end only when a later call finds them idle for 10 s: after a burst of
    requests and silence, a server kept them all.  A call every few seconds lets them go."""
    while True:
        await asyncio.sleep(PRUNE_EVERY)
        await anyio.to_thread.run_sync(_nothing)


def _nothing() -> None:
    """What a pruning call runs."""


def _beat(state: State, process: str) -> None:
    """This server is alive; the actions of servers that died go on here."""
    try:
        state.engine.store.beat_process(process)
        state.runner.resume_abandoned(state.engine, handed_back=False)
    except Exception:  # the database away for a moment: the next beat tries again
        LOG.exception("server heartbeat failed")


def _fire_schedules(state: State) -> None:
    """Start the runs of the execution schedules due now (a thread of their own: walking a rule may take
    seconds, the heartbeat never waits for it)."""
    from stoker.api.cloudify.routes.schedules import fire

    try:
        fire(state)
    except Exception:  # the database away for a moment: the next look tries again
        LOG.exception("execution schedules not looked at")


def settings_to_env(db_url: str | None, auth_mode: str, plugin_dirs: Iterable[str] = (),
                    max_body_size: int | None = None, action_threads: int | None = None,
                    debug: bool = False, broker: str | None = None,
                    allow_local_resources: bool = False) -> dict[str, str]:
    env = {ENV_PREFIX + "AUTH": auth_mode, ENV_PREFIX + "PLUGIN_DIRS": os.pathsep.join(plugin_dirs),
           ENV_PREFIX + "ALLOW_LOCAL": "1" if allow_local_resources else ""}
    if broker:
        env[ENV_PREFIX + "BROKER"] = broker
    if db_url:
        env[ENV_PREFIX + "DB_URL"] = db_url
    if max_body_size is not None:
        env[ENV_PREFIX + "MAX_BODY"] = str(max_body_size)
    if action_threads is not None:
        env[ENV_PREFIX + "ACTION_THREADS"] = str(action_threads)
    if debug:
        env[ENV_PREFIX + "DEBUG"] = "1"
    return env


def loopback_manager(allow_local_resources: bool, broker: str | None = None,
                     queue: str | None = None) -> LoopbackManager:
    """This process's loopback REST manager (``workflows.rest_manager.provide``): the API plugin tasks
    reach, tokens only, over the task's store, nothing started beside the routes (this process's own
    engine keeps its actions); executions a plugin starts there follow ``allow_local_resources`` and go
    where this process's own go: with a broker (``dispatch.broker_url``), to the workers on ``queue``."""
    from stoker.dispatch import dispatcher
    from stoker.engine.engine import Engine

    return LoopbackManager(lambda store: create_app(
        engine=Engine(store=store, dispatch=dispatcher(broker, queue)), auth_mode="token",
        allow_local_resources=allow_local_resources))


def _passphrase_hidden(record: logging.LogRecord) -> bool:
    """An access log line (``--log-level debug``) never shows a passphrase: ``cfy secrets export -p`` sends it
    in the query."""
    args = record.args
    if isinstance(args, tuple) and len(args) > 2 and "_passphrase=" in str(args[2]):
        record.args = (*args[:2], re.sub(r"(_passphrase=)[^&]*", r"\1******", str(args[2])), *args[3:])
    return True


def app_from_env() -> FastAPI:
    """The factory uvicorn calls in each worker process (whose plugin tasks reach the API on a loopback port)."""
    logging.getLogger("uvicorn.access").addFilter(_passphrase_hidden)
    env = os.environ
    rest_manager.provide(lambda: loopback_manager(env.get(ENV_PREFIX + "ALLOW_LOCAL") == "1",
                                                  env.get(ENV_PREFIX + "BROKER")))
    dirs = [d for d in env.get(ENV_PREFIX + "PLUGIN_DIRS", "").split(os.pathsep) if d]
    return create_app(
        db_url=env.get(ENV_PREFIX + "DB_URL") or env.get("STOKER_DB_URL"),
        auth_mode=env.get(ENV_PREFIX + "AUTH", "noauth"),
        plugin_dirs=dirs,
        max_body_size=int(env.get(ENV_PREFIX + "MAX_BODY") or MAX_JSON_BODY_SIZE),
        action_threads=int(env.get(ENV_PREFIX + "ACTION_THREADS") or 4),
        debug=env.get(ENV_PREFIX + "DEBUG") == "1",
        broker=env.get(ENV_PREFIX + "BROKER"),
        allow_local_resources=env.get(ENV_PREFIX + "ALLOW_LOCAL") == "1",
    )
