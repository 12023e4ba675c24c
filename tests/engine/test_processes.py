"""Several processes on one stack: one action at a time, dead holders' locks taken over,
and a create killed half way finished or cleaned up with nothing left behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from stoker.resources import processes

from .helpers import alive as _alive
from .helpers import (
    files_under,
    hot,
    layered_files_template,
    process_env,
    statuses,
    template,
    tres,
    wait_until,
    write_yaml,
)

pytestmark = pytest.mark.slow  # engine processes started and killed

RACER = textwrap.dedent("""
    import json, os, sys, time
    from stoker.engine.engine import Engine

    db_url, name, value, ready, go = sys.argv[1:6]
    engine = Engine(db_url=db_url)
    engine.get_record(name)
    open(ready, "w").close()
    while not os.path.exists(go):
        time.sleep(0.005)
    try:
        info = engine.update_stack(name, existing=True, parameters={"value": value})
        print(json.dumps({"status": info["stack_status"]}))
    except Exception as exc:
        print(json.dumps({"error": str(exc), "type": type(exc).__name__}))
""")


def _racer(db_url, name, value, ready, go, home):
    return subprocess.Popen([sys.executable, "-c", RACER, db_url, name, value, str(ready), str(go)],
                            env=process_env(home), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_two_processes_race_for_one_stack(engine, db_url, tmp_path, home):
    stack = hot({"t": tres(value={"get_param": "value"},
                           action_wait_secs={"create": 0, "update": 0.5, "delete": 0})},
                parameters={"value": {"type": "string"}},
                outputs={"value": {"value": {"get_attr": ["t", "output"]}}})
    engine.create_stack("race", stack, parameters={"value": "start"})
    go = tmp_path / "go"
    racers = {value: _racer(db_url, "race", value, tmp_path / f"ready-{value}", go, home)
              for value in ("left", "right")}
    wait_until(lambda: all((tmp_path / f"ready-{v}").exists() for v in racers)
               or any(p.poll() is not None for p in racers.values()), timeout=30, what="the racers")
    go.touch()

    results = {}
    for value, proc in racers.items():
        out, err = proc.communicate(timeout=30)
        assert proc.returncode == 0, err
        results[value] = json.loads(out.strip().splitlines()[-1])

    completed = [v for v, r in results.items() if r.get("status") == "UPDATE_COMPLETE"]
    assert completed, results
    # the other came at the very same moment (refused), was preempted (as Heat's convergence), or
    # -- on a slow machine -- started after the first had ended and completed too
    for value in set(results) - set(completed):
        assert results[value] in ({"error": "Stack race already has an action (UPDATE) in progress",
                                   "type": "Conflict"}, {"status": "UPDATE_FAILED"}), results
    info = engine.show_stack("race")
    assert info["stack_status"] == "UPDATE_COMPLETE"
    assert info["parameters"]["value"] in completed
    assert engine.get_record("race").lock_owner is None


def _kill(proc: subprocess.Popen) -> None:
    """SIGKILL, and reap it (a zombie's pid would still look alive)."""
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)


