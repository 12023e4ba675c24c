"""``cfy executions start --schedule`` and cloudify-rest-client's ``schedule`` against ``stoker api``: as Cloudify 7
keeps it, a schedule that runs the workflow once (listed by ``cfy deployments schedule list``), answered as a
``scheduled`` execution with its ``scheduled_for``; the server's scheduler starts it when due and it ends on its
own; deleting the schedule cancels it; a past or malformed time is refused with Cloudify's message.  And
``stoker execution start --schedule`` storing the same schedule locally."""

from __future__ import annotations

import json
import time
from datetime import datetime, timedelta, timezone

import pytest
from click.testing import CliRunner

from stoker.cli import main

from ..helpers import create_token
from .conftest import NOOP, cfy_on, cloudify_server, rest_client

pytestmark = pytest.mark.slow  # `cfy` commands are processes of their own; a schedule is due in seconds

pytest.importorskip("cloudify_rest_client")



@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("scheduled")
    started = cloudify_server(tmp, [("admin", "default_tenant", "manager"), ("eve", "default_tenant", "viewer")],
                              env={"STOKER_API_SCHEDULES_LOOK": "0.3"})
    yield started
    started.stop()


def _upload(client, folder, name: str) -> None:
    folder.mkdir(parents=True)
    (folder / "blueprint.yaml").write_text(NOOP)
    client.blueprints.upload(str(folder / "blueprint.yaml"), name)


def _in(seconds: float) -> datetime:
    return datetime.now(timezone.utc).replace(microsecond=0) + timedelta(seconds=seconds)


def test_a_scheduled_execution_waits_then_runs_and_ends_on_its_own(server, tmp_path):
    cfy = cfy_on(server, tmp_path)
    client = rest_client(server)
    _upload(client, tmp_path / "noop", "noop")
    client.deployments.create("noop", "d1")

    cancelled = client.executions.start("d1", "uninstall", schedule=_in(3).isoformat())
    assert cancelled.status == "scheduled" and cancelled.id is None
    assert (cancelled.deployment_id, cancelled.workflow_id) == ("d1", "uninstall")
    [schedule] = client.execution_schedules.list(deployment_id="d1")
    assert schedule.workflow_id == "uninstall" and cancelled.scheduled_for.startswith(schedule.next_occurrence[:19])
    client.execution_schedules.delete(schedule.id, "d1")  # a scheduled execution cancelled (well before it is due)

    due = _in(6)  # cfy (a process, on a busy machine) answers well before
    out = cfy("executions", "start", "install", "-d", "d1", "--schedule", due.isoformat())
    assert f"Execution is scheduled for {due.isoformat()}" in out
    [schedule] = client.execution_schedules.list(deployment_id="d1")
    waiting = client.executions.list(deployment_id="d1").items
    answered = datetime.now(timezone.utc)
    assert schedule.id.startswith("install_") and schedule["rule"] == {"recurrence": None, "count": 1, "weekdays": None}
    if answered < due:  # (a loaded machine may have made cfy answer after it was due)
        assert schedule["all_next_occurrences"] == [due.strftime("%Y-%m-%d %H:%M:%S")]
        assert waiting == []  # nothing stored, nothing blocks the deployment
    assert schedule.id in cfy("deployments", "schedule", "list", "d1")

    deadline = time.monotonic() + 30
    while [e.status for e in client.executions.list(deployment_id="d1")] != ["terminated"]:
        assert time.monotonic() < deadline, "the scheduled execution did not run"
        time.sleep(0.2)
    ran = client.executions.list(deployment_id="d1")[0]
    assert ran.workflow_id == "install" and datetime.fromisoformat(ran.created_at.rstrip("Z")) >= due.replace(
        tzinfo=None)
    kept = client.execution_schedules.get(schedule.id, "d1")
    assert kept["latest_execution"] == ran.id and kept.next_occurrence is None  # it ran its one time
    assert [n.state for n in client.node_instances.list(deployment_id="d1")] == ["started"]
    assert [e.workflow_id for e in client.executions.list(deployment_id="d1")] == ["install"]  # the cancelled one never ran


def test_a_time_in_cfys_form_is_read_with_its_offset(server, tmp_path):
    client = rest_client(server)
    _upload(client, tmp_path / "noop", "offset")
    client.deployments.create("offset", "d2")
    later = (datetime.now(timezone(timedelta(hours=-5))) + timedelta(days=2)).replace(second=0, microsecond=0)
    answered = client.executions.start("d2", "install", schedule=later.strftime("%Y%m%d%H%M-0500"))
    utc = later.astimezone(timezone.utc).replace(tzinfo=None)
    assert answered.scheduled_for == utc.strftime("%Y-%m-%dT%H:%M:%S.000Z")
    assert client.execution_schedules.list(deployment_id="d2")[0].next_occurrence.startswith(
        utc.strftime("%Y-%m-%dT%H:%M:%S"))


