"""Writes that race on workers: operations of a workflow on two workers writing the runtime
properties of one node instance keep each other's writes (RabbitMQ, PostgreSQL)."""

from __future__ import annotations

import textwrap

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