def test_a_running_action_blocks_others_and_a_dead_holders_lock_is_taken_over(
        engine, cli, stoker_process, home):
    creator = subprocess.Popen(
        [stoker_process.executable, "--db-url", cli.db_url, "stack", "create", "slow", "-t",
         str(template("slow.yaml")), "--wait"],
        env=process_env(home), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_until(lambda: statuses(engine, "slow").get("slow_a") == "CREATE_IN_PROGRESS",
                   timeout=30, what="the create to get going")
        # (an update would preempt the create, as in Heat: see test_an_update_preempts_...)
        for args in (("stack", "check", "slow"), ("stack", "suspend", "slow")):
            run = cli(*args).expect(1)
            assert "Stack slow already has an action (CREATE) in progress" in run.stderr
        assert engine.show_stack("slow")["stack_status"] == "CREATE_IN_PROGRESS"
    finally:
        _kill(creator)
    assert engine.get_record("slow").lock_owner is not None  # the dead process still "holds" it

    cli("stack", "delete", "slow", "--yes", "--wait").expect(0)

    assert cli("stack", "show", "slow").expect(1).stderr.startswith("ERROR")
    deleted = cli("stack", "list", "--show-deleted", "-f", "json").expect(0).json
    assert [(s["stack_name"], s["stack_status"]) for s in deleted] == [("slow", "DELETE_COMPLETE")]


def _create_in_background(executable, db_url, home, template_path, files):
    return subprocess.Popen(
        [executable, "--db-url", db_url, "stack", "create", "many", "-t", str(template_path),
         "-P", f"dir={files}", "--wait"],
        env=process_env(home), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _written(files):
    return [f for f in files_under(files) if f.endswith(".txt")]


@pytest.fixture
def half_created(engine, db_url, stoker_process, home, tmp_path, files):
    """Stack ``many`` (200 files in 10 layers), its creating ``stoker`` process SIGKILLed part way."""
    path = write_yaml(tmp_path / "many.yaml", layered_files_template())
    creator = _create_in_background(stoker_process.executable, db_url, home, path, files)
    try:
        wait_until(lambda: len(_written(files)) >= 30 or creator.poll() is not None,
                   timeout=60, interval=0.01, what="30 files")
    finally:
        _kill(creator)
    assert creator.returncode == -signal.SIGKILL, creator.stderr.read()
    written = len(_written(files))
    assert 30 <= written < 200, written
    assert engine.show_stack("many")["stack_status"] == "CREATE_IN_PROGRESS"
    return "many"


def test_a_killed_create_is_finished_leaving_nothing(engine, db_url, half_created, files, stoker_process,
                                                      cli):
    """After the SIGKILL the stack is finished and deleted, and no file is left.

    On SQLite: ``stack check`` on the half-created stack, then ``stack delete``, each a new
    ``stoker`` process.  On PostgreSQL: ``stack update --existing`` creates the rest (the
    interrupted resources are re-created), ``stack check`` finds every file, then ``stack delete``.
    """
    stoker = stoker_process if db_url.startswith("sqlite") else cli
    before = statuses(engine, half_created)
    assert len(before) == 210
    assert "INIT_COMPLETE" in before.values()  # the later layers never started
    # (some may have been cut short, CREATE_IN_PROGRESS: that depends on when the kill landed)
    created = [n for n, s in before.items() if s == "CREATE_COMPLETE"]
    assert created

    if db_url.startswith("postgresql"):
        info = engine.update_stack(half_created, existing=True)
        assert info["stack_status"] == "UPDATE_COMPLETE", info["stack_status_reason"]
        found = statuses(engine, half_created)
        assert len(found) == 210
        assert set(found.values()) <= {"CREATE_COMPLETE", "UPDATE_COMPLETE"}, found
        names = files_under(files)
        assert len(names) == 200 and all(n.endswith(".txt") for n in names), names
        assert (files / "l09" / "19.txt").read_text() == "9/19"
        assert info["outputs"][0]["output_value"] == str(files / "l09" / "19.txt")

    check = stoker("stack", "check", half_created, "-f", "json").expect(0).json
    assert check["stack_status"] in ("CHECK_COMPLETE", "CHECK_FAILED"), check
    after = statuses(engine, half_created)
    assert not [n for n, s in after.items() if s.endswith("IN_PROGRESS")], after
    assert all(after[n] == "CHECK_COMPLETE" for n in created)
    if db_url.startswith("postgresql"):
        assert check["stack_status"] == "CHECK_COMPLETE"
        assert set(after.values()) == {"CHECK_COMPLETE"}

    stoker("stack", "delete", half_created, "--yes", "--wait").expect(0)

    assert files_under(files) == []
    assert stoker("stack", "show", half_created).expect(1).stderr.startswith("ERROR")
    with pytest.raises(Exception, match="not found"):
        engine.show_stack(half_created)


@pytest.mark.sqlite_only
def test_a_cancel_sent_to_a_dead_process_does_not_cancel_the_next_action(engine, db_url, home, tmp_path,
                                                                           stoker_process):
    path = write_yaml(tmp_path / "slow.yaml", hot({"slow": tres(
        action_wait_secs={"create": 60, "delete": 1.0})}))
    creator = subprocess.Popen(
        [stoker_process.executable, "--db-url", db_url, "stack", "create", "dead", "-t", str(path), "--wait"],
        env=process_env(home), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_until(lambda: statuses(engine, "dead").get("slow") == "CREATE_IN_PROGRESS", timeout=30,
                   what="the create to start")
    finally:
        _kill(creator)
    try:
        engine.cancel_stack("dead")
    except Exception:  # refusing is fine too: nobody runs the action
        pass

    info = engine.delete_stack("dead")

    assert info["stack_status"] == "DELETE_COMPLETE", info["stack_status_reason"]


@pytest.mark.sqlite_only
@pytest.mark.parametrize("taking_over", [("delete", "orphan", "--yes", "--wait"), ("cancel", "orphan"),
                                         ("check", "orphan")], ids=["delete", "cancel", "check"])
def test_a_killed_engines_command_is_killed_by_whoever_takes_the_stack_over(engine, cli, stoker_process, home,
                                                                             tmp_path, taking_over):
    log = tmp_path / "still-writing.log"
    # a command that never ends, writing from a background process of its own
    forever = f"(while true; do echo x >> {log}; sleep 0.05; done) & while true; do sleep 1; done"
    path = write_yaml(tmp_path / "orphan.yaml", hot({
        "cmd": {"type": "Stoker::Local::Command", "properties": {"create": forever, "timeout": 3600}}}))
    creator = subprocess.Popen(
        [stoker_process.executable, "--db-url", cli.db_url, "stack", "create", "orphan", "-t", str(path),
         "--wait"], env=process_env(home), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def recorded():
        rows = engine.store.get_resources(engine.get_record("orphan").id)
        return log.exists() and (rows[0].data or {}).get(processes.PROCESS_KEY)

    try:
        running = wait_until(recorded, timeout=30, what="the command to start and be recorded")
    finally:
        _kill(creator)
    size = log.stat().st_size
    wait_until(lambda: log.stat().st_size > size, what="the orphaned command to go on writing")

    try:
        # a cancel is refused (nobody runs the action any more), but stops the command all the same
        cli("stack", *taking_over).expect(1 if taking_over[0] == "cancel" else 0)

        size = log.stat().st_size
        time.sleep(0.5)  # ten of its writes, had it survived
        assert log.stat().st_size == size
        assert running["pgid"] not in processes._groups_carrying({running["marker"]}).get(running["marker"], set())
    finally:
        processes.kill_group(running["pgid"])  # never leave it behind, whatever happened
    if taking_over[0] == "delete":
        with pytest.raises(Exception, match="not found"):
            engine.show_stack("orphan")


def _engine_pid(engine, name: str) -> int:
    owner = wait_until(lambda: engine.get_record(name).lock_owner, timeout=30, what="the engine's lock")
    return int(owner.rsplit(":", 2)[1])


@pytest.mark.sqlite_only
def test_create_update_delete_return_at_once_and_go_on_after_the_command_exits(engine, stoker_process,
                                                                               tmp_path):
    # the create (and the update raising count) wait for signals the test sends once the command is gone
    path = write_yaml(tmp_path / "steady.yaml", hot({
        "handle": {"type": "OS::Heat::WaitConditionHandle"},
        "wait": {"type": "OS::Heat::WaitCondition", "properties": {
            "handle": {"get_resource": "handle"}, "count": {"get_param": "count"}, "timeout": 600}},
    }, parameters={"count": {"type": "number"}}))
    for args, started, done in (
            (("create", "bg", "-t", path, "-P", "count=1"), "CREATE_IN_PROGRESS", "CREATE_COMPLETE"),
            (("update", "bg", "--existing", "-P", "count=2"), "UPDATE_IN_PROGRESS", "UPDATE_COMPLETE")):
        run = stoker_process("stack", *args, "-f", "json").expect(0)  # the command has exited
        assert run.json["stack_status"] == started, run.json
        assert _alive(_engine_pid(engine, "bg"))  # a process other than the command runs it
        # the command promises only that the action started: the handle may still be in the making
        wait_until(lambda: statuses(engine, "bg").get("handle") == "CREATE_COMPLETE", timeout=60, what="the handle")
        engine.signal("bg", "handle", {"data": started})
        wait_until(lambda: engine.show_stack("bg")["stack_status"] == done, timeout=60, what=done)
    assert engine.show_stack("bg")["parameters"]["count"] == "2"

    stoker_process("stack", "delete", "bg", "--yes").expect(0)
    wait_until(lambda: engine.list_stacks() == [], timeout=60, what="the delete")
    deleted = engine.list_stacks(show_deleted=True)
    assert [(s["stack_name"], s["stack_status"]) for s in deleted] == [("bg", "DELETE_COMPLETE")]


@pytest.mark.sqlite_only
def test_errors_before_the_action_starts_are_the_commands_own(stoker_process, tmp_path):
    bad = stoker_process("stack", "create", "bad", "-t", template("invalid.yaml"), "-f", "json").expect(1)
    assert "resources.typo.type" in {e["path"] for e in bad.json}
    assert "ERROR: Stack nowhere" in stoker_process("stack", "delete", "nowhere", "--yes").expect(1).stderr
    usage = stoker_process("stack", "create", "x", "-t", template("slow.yaml"), "-P", "no-equals-sign")
    assert usage.exit_code == 2 and "no-equals-sign" in usage.stderr
    assert stoker_process("stack", "list", "-f", "json").expect(0).json == []


def test_deleting_a_stack_being_created_cancels_the_create_and_deletes_it(engine, stoker_process, tmp_path):
    log = tmp_path / "writes.log"
    path = write_yaml(tmp_path / "long.yaml", hot({
        "slow": tres(action_wait_secs={"create": 600, "delete": 0}),
        "cmd": {"type": "Stoker::Local::Command", "properties": {
            "create": f"while true; do echo x >> {log}; sleep 0.05; done", "timeout": 3600}},
    }))
    created = stoker_process("stack", "create", "long", "-t", path, "-f", "json").expect(0)
    assert created.json["stack_status"] == "CREATE_IN_PROGRESS"
    creator = _engine_pid(engine, "long")
    wait_until(lambda: log.exists() and statuses(engine, "long")["slow"] == "CREATE_IN_PROGRESS",
               timeout=30, what="the create to be under way")

    stoker_process("stack", "delete", "long", "--yes", "--wait").expect(0)

    with pytest.raises(Exception, match="not found"):
        engine.show_stack("long")
    events = [(e["resource_name"], e["resource_status"]) for e in engine.events(created.json["id"])]
    assert ("slow", "CREATE_FAILED") in events and events[-1] == ("long", "DELETE_COMPLETE")
    assert events.index(("long", "CREATE_FAILED")) < events.index(("long", "DELETE_IN_PROGRESS"))
    wait_until(lambda: not _alive(creator), timeout=30, what="the detached engine to end")
    size = log.stat().st_size
    time.sleep(0.5)  # ten of the command's writes, had it survived
    assert log.stat().st_size == size
