"""``cfy executions delete`` and cloudify-rest-client's ``executions.delete`` against ``stoker api``: ended
executions go with their events and logs, but the newest ``--keep-last`` ones, those created from ``--to`` on, a
running one, and those a deployment update, a schedule or an unfinished execution group still reads; Cloudify's
refusals.  And ``stoker execution delete`` here."""

from __future__ import annotations

import json
import sqlite3
import time
from datetime import datetime, timedelta, timezone

import pytest

from box_blueprint import write_box
from .conftest import NOOP, cfy_on, cloudify_server, rest_client

pytestmark = pytest.mark.slow  # `cfy` commands are processes of their own

pytest.importorskip("cloudify_rest_client")

ENDED = ("terminated", "failed", "cancelled")


@pytest.fixture
def server(tmp_path):
    (tmp_path / "server").mkdir()
    started = cloudify_server(tmp_path / "server", [("admin", "default_tenant", "manager"),
                                                    ("eve", "default_tenant", "viewer"),
                                                    ("mia", "default_tenant", "user"), ("mia", "other_tenant", "viewer")],
                              extra=("--allow-local-resources",), env={"STOKER_API_SCHEDULES_LOOK": "0.3"})
    yield started
    started.stop()


def _ended(client, execution_id: str, bound: float = 60) -> str:
    deadline = time.monotonic() + bound
    while (status := client.executions.get(execution_id).status) not in ENDED:
        assert time.monotonic() < deadline, f"execution {execution_id} still {status}"
        time.sleep(0.1)
    return status


def _run(client, deployment_id: str, workflow_id: str) -> str:
    execution = client.executions.start(deployment_id, workflow_id)
    assert _ended(client, execution.id) == "terminated"
    return execution.id


def _events_by_execution(server) -> dict[str, int]:
    """How many events and logs the database keeps, by execution id (None: of no execution)."""
    with sqlite3.connect(server.db_url.removeprefix("sqlite:///")) as db:
        rows = db.execute("SELECT e.id, count(*) FROM execution_event v LEFT JOIN execution e "
                          "ON e.pk = v.execution_pk GROUP BY e.id").fetchall()
    return dict(rows)


def _waiting_box(client, folder, name: str):
    """A blueprint whose install waits for ``folder/go``; the file that lets it end."""
    go = folder / "go"
    client.blueprints.upload(str(write_box(folder, f"while [ ! -e {go} ]; do sleep 0.1; done\n")), name)
    return go


def test_cfy_keeps_the_newest_ended_and_the_running_and_deletes_the_rest_with_their_events(server, tmp_path):
    from cloudify_rest_client.exceptions import CloudifyClientError

    cfy = cfy_on(server, tmp_path)
    client = rest_client(server)
    (tmp_path / "noop").mkdir()
    (tmp_path / "noop" / "blueprint.yaml").write_text(NOOP)
    client.blueprints.upload(str(tmp_path / "noop" / "blueprint.yaml"), "noop")
    go = _waiting_box(client, tmp_path / "waiting", "waiting")
    client.deployments.create("noop", "a")
    client.deployments.create("waiting", "b")
    first, second, newest = _run(client, "a", "install"), _run(client, "a", "uninstall"), _run(client, "a", "install")
    running = client.executions.start("b", "install").id
    before = _events_by_execution(server)
    assert before[first] > 0 and before[second] > 0 and before[newest] > 0

    assert "Deleted 2 executions" in cfy("executions", "delete", "--keep-last", "1")
    assert sorted((e.id, e.status) for e in client.executions.list()) == sorted(
        [(newest, "terminated"), (running, "started")])
    after = _events_by_execution(server)
    assert first not in after and second not in after and None not in after  # their events and logs went too
    assert after[newest] == before[newest]
    with pytest.raises(CloudifyClientError) as gone:
        client.executions.get(first)
    assert gone.value.status_code == 404
    assert "No executions to delete" in cfy("executions", "delete", "--keep-last", "1")

    assert "No executions to delete" in cfy("executions", "delete", "--to", "2001-01-01")  # all created later
    go.write_text("")
    assert _ended(client, running) == "terminated"
    ahead = datetime.now(timezone.utc).replace(tzinfo=None) + timedelta(minutes=1)
    assert client.executions.delete(to_datetime=ahead, deployment_id="b") == 1  # a filter: a's stays
    assert [e.id for e in client.executions.list()] == [newest]


