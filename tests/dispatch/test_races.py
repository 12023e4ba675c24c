"""Writes that race on workers: operations of a workflow on two workers writing the runtime
properties of one node instance keep each other's writes; a signal stored while a worker acts on
its resource keeps its data key (RabbitMQ, PostgreSQL)."""

from __future__ import annotations

import textwrap

from .test_cancel import wait_for
from .test_executions import HEADER, finish, instances


#: each app instance's relationship operation writes a key of its own into the one db instance
STAMP = """\
set -e
me=$(ctx source instance id)
sleep 0.3
ctx target instance runtime-properties "seen.$me" yes
ctx target instance runtime-properties "last" "$me"
"""


def test_relationship_operations_on_two_workers_lose_no_write_to_their_shared_target(cluster, tmp_path):
    cluster.start_worker(concurrency=2), cluster.start_worker(concurrency=2)
    folder = tmp_path / "bp"
    (folder / "scripts").mkdir(parents=True)
    (folder / "scripts" / "stamp.sh").write_text(STAMP)
    (folder / "blueprint.yaml").write_text(HEADER + textwrap.dedent("""\
        node_templates:
          db: {type: cloudify.nodes.Root}
          app:
            type: cloudify.nodes.Root
            capabilities: {scalable: {properties: {default_instances: 8}}}
            relationships:
              - type: cloudify.relationships.connected_to
                target: db
                source_interfaces:
                  cloudify.interfaces.relationship_lifecycle:
                    establish: scripts/stamp.sh
        """))
    cluster.engine.blueprints.upload(folder / "blueprint.yaml", "bp")
    cluster.engine.blueprints.deployments.create("dep", "bp", {})

    done = finish(cluster, cluster.engine.executions.start("install", "dep"))
    assert done["status"] == "terminated", done["error"]
    apps = sorted(i["id"] for i in instances(cluster).values() if i["node_id"] == "app")
    db, = (i for i in instances(cluster).values() if i["node_id"] == "db")
    assert db["runtime_properties"]["seen"] == {app: "yes" for app in apps}  # every writer's key kept
    assert db["runtime_properties"]["last"] in apps


def test_a_signal_stored_while_a_worker_creates_its_resource_keeps_its_key_through_the_workers_write(
        cluster, tmp_path):
    """The worker loaded the resource's data before the signal was stored; what the create writes
    after it (a key of its own) is an edit of that key, not the data as the worker loaded it."""
    cluster.start_worker()
    ready, go = tmp_path / "ready", tmp_path / "go"
    started = cluster.engine.create_stack("signalled", {"heat_template_version": "2018-08-31", "resources": {
        "sig": {"type": "Test::Signalled", "properties": {"ready": str(ready), "go": str(go)}}}})
    wait_for(ready.exists, "the create waiting")
    cluster.engine.signal("signalled", "sig", {"id": "one", "status": "SUCCESS"})
    go.touch()

    done = cluster.settle(started["id"])
    assert done["stack_status"] == "CREATE_COMPLETE", done["stack_status_reason"]
    row, = cluster.engine.store.get_resources(started["id"])
    assert row.data == {"signal-one": {"id": "one", "status": "SUCCESS"}, "made": "yes"}
