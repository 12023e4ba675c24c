"""``cfy deployments schedule ...`` and cloudify-rest-client's execution schedules against ``stoker api``: a
schedule made, listed, disabled and enabled, fired by the server's beat when due (once), summarized, refused
where its scripts would run on the host, and gone with its deployment."""

from __future__ import annotations

import json
import time
from datetime import datetime, timedelta, timezone

import pytest

from .conftest import PASSWORD, cfy_on, cloudify_server

pytestmark = pytest.mark.slow  # waits for the server's beat (every 5 s) to fire a schedule

pytest.importorskip("cloudify_rest_client")

NOOP = """tosca_definitions_version: cloudify_dsl_1_4
imports: [cloudify/types/types.yaml]
node_templates:
  app: {type: cloudify.nodes.Root}
"""
SCRIPTED = NOOP + """  tool:
    type: cloudify.nodes.Root
    interfaces: {cloudify.interfaces.lifecycle: {create: scripts/make.sh}}
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("schedules")
    started = cloudify_server(tmp, [("admin", "default_tenant", "manager")])  # scripts off: no local resources
    yield started
    started.stop()


def test_a_schedule_runs_when_due_and_cfy_manages_it(server, tmp_path):
    from cloudify_rest_client import CloudifyClient
    from cloudify_rest_client.exceptions import CloudifyClientError

    port = int(server.url.rsplit(":", 1)[1])
    client = CloudifyClient(host="127.0.0.1", port=port, username="admin", password=PASSWORD, tenant="default_tenant")
    for name, text in (("noop", NOOP), ("scripted", SCRIPTED)):
        folder = tmp_path / name
        (folder / "scripts").mkdir(parents=True)
        (folder / "blueprint.yaml").write_text(text)
        (folder / "scripts" / "make.sh").write_text("true\n")
        client.blueprints.upload(str(folder / "blueprint.yaml"), name)
        client.deployments.create(name, name)

    soon = datetime.now(timezone.utc).replace(tzinfo=None, microsecond=0) + timedelta(seconds=3)
    made = client.execution_schedules.create("once", "noop", "install", since=soon, count=1)
    assert made.next_occurrence and made["all_next_occurrences"] == [soon.strftime("%Y-%m-%d %H:%M:%S")]
    client.execution_schedules.create("weekly", "noop", "uninstall", since="2030-01-07", recurrence="1 week",
                                      weekdays=["mo", "fr"], slip=30)
    with pytest.raises(CloudifyClientError) as refused:
        client.execution_schedules.create("s", "scripted", "install", since=soon, count=1)
    assert refused.value.status_code == 403 and "script operations" in str(refused.value)
    with pytest.raises(CloudifyClientError) as bad:
        client.execution_schedules.create("s", "noop", "install", since=soon, recurrence="3 fortnights")
    assert bad.value.status_code == 400 and "not a legal recurrence expression" in str(bad.value)

    deadline = time.monotonic() + 30
    while client.execution_schedules.get("once", "noop")["latest_execution_status"] != "terminated":
        assert time.monotonic() < deadline, "the schedule did not run"
        time.sleep(0.2)
    assert [(e.workflow_id, e.status) for e in client.executions.list(deployment_id="noop")] == [
        ("install", "terminated")]
    assert client.execution_schedules.get("once", "noop").next_occurrence is None  # ran its one time

    cfy = cfy_on(server, tmp_path)
    listed = json.loads(cfy("deployments", "schedule", "list", "--json"))
    assert sorted((s["id"], s["deployment_id"]) for s in listed) == [("once", "noop"), ("weekly", "noop")]
    cfy("deployments", "schedule", "disable", "noop", "weekly")
    assert client.execution_schedules.get("weekly", "noop").enabled is False
    cfy("deployments", "schedule", "enable", "noop", "weekly")
    weekly = client.execution_schedules.get("weekly", "noop")
    assert weekly.enabled and weekly["rule"] == {"recurrence": "1 week", "count": None, "weekdays": ["MO", "FR"]}
    assert weekly["all_next_occurrences"][:2] == ["2030-01-07 00:00:00", "2030-01-11 00:00:00"]
    summary = client.summary.execution_schedules.get(_target_field="workflow_id")
    assert sorted((i["workflow_id"], i["execution_schedules"]) for i in summary) == [("install", 1),
                                                                                      ("uninstall", 1)]
    cfy("deployments", "schedule", "delete", "noop", "once")
    client.executions.start("noop", "uninstall")
    deadline = time.monotonic() + 30
    while any(e.status not in ("terminated", "failed") for e in client.executions.list(deployment_id="noop")):
        assert time.monotonic() < deadline
        time.sleep(0.2)
    client.deployments.delete("noop")
    assert list(client.execution_schedules.list()) == []


def test_a_dry_run_schedule_starts_dry_runs(server, tmp_path):
    """``execution_arguments: {dry_run: true}`` (``cfy deployments schedule create ... --dry-run``): its runs walk
    the workflow and change no instance, as ``cfy executions start --dry-run``."""
    from cloudify_rest_client import CloudifyClient

    port = int(server.url.rsplit(":", 1)[1])
    client = CloudifyClient(host="127.0.0.1", port=port, username="admin", password=PASSWORD, tenant="default_tenant")
    (tmp_path / "blueprint.yaml").write_text(NOOP)
    client.blueprints.upload(str(tmp_path / "blueprint.yaml"), "dry")
    client.deployments.create("dry", "dry")
    soon = datetime.now(timezone.utc).replace(tzinfo=None, microsecond=0) + timedelta(seconds=2)
    made = client.execution_schedules.create("dry", "dry", "install", since=soon, count=1,
                                             execution_arguments={"dry_run": True})
    assert made["execution_arguments"]["is_dry_run"] is True
    deadline = time.monotonic() + 30
    while client.execution_schedules.get("dry", "dry")["latest_execution_status"] != "terminated":
        assert time.monotonic() < deadline, "the schedule did not run"
        time.sleep(0.2)
    [execution] = client.executions.list(deployment_id="dry")
    assert execution.is_dry_run is True
    assert [i.state for i in client.node_instances.list(deployment_id="dry")] == ["uninitialized"]
