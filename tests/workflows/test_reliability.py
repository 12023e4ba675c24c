"""Failures, retries, re-running install, one execution at a time, cancel, and resume after SIGKILL."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from stoker.errors import Conflict

from .conftest import deploy, runtime, states

CHAIN = """
node_templates:
  a:
    type: cloudify.nodes.Root
    interfaces:
      cloudify.interfaces.lifecycle: {create: scripts/op.sh, start: scripts/op.sh}
  b:
    type: cloudify.nodes.Root
    interfaces:
      cloudify.interfaces.lifecycle: {create: scripts/op.sh, start: scripts/op.sh}
    relationships: [{type: cloudify.relationships.depends_on, target: a}]
  c:
    type: cloudify.nodes.Root
    interfaces:
      cloudify.interfaces.lifecycle: {create: scripts/op.sh, start: scripts/op.sh}
    relationships: [{type: cloudify.relationships.depends_on, target: b}]
"""

# Each operation appends "<node>.<op>" to the trace.  $GATE/<node>.<op> present: the operation first
# writes its pid to $GATE/<node>.<op>.pid and waits until that file is gone ("hold") ;
# $GATE/<node>.<op>.fail present: it fails with a message on stderr.
OP = """
name="$(ctx node id).$(ctx operation name | sed 's/.*\\.//')"
if [ -e "$GATE/$name.fail" ]; then echo "cannot $name: $(cat "$GATE/$name.fail")" >&2; exit 2; fi
if [ -e "$GATE/$name" ]; then
    echo $$ > "$GATE/$name.pid"
    while [ -e "$GATE/$name" ]; do sleep 0.05; done
fi
echo "$name" >> "$GATE/trace"
"""


@pytest.fixture
def engine(any_engine):
    return any_engine


@pytest.fixture
def gate(tmp_path, monkeypatch):
    folder = tmp_path / "gate"
    folder.mkdir()
    monkeypatch.setenv("GATE", str(folder))
    return folder


@pytest.fixture
def chain(engine, tmp_path, gate):
    return deploy(engine, tmp_path / "bp", CHAIN, {"scripts/op.sh": OP})


def _trace(gate):
    path = gate / "trace"
    return path.read_text().split() if path.exists() else []


def _wait_for(path, timeout=60):
    deadline = time.monotonic() + timeout
    while not path.exists() or not path.read_text().strip():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.02)
    return path.read_text().strip()


def _in_thread(fn):
    result = {}

    def target():
        try:
            result["value"] = fn()
        except BaseException as exc:
            result["error"] = exc

    worker = threading.Thread(target=target)
    worker.start()
    return worker, result


def test_a_failure_fails_the_execution_and_install_again_continues(engine, chain, gate):
    (gate / "b.create.fail").write_text("disk full")
    failed = engine.executions.start("install", chain)
    assert failed["status"] == "failed"
    assert "cloudify.interfaces.lifecycle.create on b_" in failed["error"]
    assert "exited with code 2" in failed["error"] and failed["error"].endswith("cannot b.create: disk full")
    assert states(engine, chain) == {"a": "started", "b": "creating", "c": "uninitialized"}
    assert _trace(gate) == ["a.create", "a.start"]
    (gate / "b.create.fail").unlink()
    again = engine.executions.start("install", chain)
    assert again["status"] == "terminated"
    assert _trace(gate) == ["a.create", "a.start", "b.create", "b.start", "c.create", "c.start"]
    events = engine.executions.events(failed["id"])
    [task_failed] = [e for e in events if e["event_type"] == "task_failed"]
    assert task_failed["error_causes"][0]["traceback"] == "cannot b.create: disk full"


def test_retries_are_counted_and_give_up_after_max_retries(engine, tmp_path, gate):
    blueprint = """
node_templates:
  flaky:
    type: cloudify.nodes.Root
    interfaces:
      cloudify.interfaces.lifecycle:
        create: {implementation: scripts/flaky.sh, max_retries: 3, retry_interval: 0}
