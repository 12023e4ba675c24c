"""Real ``stoker worker`` processes on the local broker and a fresh PostgreSQL database.

Each test gets its own database and its own Celery queue (so other tests'
workers never see its messages); the workers run in process groups of
their own, so a test can SIGKILL one as a lost machine.  Tests skip, saying
why, when RabbitMQ, Redis or PostgreSQL cannot be reached.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from contextlib import contextmanager
from pathlib import Path

import pytest

from stoker.dispatch.distributed import CeleryDispatch
from stoker.engine.engine import Engine

PLUGINS = Path(__file__).parent / "plugins"
AMQP_URL = os.environ.get("STOKER_TEST_AMQP_URL", "amqp://guest:guest@127.0.0.1:5672//")
REDIS_URL = os.environ.get("STOKER_TEST_REDIS_URL", "redis://127.0.0.1:6379/3")
#: how long a test waits for a stack to settle before it fails (a bound, not a measurement)
SETTLE_LIMIT = 180


def reachable(broker: str) -> None:
    from kombu import Connection

    try:
        with Connection(broker, connect_timeout=3) as conn:
            conn.ensure_connection(max_retries=1)
    except Exception as error:  # any failure to connect means: not here
        pytest.skip(f"broker not reachable at {broker}: {error}")


class Cluster:
    """Workers, and an engine that dispatches to them."""

    def __init__(self, db_url: str, broker: str, tmp: Path):
        self.db_url, self.broker, self.tmp = db_url, broker, tmp
        self.queue = f"stoker-test-{uuid.uuid4().hex[:10]}"
        self.env = {**os.environ, "STOKER_HOME": str(tmp / "home")}
        self.env.pop("STOKER_BROKER_URL", None)
        self.workers: list[subprocess.Popen] = []
        self.engine = Engine(db_url=db_url, plugin_dirs=[str(PLUGINS)], dispatch=CeleryDispatch(broker, self.queue))

    def start_worker(self, concurrency: int = 1) -> subprocess.Popen:
        stoker = Path(sys.executable).parent / "stoker"
        log = open(self.tmp / f"worker-{len(self.workers)}.log", "w")
        worker = subprocess.Popen(
            [str(stoker), "--plugin-dir", str(PLUGINS), "worker", "--db-url", self.db_url, "--broker", self.broker,
             "--queues", self.queue, "--concurrency", str(concurrency)],
            env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        self.workers.append(worker)
        return worker

    def listening(self, count: int) -> None:
        """Wait until ``count`` workers take messages from the test's queue (RabbitMQ counts its
        consumers): a test that wants work spread over them must not start it while one still starts."""
        from kombu import Connection

        limit = time.monotonic() + SETTLE_LIMIT
        with Connection(self.broker, connect_timeout=3) as conn:
            while time.monotonic() < limit:
                channel = conn.channel()
                try:
                    if channel.queue_declare(self.queue, passive=True).consumer_count >= count:
                        return
                except conn.channel_errors:  # no worker has declared the queue yet
                    pass
                finally:
                    channel.close()
                time.sleep(0.1)
        raise AssertionError(f"fewer than {count} workers on {self.queue} after {SETTLE_LIMIT}s; logs in {self.tmp}")

    def kill(self, worker: subprocess.Popen) -> None:
        """SIGKILL the worker and its pool processes, as when its machine is lost."""
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait()

    def settle(self, stack_id: str) -> dict:
        """Wait until the stack's action ends; returns the stack."""
        from stoker.engine.summaries import stack_summary

        limit = time.monotonic() + SETTLE_LIMIT
        while time.monotonic() < limit:
            summary = stack_summary(self.engine.get_record(stack_id, show_deleted=True))
            if not summary["stack_status"].endswith("IN_PROGRESS"):
                return summary
            time.sleep(0.2)
        raise AssertionError(f"stack {stack_id} still in progress after {SETTLE_LIMIT}s; worker logs in {self.tmp}")

    def stop(self) -> None:
        """End the workers at once: the test is over, and a graceful stop (each worker waiting for
        its tasks) cost seconds a test; the tests of a worker's own shutdown signal it themselves."""
        for worker in self.workers:
            if worker.poll() is None:
                self.kill(worker)
        self.engine.close()
        from kombu import Connection, Exchange, Queue

        # celery's queue and the exchange of its name: declared again, so that this channel knows the binding
        # its delete removes (Redis keeps a binding apart from its queue), then both deleted
        queue = Queue(self.queue, Exchange(self.queue), routing_key=self.queue)
        with Connection(self.broker, connect_timeout=3) as conn:
            bound = queue.bind(conn.default_channel)
            bound.declare()
            bound.delete()
            bound.exchange.delete()


def _cluster(broker: str, new_pg_database, tmp_path):
    reachable(broker)
    with new_pg_database("stoker_dispatch") as database:
        cluster = Cluster(database.url.render_as_string(hide_password=False), broker, tmp_path)
        try:
            yield cluster
        finally:
            cluster.stop()


@pytest.fixture
def cluster(new_pg_database, tmp_path):
    """Through RabbitMQ (the default broker)."""
    yield from _cluster(AMQP_URL, new_pg_database, tmp_path)


@pytest.fixture
def redis_cluster(new_pg_database, tmp_path):
    """Through Redis (the alternative broker), database 3."""
    yield from _cluster(REDIS_URL, new_pg_database, tmp_path)


@pytest.fixture
def private_postgres():
    """A PostgreSQL server of the test's own, which it may stop and start again."""
    from .private_services import PrivatePostgres

    server = PrivatePostgres()
    try:
        yield server
    finally:
        server.remove()


@pytest.fixture
def private_redis(tmp_path_factory):
    """A redis-server of the test's own, which it may stop and start again."""
    from .private_services import PrivateRedis

    server = PrivateRedis(tmp_path_factory.mktemp("redis"))
    try:
        yield server
    finally:
        server.stop()


@contextmanager
def api_of(cluster: Cluster, monkeypatch):
    """A client of ``stoker api --broker`` enqueueing to the cluster's workers (project ``p``, which
    the cluster's engine then acts for too)."""
    from fastapi.testclient import TestClient

    from stoker.api.app import create_app

    monkeypatch.setenv("STOKER_QUEUE", cluster.queue)
    cluster.engine = cluster.engine.for_project("p")
    with TestClient(create_app(cluster.db_url, broker=cluster.broker, plugin_dirs=[str(PLUGINS)])) as client:
        yield client


def created_through(client, cluster: Cluster, name: str, template: dict) -> str:
    """The stack, created through the API and settled CREATE_COMPLETE; its id."""
    answer = client.post("/v1/p/stacks", json={"stack_name": name, "template": template})
    assert answer.status_code == 201, answer.text
    stack_id = answer.json()["stack"]["id"]
    assert cluster.settle(stack_id)["stack_status"] == "CREATE_COMPLETE"
    return stack_id
