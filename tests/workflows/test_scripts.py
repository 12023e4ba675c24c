"""The script runner: which script, how it runs, timeouts, cancel, failures and retries."""

from __future__ import annotations

import asyncio
import os
import sys

import pytest

from stoker.workflows.operation_context import OperationFailed
from stoker.workflows.ctx_server import CtxServer
from stoker.workflows.operations import OperationSpec, RetryPolicy, run_operation
from stoker.workflows.scripts import Script, command_for, run_script, script_for

from .fakes import Recorder, node_context, run, write_script


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as stat:
        return stat.read().split(") ")[1][0] != "Z"


def test_script_for_takes_a_blueprint_path_or_the_script_runner(tmp_path):
    write_script(tmp_path, "scripts/create.sh", "true\n")
    plain = script_for("scripts/create.sh", {"a": 1, "process": {"cwd": "/"}}, tmp_path)
    assert plain.path == (tmp_path / "scripts/create.sh").resolve()
    assert plain.inputs == {"a": 1} and plain.process == {"cwd": "/"}
    runner = script_for("script.script_runner.tasks.run", {"script_path": "scripts/create.sh", "b": 2}, tmp_path)
    assert runner.path == plain.path and runner.inputs == {"b": 2}
    with pytest.raises(OperationFailed, match="needs the input script_path"):
        script_for("script.script_runner.tasks.run", {}, tmp_path)
    with pytest.raises(OperationFailed, match="plug-in operations .* cannot run in Stoker"):
        script_for("openstack_plugin.server.create", {}, tmp_path)
    for bad in ("../x.sh", "/bin/true", "scripts/missing.sh"):
        with pytest.raises(OperationFailed) as caught:
            script_for(bad, {}, tmp_path)
        assert not caught.value.recoverable and bad in str(caught.value)


def test_command_for_picks_the_interpreter(tmp_path):
    py = write_script(tmp_path, "a.py", "print(1)\n")
    sh = write_script(tmp_path, "a.sh", "echo 1\n")
    exe = write_script(tmp_path, "tool", "#!/bin/sh\necho 1\n")
    exe.chmod(0o755)
    bang = write_script(tmp_path, "run.pl", "#!/usr/bin/env perl -w\nprint 1;\n")
    bare = write_script(tmp_path, "bare", "echo 1\n")
    assert command_for(Script(py)) == [sys.executable, str(py)]
    assert command_for(Script(sh, process={"args": ["x", 2]})) == ["bash", str(sh), "x", "2"]
    assert command_for(Script(exe)) == [str(exe)]
    assert command_for(Script(bang)) == ["/usr/bin/env", "perl", "-w", str(bang)]
    assert command_for(Script(bare)) == ["sh", str(bare)]
    assert command_for(Script(py, process={"command_prefix": "env X=1 python3"})) == ["env", "X=1", "python3", str(py)]


def test_output_is_logged_and_a_failure_carries_the_stderr_tail(tmp_path):
    recorder = Recorder()
    script = Script(write_script(tmp_path, "fail.sh", """
        echo "doing work"
        for i in $(seq 1 30); do echo "problem $i" >&2; done
        exit 3
    """))
    with pytest.raises(OperationFailed) as caught:
        run(node_context(tmp_path, recorder), script)
    failure = caught.value
    assert "exited with code 3" in str(failure) and failure.recoverable
    assert failure.stderr_tail.splitlines() == [f"problem {i}" for i in range(11, 31)]
    assert ("info", "doing work") in recorder.logs and ("warning", "problem 1") in recorder.logs


def test_process_env_and_cwd(tmp_path):
    recorder = Recorder()
    (tmp_path / "work").mkdir()
    script = Script(write_script(tmp_path, "env.sh", 'echo "$EXTRA $(pwd)"\n'),
                    process={"env": {"EXTRA": "yes"}, "cwd": str(tmp_path / "work")})
    run(node_context(tmp_path, recorder), script)
    assert f"yes {tmp_path / 'work'}" in recorder.messages("info")


def test_timeout_kills_the_whole_process_group(tmp_path):
    recorder = Recorder()
    pids = tmp_path / "pids"
    script = Script(write_script(tmp_path, "hang.sh", f"""
        sleep 300 &
        echo $! > {pids}
        trap '' TERM
        while true; do sleep 0.05; done
    """))
    with pytest.raises(OperationFailed, match="timed out after 0.5 s") as caught:
        run(node_context(tmp_path, recorder), script, timeout=0.5)
    assert not caught.value.recoverable
    assert not _alive(int(pids.read_text()))


