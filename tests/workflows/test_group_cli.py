"""``stoker deployment group ...`` and ``stoker execution group ...`` on the local engine: a group made by id
and by label, a workflow run on it one deployment at a time (the command waits for all), new deployments
of its default blueprint, shrink, delete."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

from click.testing import CliRunner

from stoker.cli import main

from box_blueprint import write_box


def _run(env, *args, ok: bool = True):
    done = CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)
    assert (done.exit_code == 0) == ok, done.output
    return done


def _json(env, *args):
    return json.loads(_run(env, *args, "-f", "json").stdout)  # stderr: the executions' ends as they land


def test_groups_from_the_stoker_command(tmp_path):
    env = {"STOKER_HOME": str(tmp_path / "home"), "STOKER_DB_URL": f"sqlite:///{tmp_path / 's.db'}"}
    path = write_box(tmp_path / "bp", "sleep 0.3\n")
    _run(env, "blueprint", "upload", str(path), "-b", "bp")
    _run(env, "deployment", "create", "a", "-b", "bp")
    _run(env, "deployment", "create", "b", "-b", "bp", "--label", "tier:web")
    _run(env, "deployment", "create", "c", "-b", "bp", "--label", "tier:web")
    _run(env, "deployment", "group", "create", "g", "-b", "bp", "--description", "boxes")
    _run(env, "deployment", "group", "extend", "g", "-d", "a")
    assert _json(env, "deployment", "group", "extend", "g", "--label-rule", "tier=web")["deployment_ids"] == [
        "a", "b", "c"]

    ended = _json(env, "execution", "group", "start", "install", "-g", "g", "--concurrency", "1")
    assert (ended["status"], ended["concurrency"], len(ended["execution_ids"])) == ("terminated", 1, 3)
    runs = sorted((_json(env, "execution", "get", i) for i in ended["execution_ids"]), key=lambda e: e["started_at"])
    assert [e["status"] for e in runs] == ["terminated"] * 3
    for before, after in zip(runs, runs[1:]):  # one at a time
        assert datetime.fromisoformat(before["ended_at"][:-1]) <= datetime.fromisoformat(after["started_at"][:-1])
    assert [g["id"] for g in _json(env, "execution", "group", "list")] == [ended["id"]]
    missing = _run(env, "execution", "group", "start", "no_flow", "-g", "g", ok=False)
    assert "Workflow no_flow does not exist in the deployment a" in missing.output

    grown = _json(env, "deployment", "group", "extend", "g", "--count", "1")
    assert len(grown["deployment_ids"]) == 4 and any(d.startswith("g-") for d in grown["deployment_ids"])
    assert _json(env, "deployment", "group", "shrink", "g", "-d", "a")["deployment_ids"][:2] == ["b", "c"]
    assert "deleted" in _run(env, "deployment", "group", "delete", "g", "--delete-deployments").output
    assert [d["id"] for d in _json(env, "deployment", "list")] == ["a"]
    assert "was not found" in _run(env, "deployment", "group", "get", "g", ok=False).output


def test_a_command_whose_execution_frees_a_deployment_runs_the_groups_turn_to_its_end(tmp_path):
    """``stoker execution start`` on a deployment a group waits for: its end starts the group's execution
    there, which the command runs before it exits (not left to die with it)."""
    stoker = str(Path(sys.executable).parent / "stoker")
    env = {**os.environ, "STOKER_HOME": str(tmp_path / "home"), "STOKER_DB_URL": f"sqlite:///{tmp_path / 's.db'}"}
    go = tmp_path / "go"
    path = write_box(tmp_path / "bp", f"while [ ! -f {go} ]; do sleep 0.05; done\n")
    for args in (("blueprint", "upload", str(path), "-b", "bp"), ("deployment", "create", "x", "-b", "bp"),
                 ("deployment", "group", "create", "g"), ("deployment", "group", "extend", "g", "-d", "x")):
        _run(env, *args)
    own = subprocess.Popen([stoker, "execution", "start", "install", "-d", "x"], env=env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not _json(env, "execution", "list"):
        assert time.monotonic() < deadline, "the deployment's own install did not start"
        time.sleep(0.05)
    group = subprocess.Popen([stoker, "execution", "group", "start", "install", "-g", "g", "-f", "json"], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    while not _json(env, "execution", "group", "list"):
        assert time.monotonic() < deadline, "the group did not start"
        time.sleep(0.05)
    go.write_text("go")
    assert own.wait(timeout=60) == 0
    out, _ = group.communicate(timeout=60)
    assert group.returncode == 0 and json.loads(out)["status"] == "terminated", out


def test_target_groups_and_concurrency_from_the_stoker_command(tmp_path):
    env = {"STOKER_HOME": str(tmp_path / "home"), "STOKER_DB_URL": f"sqlite:///{tmp_path / 's.db'}"}
    path = write_box(tmp_path / "bp", 'case "$(ctx deployment id)" in bad*) exit 1 ;; esac\n')
    _run(env, "blueprint", "upload", str(path), "-b", "bp")
    for name in ("good", "bad"):
        _run(env, "deployment", "create", name, "-b", "bp")
    for name in ("all", "passed", "broke"):
        _run(env, "deployment", "group", "create", name)
    _run(env, "deployment", "group", "extend", "all", "-d", "good", "-d", "bad")
    assert "bad: install failed" in _run(env, "execution", "group", "start", "install", "-g", "all", ok=False).output
    [ended] = _json(env, "execution", "group", "list")
    assert ended["status"] == "failed"
    shown = _json(env, "execution", "group", "set-success-group", ended["id"], "passed")
    assert shown["success_group_id"] == "passed"
    _run(env, "execution", "group", "set-failure-group", ended["id"], "broke")
    assert _json(env, "deployment", "group", "get", "passed")["deployment_ids"] == ["good"]
    assert _json(env, "deployment", "group", "get", "broke")["deployment_ids"] == ["bad"]
    assert _json(env, "execution", "group", "set-concurrency", ended["id"], "4")["concurrency"] == 4
    assert "was not found" in _run(env, "execution", "group", "set-success-group", ended["id"], "nope",
                                   ok=False).output