def test_refusals(server, tmp_path):
    from cloudify_rest_client.exceptions import CloudifyClientError

    client = rest_client(server)

    def refused(code: int, **body) -> str:
        with pytest.raises(CloudifyClientError) as caught:
            client.executions.api.delete("/executions", data=body.pop("data", {}), params=body,
                                         expected_status_code=200)
        assert caught.value.status_code == code
        return str(caught.value)

    assert "Must provide either a `to_datetime` timestamp or a `keep_last` number of executions to keep" in refused(
        400, data={"keep_last": 1, "to_datetime": "2020-01-01"})
    assert "`keep_last` must be an integer greater than 0. got 0 instead." in refused(400, data={"keep_last": 0})
    assert "got many instead" in refused(400, data={"keep_last": "many"})
    assert "not a legal time format" in refused(400, data={"to_datetime": "yesterday"})
    assert ("Can't filter by execution status `started`. Allowed statuses are: ['terminated', 'failed', "
            "'cancelled']") in refused(400, status="started")
    assert "not found" in refused(404, deployment_id="nowhere")
    with pytest.raises(CloudifyClientError) as viewer:
        rest_client(server, "eve").executions.delete(keep_last=1)
    assert viewer.value.status_code == 403
    cfy = cfy_on(server, tmp_path)
    assert "mutually exclusive" in cfy("executions", "delete", "--keep-last", "1", "--to", "2020-01-01", ok=False)


def test_all_tenants_covers_the_tenants_where_the_caller_may_delete(server, tmp_path):
    (tmp_path / "noop").mkdir()
    (tmp_path / "noop" / "blueprint.yaml").write_text(NOOP)
    ran = {}
    for tenant in ("default_tenant", "other_tenant"):
        operator = rest_client(server, "admin", tenant)  # the operator acts in every tenant as its manager
        operator.blueprints.upload(str(tmp_path / "noop" / "blueprint.yaml"), "noop")
        operator.deployments.create("noop", "d")
        ran[tenant] = _run(operator, "d", "install")
    assert rest_client(server, "mia").executions.delete(_all_tenants=True) == 1  # a viewer of other_tenant
    assert rest_client(server, "admin", "other_tenant").executions.get(ran["other_tenant"]).status == "terminated"
    assert rest_client(server, "admin").executions.list().items == []
    assert rest_client(server, "admin").executions.delete(_all_tenants=True) == 1
    assert rest_client(server, "admin", "other_tenant").executions.list().items == []


def test_what_an_update_a_schedule_or_an_unfinished_group_reads_stays(server, tmp_path):
    client = rest_client(server)
    (tmp_path / "noop").mkdir()
    (tmp_path / "noop" / "blueprint.yaml").write_text(NOOP)
    client.blueprints.upload(str(tmp_path / "noop" / "blueprint.yaml"), "noop")
    go = _waiting_box(client, tmp_path / "waiting", "waiting")
    for name, blueprint in (("plain", "noop"), ("updated", "noop"), ("timed", "noop"), ("quick", "noop"),
                            ("slow", "waiting")):
        client.deployments.create(blueprint, name)
    plain = _run(client, "plain", "install")
    update = client.deployment_updates.update_with_existing_blueprint("updated")
    assert _ended(client, update.execution_id) == "terminated"
    client.executions.start("timed", "install", schedule=(datetime.now(timezone.utc) + timedelta(seconds=1)).isoformat())
    deadline = time.monotonic() + 30
    while not (scheduled := client.executions.list(deployment_id="timed").items) or scheduled[0].status not in ENDED:
        assert time.monotonic() < deadline, "the scheduled execution did not run"
        time.sleep(0.1)
    client.deployment_groups.put("pair", deployment_ids=["quick", "slow"])
    group = client.execution_groups.start("pair", "install")
    members = {client.executions.get(i).deployment_id: i for i in group.execution_ids}
    assert _ended(client, members["quick"]) == "terminated"

    assert client.executions.delete() == 1  # every ended one that nothing reads: plain's install
    assert sorted(e.deployment_id for e in client.executions.list()) == ["quick", "slow", "timed", "updated"]
    assert client.deployment_updates.get(update.id).state == "successful"
    assert client.execution_schedules.list(deployment_id="timed")[0]["latest_execution_status"] == "terminated"
    assert plain not in _events_by_execution(server)

    go.write_text("")
    assert _ended(client, members["slow"]) == "terminated"
    assert client.executions.delete() == 2  # the group ended: its executions go
    assert sorted(e.deployment_id for e in client.executions.list()) == ["timed", "updated"]


def test_stoker_execution_delete_here(here):
    for deployment in ("d", "e"):
        assert here("deployment", "create", deployment, "-b", "bp").exit_code == 0
        for workflow in ("install", "uninstall", "install"):
            assert here("execution", "start", workflow, "-d", deployment).exit_code == 0
    done = here("execution", "delete", "--keep-last", "1", "-d", "d")
    assert done.exit_code == 0 and "Deleted 2 executions" in done.output
    left = json.loads(here("execution", "list", "-f", "json").stdout)
    assert sorted(e["deployment_id"] for e in left) == ["d", "e", "e", "e"]
    assert "Deleted 4 executions" in here("execution", "delete", "--to-datetime", "2999-01-01").output
    assert json.loads(here("execution", "list", "-f", "json").stdout) == []
    refused = here("execution", "delete", "--to-datetime", "someday")
    assert refused.exit_code == 1 and "someday is not a legal time format" in refused.output
    missing = here("execution", "delete", "--keep-last", "2", "-d", "nowhere")
    assert missing.exit_code == 1 and "nowhere" in missing.output