def test_cancel_kills_the_running_script_and_its_children(tmp_path):
    recorder = Recorder()
    pids = tmp_path / "pids"
    script = Script(write_script(tmp_path, "long.sh", f"sleep 300 &\necho $! > {pids}\nwait\n"))
    ctx = node_context(tmp_path, recorder)

    async def main():
        async with CtxServer() as server:
            task = asyncio.ensure_future(run_script(server, ctx, script))
            while not pids.exists() or not pids.read_text().strip():
                await asyncio.sleep(0.02)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

    asyncio.run(main())
    assert not _alive(int(pids.read_text()))


def test_a_daemon_left_behind_keeps_running_and_does_not_block(tmp_path):
    recorder = Recorder()
    pids = tmp_path / "pids"
    script = Script(write_script(tmp_path, "start.sh", f"""
        nohup sleep 300 > /dev/null 2>&1 &
        echo $! > {pids}
        sleep 5 &   # still holding our stdout: the runner must not wait for it
        ctx instance runtime-properties pid @$(cat {pids})
    """))
    ctx = node_context(tmp_path, recorder)
    run(ctx, script)
    daemon = int(pids.read_text())
    try:
        assert _alive(daemon) and ctx.instance.runtime_properties == {"pid": daemon}
    finally:
        os.kill(daemon, 9)


def test_run_operation_retries_failures_then_gives_up(tmp_path):
    recorder = Recorder()
    counter = tmp_path / "count"
    write_script(tmp_path, "flaky.sh", f"""
        n=$(( $(cat {counter} 2>/dev/null || echo 0) + 1 )); echo $n > {counter}
        echo "retry number $(ctx operation retry-number)"
        [ $n -ge 3 ] || {{ echo "attempt $n failed" >&2; exit 1; }}
        ctx returns @$n
    """)
    retries = []

    async def main(spec):
        async with CtxServer() as server:
            return await run_operation(server, spec, lambda n: _with_retry(node_context(tmp_path, recorder), n),
                                       RetryPolicy(task_retries=0, task_retry_interval=0),
                                       lambda attempt, why, wait: retries.append((attempt, why, wait)))

    assert asyncio.run(main(OperationSpec("create", "flaky.sh", max_retries=5, retry_interval=0))) == 3
    assert [r[0] for r in retries] == [1, 2] and "exited with code 1" in retries[0][1]
    assert "retry number 2" in recorder.messages("info")
    counter.unlink()
    retries.clear()
    with pytest.raises(OperationFailed) as caught:
        asyncio.run(main(OperationSpec("create", "flaky.sh", max_retries=1, retry_interval=0)))
    assert caught.value.stderr_tail == "attempt 2 failed" and len(retries) == 1


def test_run_operation_honours_retry_requests_and_their_interval(tmp_path):
    recorder = Recorder()
    write_script(tmp_path, "wait.sh", """
        if [ "$(ctx operation retry-number)" -lt 2 ]; then ctx operation retry "db not ready" @0; exit 0; fi
        ctx returns ready
    """)
    retries = []

    async def main(spec):
        async with CtxServer() as server:
            return await run_operation(server, spec, lambda n: _with_retry(node_context(tmp_path, recorder), n),
                                       RetryPolicy(), lambda attempt, why, wait: retries.append((attempt, why, wait)))

    assert asyncio.run(main(OperationSpec("start", "wait.sh", max_retries=3, retry_interval=30))) == "ready"
    assert retries == [(1, "retry requested: db not ready", 0), (2, "retry requested: db not ready", 0)]
    with pytest.raises(OperationFailed, match="no retries left"):
        asyncio.run(main(OperationSpec("start", "wait.sh")))  # cfy local's default: no retries


def test_noop_operations_run_nothing(tmp_path):
    async def main():
        async with CtxServer() as server:
            return await run_operation(server, OperationSpec("create"), lambda n: pytest.fail("no context needed"))

    assert asyncio.run(main()) is None


def test_endless_output_is_logged_up_to_a_limit(tmp_path, monkeypatch):
    from stoker.workflows import scripts

    monkeypatch.setattr(scripts, "MAX_LOGGED_LINES", 50)
    recorder = Recorder()
    script = Script(write_script(tmp_path, "chatty.sh", "seq 1 500\nprintf 'no newline at the end'\n"))
    run(node_context(tmp_path, recorder), script)
    lines = [m for m in recorder.messages() if not m.startswith(("Executing:", "Execution done"))]
    assert lines[:50] == [str(i) for i in range(1, 51)]
    assert lines[50:] == ["more than 50 lines of output: the rest is not logged"]


def test_bad_environment_input_fails_clearly(tmp_path):
    recorder = Recorder()
    script = Script(write_script(tmp_path, "x.sh", "true\n"), inputs={"A=B": 1})
    with pytest.raises(OperationFailed, match="cannot be passed as an environment variable"):
        run(node_context(tmp_path, recorder), script)


def _with_retry(ctx, number):
    ctx.operation.retry_number = number
    return ctx
