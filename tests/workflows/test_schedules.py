"""Execution schedules (``stoker.workflows.schedules``): kept per deployment, fired when due, once, as
Cloudify's scheduler fires them (a run not ended, a failure with stop_on_fail, a run past its slip)."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from stoker.errors import Conflict, NotFound
from stoker.store.schedule_records import ScheduleRecords
from stoker.workflows import schedule_rules, schedules
from stoker.workflows.workflow_error import WorkflowError

from .conftest import deploy

NOOP = """
node_templates:
  app: {type: cloudify.nodes.Root}
"""
#: install fails: its create exits 1
FAILING = """
node_templates:
  app:
    type: cloudify.nodes.Root
    interfaces: {cloudify.interfaces.lifecycle: {create: scripts/fail.sh}}
"""


def _starter(engine, started: list):
    """What a server's beat does with a due schedule, here and to the end: the execution's id."""
    def start(row: dict) -> str:
        execution = engine.executions.start(row["workflow_id"], row["deployment_id"], row["parameters"] or {},
                                            queue=True)
        started.append((row["id"], execution["status"]))
        return execution["id"]

    return start


def test_a_due_schedule_runs_once_and_moves_on(engine, tmp_path):
    deploy(engine, tmp_path / "bp", NOOP)
    made = engine.blueprints.schedules.create("hourly", "dep", {"workflow_id": "install", "since": "2026-11-28 10:00:00",
                                                                "recurrence": "1 hour"}, "alice")
    assert made["deployment_id"] == "dep" and made["created_by"] == "alice" and made["enabled"]
    due = made["next_occurrence"].replace(tzinfo=None)
    started: list = []
    assert schedules.fire_due(engine.store, _starter(engine, started), now=due - timedelta(seconds=1)) == []
    assert schedules.fire_due(engine.store, _starter(engine, started), now=due) == ["hourly"]
    assert schedules.fire_due(engine.store, _starter(engine, started), now=due) == []  # moved on: once
    assert started == [("hourly", "terminated")]
    kept = engine.blueprints.schedules.get("hourly", "dep")
    assert kept["next_occurrence"].replace(tzinfo=None) == due + timedelta(hours=1)
    assert kept["latest_execution_status"] == "terminated"
    assert [e["workflow_id"] for e in engine.executions.list("dep")] == ["install"]


def test_late_runs_past_the_slip_are_skipped_and_two_servers_fire_once(engine, tmp_path):
    deploy(engine, tmp_path / "bp", NOOP)
    made = engine.blueprints.schedules.create("s", "dep", {"workflow_id": "install", "since": "2026-11-28 10:00:00",
                                                           "recurrence": "1 day", "slip": 5}, "admin")
    due = made["next_occurrence"].replace(tzinfo=None)
    started: list = []
    late = due + timedelta(minutes=5, seconds=61)  # past 5 minutes' slip and the minute's grace
    assert schedules.fire_due(engine.store, _starter(engine, started), now=late) == ["s"]
    assert started == []
    records = ScheduleRecords(engine.store)
    [row] = records.list(["default"])
    assert row["next_occurrence"].replace(tzinfo=None) == due + timedelta(days=1)
    stale = dict(row)
    assert records.claim(row, next_occurrence=due + timedelta(days=2))
    assert not records.claim(stale, next_occurrence=due + timedelta(days=2))  # the other server lost


def test_a_failed_run_with_stop_on_fail_disables_the_schedule(engine, tmp_path):
    deploy(engine, tmp_path / "bp", FAILING, {"scripts/fail.sh": "exit 1\n"})
    made = engine.blueprints.schedules.create("s", "dep", {"workflow_id": "install", "since": "2026-11-28 10:00:00",
                                                           "recurrence": "10 min", "stop_on_fail": True}, "admin")
    due = made["next_occurrence"].replace(tzinfo=None)
    started: list = []
    schedules.fire_due(engine.store, _starter(engine, started), now=due)
    assert started == [("s", "failed")]
    schedules.fire_due(engine.store, _starter(engine, started), now=due + timedelta(minutes=10))
    kept = engine.blueprints.schedules.get("s", "dep")
    assert started == [("s", "failed")] and not kept["enabled"]


def test_schedules_are_checked_kept_per_deployment_and_go_with_it(engine, tmp_path):
    deploy(engine, tmp_path / "bp", NOOP)
    deploy(engine, tmp_path / "bp2", NOOP, name="other")
    service = engine.blueprints.schedules
    service.create("s", "dep", {"workflow_id": "install", "since": "2030-01-01", "count": 1}, "admin")
    service.create("s", "other", {"workflow_id": "uninstall", "since": "2030-01-01", "count": 1}, "admin")
    with pytest.raises(Conflict):
        service.create("s", "dep", {"workflow_id": "install", "since": "2030-01-01", "count": 1}, "admin")
    with pytest.raises(NotFound, match="Workflow nope not found in deployment dep"):
        service.create("t", "dep", {"workflow_id": "nope", "since": "2030-01-01", "count": 1}, "admin")
    with pytest.raises(WorkflowError, match="is not a legal time format"):
        service.create("t", "dep", {"workflow_id": "install", "since": "tomorrow", "count": 1}, "admin")
    changed = service.update("s", "dep", {"enabled": False, "until": "2031-01-01"})
    assert not changed["enabled"] and changed["rule"] == {"recurrence": None, "count": 1, "weekdays": None}
    assert changed["next_occurrence"].replace(tzinfo=None) == datetime(2030, 1, 1)
    service.create("r", "dep", {"workflow_id": "install", "since": "2030-01-01",
                                "rrule": "RRULE:FREQ=WEEKLY;BYDAY=MO"}, "admin")
    assert service.update("r", "dep", {"enabled": False})["rule"] == {"rrule": "RRULE:FREQ=WEEKLY;BYDAY=MO"}
    service.delete("r", "dep")
    assert [(r["deployment_id"], r["workflow_id"]) for r in service.list()] == [("dep", "install"),
                                                                                 ("other", "uninstall")]
    engine.blueprints.deployments.delete("dep")
    assert [r["deployment_id"] for r in service.list()] == ["other"]
    service.delete("s", "other")
    assert service.list() == []


def test_one_look_fires_a_bounded_number_of_schedules_the_most_overdue_first(engine, tmp_path, monkeypatch):
    deploy(engine, tmp_path / "bp", NOOP)
    service = engine.blueprints.schedules
    for hour in (12, 10, 11):
        service.create(f"at{hour}", "dep", {"workflow_id": "install", "since": f"2030-01-01 {hour}:00:00",
                                            "count": 1}, "admin")
    monkeypatch.setattr(schedules, "PER_LOOK", 2)
    skipped: list = []
    fired = schedules.fire_due(engine.store, lambda row: skipped.append(row["id"]), now=datetime(2030, 1, 2))
    assert fired == ["at10", "at11"] and skipped == []  # a day late: past their slip, moved on, not run
    assert schedules.fire_due(engine.store, lambda row: skipped.append(row["id"]), now=datetime(2030, 1, 2)) == ["at12"]


def test_a_walked_rule_is_walked_from_its_next_run_not_from_since(engine, tmp_path, monkeypatch):
    """An RRULE every minute, its runs walked here (the child process ``plan`` uses is tested with the
    rules), at most 1,000 before now, 10 kept ahead: looked at 500 minutes on, then 1,000 minutes on.
    From since, the second look would walk 1,060 runs; from the stored next run, itself one of the rule's
    runs, each look walks 500."""
    monkeypatch.setattr(schedule_rules, "plan", schedule_rules.upcoming)
    monkeypatch.setattr(schedule_rules, "SEARCHED", 1000)
    monkeypatch.setattr(schedule_rules, "SHOWN", 10)
    deploy(engine, tmp_path / "bp", NOOP)
    start = schedules.now_utc().replace(microsecond=0) - timedelta(hours=1)
    made = engine.blueprints.schedules.create("m", "dep", {"workflow_id": "install", "rrule": "RRULE:FREQ=MINUTELY",
                                                           "since": start.strftime("%Y-%m-%d %H:%M:%S")}, "admin")
    due = made["next_occurrence"].replace(tzinfo=None)
    assert len(made["upcoming"]) == 10
    for minutes in (500, 1000):
        look = due + timedelta(minutes=minutes, seconds=30)
        assert schedules.fire_due(engine.store, lambda row: "x", now=look) == ["m"]  # late: moved on, not run
        [moved] = ScheduleRecords(engine.store).list(["default"])
        assert moved["next_occurrence"].replace(tzinfo=None) == due + timedelta(minutes=minutes + 1)
