"""Services restarted under running stacks: the stacks finish once the service is back.

The shared PostgreSQL and RabbitMQ are never restarted: each test starts
its own server (``private_services``) and restarts that one.
"""

from __future__ import annotations

import time

from .conftest import AMQP_URL, Cluster, reachable
from .test_workers import creates, recorded_template

#: how long a test waits for the first resources to be made (a bound, not a measurement)
FIRST_LIMIT = 60


def wait_for_creates(log, count):
    limit = time.monotonic() + FIRST_LIMIT
    while sum(creates(log).values()) < count:
        assert time.monotonic() < limit, f"fewer than {count} creates after {FIRST_LIMIT}s"
        time.sleep(0.1)


def finishes_across(cluster, tmp_path, restart):
    """Two workers create a chain of 6 held resources; ``restart`` runs once 2 are made; the stack
    must then complete with each resource made once and no FAILED event."""
    cluster.start_worker(), cluster.start_worker()
    log = tmp_path / "made.log"
    started = cluster.engine.create_stack("through", recorded_template(log, 6, hold=1.0, chain=True))
    wait_for_creates(log, 2)
    assert sum(creates(log).values()) < 6  # the restart comes mid-stack
    restart()

    done = cluster.settle(started["id"])
    assert done["stack_status"] == "CREATE_COMPLETE", done["stack_status_reason"]
    assert creates(log) == {f"r{i}": 1 for i in range(6)}
    assert not [e for e in cluster.engine.events("through") if e["resource_status"] == "FAILED"]


def restarting(server):
    def restart():
        server.stop()  # every connection drops; workers retry until it is back
        time.sleep(3)
        server.start()
    return restart


def test_a_postgresql_restart_mid_stack_fails_nothing(private_postgres, tmp_path):
    reachable(AMQP_URL)
    cluster = Cluster(private_postgres.url, AMQP_URL, tmp_path)
    try:
        finishes_across(cluster, tmp_path, restarting(private_postgres))
    finally:
        cluster.stop()


def test_a_redis_restart_mid_stack_fails_nothing(private_redis, new_pg_database, tmp_path):
    """Redis keeps the queue and the messages not acknowledged in its append-only file."""
    with new_pg_database("stoker_dispatch") as database:
        cluster = Cluster(database.url.render_as_string(hide_password=False), private_redis.url, tmp_path)
        try:
            finishes_across(cluster, tmp_path, restarting(private_redis))
        finally:
            cluster.stop()