"""
    flaky = 'n=$(( $(cat "$GATE/n" 2>/dev/null || echo 0) + 1 )); echo $n > "$GATE/n"; [ $n -ge "$NEED" ]\n'
    dep = deploy(engine, tmp_path / "bp", blueprint, {"scripts/flaky.sh": flaky})
    os.environ["NEED"] = "3"
    try:
        ok = engine.executions.start("install", dep)
        assert ok["status"] == "terminated"
        rescheduled = [e for e in engine.executions.events(ok["id"]) if e["event_type"] == "task_rescheduled"]
        assert len(rescheduled) == 2 and "[retry 2, in 0 s]" in rescheduled[1]["message"]
        engine.executions.start("uninstall", dep)
        (gate / "n").unlink()
        os.environ["NEED"] = "9"
        failed = engine.executions.start("install", dep)
        assert failed["status"] == "failed" and (gate / "n").read_text().strip() == "4"  # 1 try + 3 retries
        # the execution's own retry settings apply to operations that declare none
        (gate / "n").unlink()
    finally:
        del os.environ["NEED"]


def test_task_retries_parameter_for_operations_without_their_own(engine, chain, gate):
    (gate / "a.create.fail").write_text("nope")
    failed = engine.executions.start("install", chain, {"task_retries": 2, "task_retry_interval": 0})
    assert failed["status"] == "failed"
    rescheduled = [e for e in engine.executions.events(failed["id"]) if e["event_type"] == "task_rescheduled"]
    assert len(rescheduled) == 2


def test_one_execution_at_a_time_per_deployment(engine, chain, gate):
    (gate / "a.create").touch()
    worker, result = _in_thread(lambda: engine.executions.start("install", chain))
    _wait_for(gate / "a.create.pid")
    with pytest.raises(Conflict, match=r"Deployment dep is running execution .* \(install, started\)"):
        engine.executions.start("uninstall", chain)
    queued = engine.executions.start("uninstall", chain, queue=True)  # stored queued, answered at once
    cancelled = engine.executions.start("uninstall", chain, queue=True)
    assert [(e["workflow_id"], e["status"]) for e in engine.executions.list(chain)] == [
        ("install", "started"), ("uninstall", "queued"), ("uninstall", "queued")]
    assert engine.executions.cancel(cancelled["id"])["status"] == "cancelled"  # a queued one never runs
    (gate / "a.create").unlink()
    worker.join()  # the install's end started the queued uninstall, planned after install
    assert result["value"]["status"] == "terminated"
    assert [(e["workflow_id"], e["status"]) for e in engine.executions.list(chain)] == [
        ("install", "terminated"), ("uninstall", "terminated"), ("uninstall", "cancelled")]
    assert engine.executions.get(queued["id"])["status"] == "terminated"
    assert _trace(gate) == ["a.create", "a.start", "b.create", "b.start", "c.create", "c.start"]
    assert set(states(engine, chain).values()) == {"deleted"}  # planned after install: it undid all of it


def test_a_deployment_is_not_deleted_under_a_running_execution(engine, chain, gate):
    (gate / "a.create").touch()
    worker, result = _in_thread(lambda: engine.executions.start("install", chain))
    _wait_for(gate / "a.create.pid")
    with pytest.raises(Conflict, match=r"Deployment dep is running execution .* \(install\)"):
        engine.blueprints.deployments.delete(chain)
    (gate / "a.create").unlink()
    worker.join()
    assert result["value"]["status"] == "terminated"
    engine.blueprints.deployments.delete(chain)  # ended: now it goes
    assert [d["id"] for d in engine.blueprints.deployments.list()] == []


def test_graceful_cancel_lets_running_scripts_end_and_starts_nothing_new(engine, chain, gate):
    (gate / "b.create").touch()
    worker, result = _in_thread(lambda: engine.executions.start("install", chain))
    _wait_for(gate / "b.create.pid")
    [running] = [e for e in engine.executions.list(chain) if e["status"] == "started"]
    assert engine.executions.cancel(running["id"])["status"] == "cancelling"
    time.sleep(0.8)  # the watcher has seen the request: b.create must still finish
    (gate / "b.create").unlink()
    worker.join()
    assert result["value"]["status"] == "cancelled"
    assert _trace(gate) == ["a.create", "a.start", "b.create"]
    assert states(engine, chain) == {"a": "started", "b": "created", "c": "uninitialized"}
    again = engine.executions.start("install", chain)
    assert again["status"] == "terminated" and _trace(gate)[-3:] == ["b.start", "c.create", "c.start"]


def test_forced_cancel_kills_the_running_script(engine, chain, gate):
    (gate / "b.create").touch()
    worker, result = _in_thread(lambda: engine.executions.start("install", chain))
    pid = int(_wait_for(gate / "b.create.pid"))
    [running] = [e for e in engine.executions.list(chain) if e["status"] == "started"]
    assert engine.executions.cancel(running["id"], force=True)["status"] == "force_cancelling"
    worker.join()
    assert result["value"]["status"] == "cancelled"
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    assert states(engine, chain) == {"a": "started", "b": "creating", "c": "uninitialized"}
    with pytest.raises(Exception, match="nothing to cancel"):
        engine.executions.cancel(running["id"])


def test_sigkill_leaves_an_interrupted_execution_that_resume_continues(engine, chain, gate, tmp_path):
    (gate / "b.start").touch()
    env = {**os.environ, "STOKER_DB_URL": engine.store.engine.url.render_as_string(hide_password=False)}
    process = subprocess.Popen([sys.executable, "-c", "from stoker.cli import main; main()",
                                "install", "dep", "--no-wait"], env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        script = int(_wait_for(gate / "b.start.pid"))
    finally:
        process.kill()
        process.wait()
    os.kill(script, signal.SIGKILL)  # it was in a session of its own: it outlived its executor
    [execution] = engine.executions.list(chain)
    assert execution["status"] == "failed" and execution["error"].startswith("Execution interrupted")
    assert states(engine, chain) == {"a": "started", "b": "starting", "c": "uninitialized"}
    (gate / "b.start").unlink()
    done = subprocess.run([sys.executable, "-c", "from stoker.cli import main; main()", "execution", "resume",
                           execution["id"], "-f", "json"], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    resumed = json.loads(done.stdout)
    assert resumed["status"] == "terminated" and resumed["id"] == execution["id"]
    assert _trace(gate) == ["a.create", "a.start", "b.create", "b.start", "c.create", "c.start"]
    assert states(engine, chain) == {"a": "started", "b": "started", "c": "started"}
    types = [e["event_type"] for e in engine.executions.events(execution["id"])]
    assert types.count("workflow_started") == 2 and types[-1] == "workflow_succeeded"
    with pytest.raises(Conflict, match="only a failed or cancelled execution can be resumed"):
        engine.executions.resume(execution["id"])
