"""Suspend, resume, check, mark-unhealthy, and cancelling a running action."""

from __future__ import annotations

import json
import threading

import pytest

from stoker.engine import resource_marks
from stoker.errors import Conflict

from .helpers import (
    files_under,
    index,
    physical_ids,
    resource_events,
    resources_by_name,
    stack_events,
    statuses,
    template,
    wait_until,
)


@pytest.fixture
def running(engine, files):
    info = engine.create_stack("life", template("lifecycle.yaml"), parameters={"dir": str(files)})
    assert info["stack_status"] == "CREATE_COMPLETE"
    return "life"


def test_suspend_resume_check(engine, running, files):
    ids = physical_ids(engine, running)
    for method, state in (("suspend_stack", "SUSPEND_COMPLETE"), ("resume_stack", "RESUME_COMPLETE"),
                          ("check_stack", "CHECK_COMPLETE")):
        before = resource_events(engine, running)
        info = getattr(engine, method)(running)
        assert info["stack_status"] == state, info
        assert set(statuses(engine, running).values()) == {state}
        assert physical_ids(engine, running) == ids
        events = resource_events(engine, running)[len(before):]
        action = state.split("_")[0]
        first, last = ("frontend", "config") if action == "SUSPEND" else ("config", "frontend")
        # suspend: dependents first; resume and check: requirements first
        assert index(events, first, f"{action}_COMPLETE") < index(events, "service", f"{action}_IN_PROGRESS")
        assert index(events, "service", f"{action}_COMPLETE") < index(events, last, f"{action}_IN_PROGRESS")
    assert stack_events(engine, running)[-6:] == [
        "SUSPEND_IN_PROGRESS", "SUSPEND_COMPLETE", "RESUME_IN_PROGRESS", "RESUME_COMPLETE",
        "CHECK_IN_PROGRESS", "CHECK_COMPLETE"]
    assert files_under(files) == ["config.txt"]


def test_check_finds_a_missing_file(engine, running, files):
    (files / "config.txt").unlink()
    info = engine.check_stack(running)
    assert info["stack_status"] == "CHECK_FAILED"
    assert "config.txt" in info["stack_status_reason"]
    found = resources_by_name(engine, running)
    assert found["config"]["resource_status"] == "CHECK_FAILED"
    assert "does not exist" in found["config"]["resource_status_reason"]


def test_mark_unhealthy_then_update_existing_replaces_it(engine, running):
    ids = physical_ids(engine, running)
    engine.mark_unhealthy(running, "service", reason="it stopped answering")
    found = resources_by_name(engine, running)["service"]
    assert found["resource_status"] == "CHECK_FAILED"
    assert found["resource_status_reason"] == "it stopped answering"

    info = engine.update_stack(running, existing=True)

    assert info["stack_status"] == "UPDATE_COMPLETE", info
    now = physical_ids(engine, running)
    assert now["service"] != ids["service"]
    assert statuses(engine, running)["service"] == "CREATE_COMPLETE"
    assert now["config"] == ids["config"]
    assert len(engine.resources(running)) == 3
    deleted = [e["physical_resource_id"] for e in engine.events(running)
               if e["resource_name"] == "service" and e["resource_status"] == "DELETE_COMPLETE"]
    assert deleted == [ids["service"]]


@pytest.mark.sqlite_only
def test_mark_healthy_again_means_no_replacement(engine, running):
    ids = physical_ids(engine, running)
    engine.mark_unhealthy(running, "service", reason="flaky")
    engine.mark_unhealthy(running, "service", unhealthy=False)
    assert statuses(engine, running)["service"] == "CHECK_COMPLETE"
    engine.update_stack(running, existing=True)
    assert physical_ids(engine, running)["service"] == ids["service"]


