"""Stoker::Local::Command: real commands, their output, failures and timeouts."""

from __future__ import annotations

import asyncio
import signal
import time

import pytest

from stoker.errors import ValidationFailed
from stoker.resources.builtin.local_command import LocalCommand
from stoker.resources.exceptions import ResourceFailure

from .fakes import FakeStack, create, make, run, update


def created(props, stack=None):
    res = make(LocalCommand, props, stack=stack)
    run(create(res))
    assert res.state == ("CREATE", "COMPLETE"), res.status_reason
    return res


def test_create_runs_the_command_and_keeps_its_output():
    res = created({"create": "echo hello; echo oops >&2"})
    assert res.FnGetAtt("stdout") == "hello\n"
    assert res.FnGetAtt("stderr") == "oops\n"
    assert res.FnGetAtt("exit_code") == 0
    assert res.data()["stdout"] == "hello\n"  # persisted with the resource


def test_non_zero_exit_fails_with_stderr():
    res = make(LocalCommand, {"create": "echo partial; echo 'disk full' >&2; exit 3"})
    with pytest.raises(ResourceFailure):
        run(create(res))
    assert res.state == ("CREATE", "FAILED")
    assert "exited with status 3" in res.status_reason
    assert "disk full" in res.status_reason
    assert res.FnGetAtt("exit_code") == 3
    assert res.FnGetAtt("stdout") == "partial\n"


def test_failure_reason_keeps_only_the_end_of_stderr():
    res = make(LocalCommand, {"create": "head -c 10000 /dev/zero | tr '\\0' a >&2; "
                                        "echo THE-END >&2; exit 1"})
    with pytest.raises(ResourceFailure):
        run(create(res))
    assert res.status_reason.endswith("THE-END")
    assert len(res.status_reason) < 2200


def test_environment_is_passed_but_never_shown(monkeypatch):
    monkeypatch.setenv("STOKER_TEST_INHERITED", "from-parent")
    stack = FakeStack()
    res = make(LocalCommand, {
        "create": 'echo "$TOKEN $COUNT $FLAG $STOKER_TEST_INHERITED"; exit 1',
        "environment": {"TOKEN": "s3cr3t", "COUNT": 3, "FLAG": True},
    }, stack=stack)
    with pytest.raises(ResourceFailure):
        run(create(res))
    assert res.FnGetAtt("stdout") == "s3cr3t 3 true from-parent\n"
    assert not any("s3cr3t" in reason for *_, reason in stack.states)


def test_cwd(tmp_path):
    res = created({"create": "pwd", "cwd": str(tmp_path)})
    assert res.FnGetAtt("stdout").strip() == str(tmp_path)


def test_timeout_kills_the_command_and_everything_it_started(tmp_path):
    marker = tmp_path / "survived"
    res = make(LocalCommand, {"create": f"(sleep 1; touch {marker}) & sleep 30", "timeout": 0.3})
    with pytest.raises(ResourceFailure):
        run(create(res))
    assert res.state == ("CREATE", "FAILED")
    assert "timed out after 0.3 seconds" in res.status_reason
    assert res.FnGetAtt("exit_code") == -signal.SIGKILL  # killed, not waited for
    time.sleep(1.2)
    assert not marker.exists()


def test_update_runs_the_update_command():
    res = created({"create": "echo created", "update": "echo updated"})
    assert run(update(res, {"create": "echo created", "update": "echo updated",
                            "triggers": [1]})) == "updated"
    assert res.FnGetAtt("stdout") == "updated\n"


def test_update_defaults_to_the_create_command():
    res = created({"create": "echo $N", "environment": {"N": 1}})
    run(update(res, {"create": "echo $N", "environment": {"N": 2}}))
    assert res.state == ("UPDATE", "COMPLETE")
    assert res.FnGetAtt("stdout") == "2\n"


def test_changing_triggers_reruns(tmp_path):
    counter = tmp_path / "count"
    props = {"create": f"echo x >> {counter}", "triggers": "v1"}
    res = created(props)
    run(update(res, {**props, "triggers": "v2"}))
    run(update(res, {**props, "triggers": {"any": ["value"]}}))
    assert counter.read_text() == "x\nx\nx\n"


def test_changing_only_delete_or_timeout_does_not_rerun(tmp_path):
    counter = tmp_path / "count"
    props = {"create": f"echo x >> {counter}"}
    res = created(props)
    run(update(res, {**props, "delete": "true", "timeout": 10}))
    assert res.state == ("UPDATE", "COMPLETE")
    assert counter.read_text() == "x\n"


def test_failed_update():
    res = created({"create": "true"})
    with pytest.raises(ResourceFailure):
        run(update(res, {"create": "true", "update": "echo nope >&2; exit 2"}))
    assert res.state == ("UPDATE", "FAILED")
    assert "update command exited with status 2: nope" in res.status_reason


def test_delete_runs_the_delete_command(tmp_path):
    target = tmp_path / "made"
    res = created({"create": f"touch {target}", "delete": f"rm {target}"})
    assert target.exists()
    run(res.delete())
    assert res.state == ("DELETE", "COMPLETE")
    assert not target.exists()


def test_delete_without_a_delete_command_does_nothing():
    res = created({"create": "true"})
    run(res.delete())
    assert res.state == ("DELETE", "COMPLETE")


def test_failing_delete_command_fails_delete():
    res = created({"create": "true", "delete": "exit 4"})
    with pytest.raises(ResourceFailure):
        run(res.delete())
    assert res.state == ("DELETE", "FAILED")


def test_create_is_required():
    with pytest.raises(ValidationFailed):
        make(LocalCommand, {"delete": "true"}).validate_template()


def test_commands_run_concurrently(tmp_path):
    """Handlers run in worker threads: slow commands do not wait for each other.

    Each command marks that it started, then succeeds only once all four have
    started (giving up after 20 s): run one after another, the first fails.
    """
    stack = FakeStack()
    meet = ('touch "$MARKS/$NAME"; for _ in $(seq 200); do '
            '[ "$(ls "$MARKS" | wc -l)" -ge 4 ] && exit 0; sleep 0.1; done; exit 1')
    resources = [make(LocalCommand, {"create": meet, "environment": {"MARKS": str(tmp_path), "NAME": f"c{i}"},
                                     "timeout": 60}, name=f"c{i}", stack=stack)
                 for i in range(4)]

    async def create_all():
        await asyncio.gather(*(create(r) for r in resources))

    run(create_all())
    assert all(r.state == ("CREATE", "COMPLETE") for r in resources)


def test_cancelling_the_action_kills_the_command(tmp_path):
    marker = tmp_path / "survived"
    res = make(LocalCommand, {"create": f"sleep 1; touch {marker}"})

    async def create_briefly():
        await asyncio.wait_for(create(res), 0.3)

    with pytest.raises(asyncio.TimeoutError):
        run(create_briefly())
    assert res.state == ("CREATE", "FAILED")
    time.sleep(1.2)
    assert not marker.exists()


def test_missing_cwd_fails_create(tmp_path):
    res = make(LocalCommand, {"create": "true", "cwd": str(tmp_path / "nope")})
    with pytest.raises(ResourceFailure):
        run(create(res))
    assert res.state == ("CREATE", "FAILED")
    assert "No such file or directory" in res.status_reason