def test_past_malformed_and_unknown_are_refused(server, tmp_path):
    from cloudify_rest_client.exceptions import CloudifyClientError

    cfy = cfy_on(server, tmp_path)
    client = rest_client(server)
    _upload(client, tmp_path / "noop", "refused")
    client.deployments.create("refused", "d3")
    for when, said in (("201801182230-0500", "Date `201801182230-0500` has already passed, please provide valid date."),
                       ("soon-ish", "Date `soon-ish` is not a valid date, please provide valid date."),
                       ("2030-02-30T10:00:00+00:00", "is not a valid date")):
        with pytest.raises(CloudifyClientError) as refused:
            client.executions.start("d3", "install", schedule=when)
        assert refused.value.status_code == 400 and refused.value.error_code == "bad_parameters_error"
        assert said in str(refused.value) and "Expected format: YYYYMMDDHHMM+HHMM" in str(refused.value)
    assert "has already passed" in cfy("executions", "start", "install", "-d", "d3", "--schedule",
                                       "201801182230-0500", ok=False)
    with pytest.raises(CloudifyClientError) as missing:
        client.executions.start("nowhere", "install", schedule=_in(60).isoformat())
    assert missing.value.status_code == 404
    with pytest.raises(CloudifyClientError) as unknown:
        client.executions.start("d3", "no_such_workflow", schedule=_in(60).isoformat())
    assert unknown.value.status_code == 404
    with pytest.raises(CloudifyClientError) as viewer:
        rest_client(server, "eve").executions.start("d3", "install", schedule=_in(60).isoformat())
    assert viewer.value.status_code == 403
    assert client.execution_schedules.list(deployment_id="d3").items == []


def test_stoker_execution_start_schedule_stores_it_here(here):
    from stoker.engine.engine import Engine

    assert here("deployment", "create", "d", "-b", "bp").exit_code == 0
    due = _in(3600)
    done = here("execution", "start", "install", "-d", "d", "--schedule", due.isoformat())
    assert done.exit_code == 0, done.output
    assert "scheduled" in done.stdout and "a `stoker api` server over this database starts it" in done.stderr
    [kept] = Engine(db_url=here.db_url).blueprints.schedules.list("d")
    assert kept["workflow_id"] == "install" and kept["rule"]["count"] == 1 and kept["id"] in done.stderr
    assert kept["next_occurrence"].replace(tzinfo=None) == due.replace(tzinfo=None)
    refused = here("execution", "start", "install", "-d", "d", "--schedule", "2001-01-01T00:00:00Z")
    assert refused.exit_code == 1 and "has already passed" in refused.output
    assert here("execution", "list", "-f", "json").stdout.strip() == "[]"


def test_stoker_over_url_schedules_and_deletes_through_the_server(server, tmp_path):
    client = rest_client(server)
    _upload(client, tmp_path / "noop", "remote")
    client.deployments.create("remote", "d4")
    token = create_token(server.db_url, "default_tenant")

    def stoker(*args: str):
        return CliRunner().invoke(main, ["--url", f"{server.url}/v1/default_tenant", "--token", token, *args],
                                  env={"STOKER_HOME": str(tmp_path / "client-home")}, catch_exceptions=False)

    due = _in(3600)
    done = stoker("execution", "start", "install", "-d", "d4", "--schedule", due.isoformat(), "-f", "json")
    assert done.exit_code == 0, done.output
    answered = json.loads(done.stdout)
    assert (answered["status"], answered["scheduled_for"]) == ("scheduled", due.strftime("%Y-%m-%dT%H:%M:%S.000Z"))
    assert [s.id for s in client.execution_schedules.list(deployment_id="d4")] == [answered["schedule_id"]]
    refused = stoker("execution", "start", "install", "-d", "d4", "--schedule", "yesterday-ish")
    assert refused.exit_code == 1 and "is not a valid date" in refused.output

    for workflow in ("install", "uninstall"):
        ran = client.executions.start("d4", workflow)
        deadline = time.monotonic() + 30
        while client.executions.get(ran.id).status != "terminated":
            assert time.monotonic() < deadline
            time.sleep(0.1)
    deleted = stoker("execution", "delete", "--keep-last", "1", "-d", "d4")
    assert deleted.exit_code == 0 and "Deleted 1 executions" in deleted.output
    assert [e.workflow_id for e in client.executions.list(deployment_id="d4")] == ["uninstall"]