@pytest.mark.sqlite_only
def test_replacing_an_unhealthy_file_keeps_the_file(engine, running, files):
    engine.mark_unhealthy(running, "config", reason="edited by hand")
    info = engine.update_stack(running, existing=True)
    assert info["stack_status"] == "UPDATE_COMPLETE"
    assert statuses(engine, running)["config"] == "CREATE_COMPLETE"
    assert (files / "config.txt").read_text() == "settings"


@pytest.mark.sqlite_only
def test_mark_unhealthy_of_an_unknown_resource(engine, running):
    with pytest.raises(Exception, match="nothere"):
        engine.mark_unhealthy(running, "nothere")


# -- cancel -----------------------------------------------------------------------------
def _start(action) -> tuple[threading.Thread, dict]:
    result: dict = {}

    def target():
        try:
            result["value"] = action()
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            result["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread, result


def _slow_started(engine, name):
    found = statuses(engine, name)
    return found.get("slow_a") == found.get("slow_b") == "CREATE_IN_PROGRESS"


def _assert_cancelled(engine, name, result):
    """The 60-second creates were stopped (their thread was joined within 10 s)."""
    assert "error" not in result, result.get("error")
    info = engine.show_stack(name)
    assert info["stack_status"] == "CREATE_FAILED"
    assert "cancel" in info["stack_status_reason"].lower()
    found = statuses(engine, name)
    assert not [n for n, s in found.items() if s.endswith("IN_PROGRESS")], found
    assert found["quick"] == "CREATE_COMPLETE"
    assert found["slow_a"] == found["slow_b"] == "CREATE_FAILED"
    assert found.get("after", "INIT_COMPLETE") == "INIT_COMPLETE"
    reasons = {r["resource_name"]: r["resource_status_reason"] for r in engine.resources(name)}
    assert "cancel" in reasons["slow_a"].lower()
    # nothing holds the stack any more: it can be deleted at once
    assert engine.delete_stack(name)["stack_status"] == "DELETE_COMPLETE"


def test_cancel_a_create_through_the_api(engine, make_engine):
    runner = make_engine()
    thread, result = _start(lambda: runner.create_stack("slow", template("slow.yaml")))
    wait_until(lambda: _slow_started(engine, "slow"), what="the slow resources to start")

    engine.cancel_stack("slow")
    thread.join(10)

    assert not thread.is_alive()
    assert result["value"]["stack_status"] == "CREATE_FAILED"
    _assert_cancelled(engine, "slow", result)


def test_cancel_a_create_through_the_cli(engine, make_engine, cli):
    runner = make_engine()
    thread, result = _start(lambda: runner.create_stack("slow", template("slow.yaml")))
    wait_until(lambda: _slow_started(engine, "slow"), what="the slow resources to start")

    run = cli("stack", "cancel", "slow").expect(0)
    thread.join(10)

    assert "Cancel requested" in run.stdout
    assert not thread.is_alive()
    _assert_cancelled(engine, "slow", result)
    # nothing to cancel now
    again = cli("stack", "cancel", "slow").expect(1)
    assert "ERROR" in again.stderr


def test_cancel_with_nothing_running_is_refused(engine, running):
    with pytest.raises(Conflict, match="no action in progress"):
        engine.cancel_stack(running)
    assert engine.show_stack(running)["stack_status"] == "CREATE_COMPLETE"


def _update_stack(value: str, slow_added: bool, quick_wait: float = 1.0, slow_secs: float = 60) -> dict:
    """``quick`` takes ``quick_wait`` s to update (either way); ``slow`` (added by the update)
    takes ``slow_secs`` to create, and ``after`` waits for it."""
    resources = {"quick": {"type": "OS::Heat::TestResource",
                           "properties": {"value": value, "action_wait_secs": {"update": quick_wait}}}}
    if slow_added:
        resources["slow"] = {"type": "OS::Heat::TestResource", "depends_on": "quick",
                             "properties": {"action_wait_secs": {"create": slow_secs, "delete": 0}}}
        resources["after"] = {"type": "OS::Heat::TestResource", "depends_on": "slow"}
    return {"heat_template_version": "2018-08-31", "resources": resources}


def _start_update(engine, make_engine, rollback: bool, quick_wait: float = 1.0, slow_secs: float = 60):
    """Update ``upd`` in another engine; return once its ``slow`` resource is being created."""
    engine.create_stack("upd", _update_stack("one", False, quick_wait), disable_rollback=not rollback)
    runner = make_engine()
    thread, result = _start(lambda: runner.update_stack(
        "upd", _update_stack("two", True, quick_wait, slow_secs)))
    wait_until(lambda: statuses(engine, "upd").get("slow") == "CREATE_IN_PROGRESS", timeout=10,
               what="the slow resource to start")
    return thread, result


def _cancel_update(engine, make_engine, rollback: bool, quick_wait: float = 1.0,
                   cancel_rollback: bool = True, slow_secs: float = 60) -> dict:
    thread, result = _start_update(engine, make_engine, rollback, quick_wait, slow_secs)
    engine.cancel_stack("upd", rollback=cancel_rollback)
    thread.join(15)
    assert not thread.is_alive()
    assert "error" not in result, result.get("error")
    return result["value"]


def test_cancel_update_rolls_back_a_stack_whose_rollback_is_disabled(engine, make_engine):
    # as Heat's cancel_update: the cancel asks for the rollback, whatever the stack's setting
    info = _cancel_update(engine, make_engine, rollback=False, quick_wait=0.1)
    assert info["stack_status"] == "ROLLBACK_COMPLETE", info["stack_status_reason"]
    assert statuses(engine, "upd") == {"quick": "UPDATE_COMPLETE"}
    assert engine.template("upd") == _update_stack("one", False, quick_wait=0.1)
    assert engine.get_record("upd").lock_owner is None


def test_cancel_without_rollback_fails_the_stack_at_once_and_lets_the_running_resource_finish(
        engine, make_engine):
    # as Heat's cancel_without_rollback: nothing new starts; what runs is not interrupted
    info = _cancel_update(engine, make_engine, rollback=False, quick_wait=0.1, cancel_rollback=False,
                          slow_secs=2)
    assert info["stack_status"] == "UPDATE_FAILED"
    assert info["stack_status_reason"] == "Stack UPDATE cancelled"
    assert statuses(engine, "upd") == {"quick": "UPDATE_COMPLETE", "slow": "CREATE_COMPLETE"}
    assert stack_events(engine, "upd").count("UPDATE_FAILED") == 1
    assert engine.get_record("upd").lock_owner is None


def test_a_delete_stops_what_a_cancel_without_rollback_let_run(engine, make_engine):
    thread, result = _start_update(engine, make_engine, rollback=False, quick_wait=0.1, slow_secs=60)
    engine.cancel_stack("upd", rollback=False)
    wait_until(lambda: engine.show_stack("upd")["stack_status"] == "UPDATE_FAILED",
               what="the cancelled stack to fail")
    # the stack has failed while its 60-second create goes on, holding the stack
    assert statuses(engine, "upd")["slow"] == "CREATE_IN_PROGRESS"
    assert engine.get_record("upd").lock_owner is not None

    assert engine.delete_stack("upd")["stack_status"] == "DELETE_COMPLETE"
    thread.join(15)
    assert not thread.is_alive()
    assert result["value"]["stack_status"] == "UPDATE_FAILED"


def test_cancel_a_create_rolls_back_its_nested_stack_too(engine, make_engine):
    # the cancel that stopped the tree's create does not stop its rollback's delete of the nested stack
    nested = {"heat_template_version": "2018-08-31", "resources": {
        "slow": {"type": "OS::Heat::TestResource", "properties": {"action_wait_secs": {"create": 60}}}}}
    tree = {"heat_template_version": "2018-08-31", "resources": {
        "inner": {"type": "OS::Heat::Stack", "properties": {"template": json.dumps(nested)}}}}
    runner = make_engine()
    thread, result = _start(lambda: runner.create_stack("tree", tree, disable_rollback=False))
    wait_until(lambda: any(r["resource_name"] == "slow" and r["resource_status"] == "CREATE_IN_PROGRESS"
                           for r in engine.resources("tree", nested_depth=1)), what="the nested create to start")

    engine.cancel_stack("tree")
    thread.join(15)

    assert not thread.is_alive()
    assert result["value"]["stack_status"] == "ROLLBACK_COMPLETE", result["value"]["stack_status_reason"]
    assert engine.store.children(engine.get_record("tree").id) == []


@pytest.mark.sqlite_only
def test_cancel_without_rollback_skips_the_rollback_of_a_rollback_enabled_stack(engine, make_engine):
    info = _cancel_update(engine, make_engine, rollback=True, quick_wait=0.1, cancel_rollback=False,
                          slow_secs=2)
    assert info["stack_status"] == "UPDATE_FAILED", info["stack_status_reason"]
    assert "cancel" in info["stack_status_reason"].lower()
    assert statuses(engine, "upd") == {"quick": "UPDATE_COMPLETE", "slow": "CREATE_COMPLETE"}


@pytest.mark.sqlite_only
def test_cancel_an_update_rolls_it_back(engine, make_engine):
    # the rollback outlasts the watcher's first look for a cancel request (0.5 s)
    info = _cancel_update(engine, make_engine, rollback=True, quick_wait=0.7)
    assert info["stack_status"] == "ROLLBACK_COMPLETE", info["stack_status_reason"]
    assert statuses(engine, "upd") == {"quick": "UPDATE_COMPLETE"}
    assert engine.template("upd") == _update_stack("one", False, quick_wait=0.7)


@pytest.mark.sqlite_only
def test_check_of_a_half_created_stack_is_not_healthy(engine):
    # as Heat's TemplateResourceCheckTest: the failed resource's dependents are not checked
    # (they stay as they are), the others are
    stack = {"heat_template_version": "2018-08-31", "resources": {
        "cmd": {"type": "Stoker::Local::Command", "properties": {"create": "exit 1"}},
        "after": {"type": "OS::Heat::TestResource", "depends_on": "cmd"},
        "after_after": {"type": "OS::Heat::TestResource", "depends_on": "after"},
        "healthy": {"type": "OS::Heat::TestResource"}}}
    assert engine.create_stack("half", stack)["stack_status"] == "CREATE_FAILED"

    info = engine.check_stack("half")

    assert info["stack_status"] == "CHECK_FAILED"
    assert statuses(engine, "half") == {"cmd": "CHECK_FAILED", "after": "INIT_COMPLETE",
                                        "after_after": "INIT_COMPLETE", "healthy": "CHECK_COMPLETE"}
    assert "CREATE_FAILED" in resources_by_name(engine, "half")["cmd"]["resource_status_reason"]


def test_clearing_a_hook_keeps_a_data_write_that_raced_with_it(engine, monkeypatch):
    engine.create_stack("hooked", {"heat_template_version": "2018-08-31",
                                   "resources": {"held": {"type": "OS::Heat::None"}}})
    row, = engine.store.get_resources(engine.get_record("hooked").id)
    engine.store.update_resource(row.id, status_reason="CREATE paused until Hook pre-create is cleared")
    read = resource_marks._hook_to_clear

    def read_then_another_writes(*args):
        found = read(*args)
        if "other" not in (engine.store.get_resource(row.id).data or {}):  # between the read and the write
            engine.store.update_resource(row.id, data={"other": "kept"})
        return found

    monkeypatch.setattr(resource_marks, "_hook_to_clear", read_then_another_writes)
    assert engine.clear_hook("hooked", "held") == "pre-create"
    assert engine.store.get_resource(row.id).data == {"other": "kept", "stoker:hooks_cleared": ["pre-create"]}
