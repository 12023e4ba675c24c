"""The README's example, as a user runs it: the CLI installs it, the server answers, uninstall cleans up."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # each command is a process of its own

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "local-app" / "blueprint.yaml"
PORT = 18781  # this helper's port range


def _stoker(env, *args, check=True):
    done = subprocess.run([sys.executable, "-c", "from stoker.cli import main; main()", *args], env=env,
                          capture_output=True, text=True, timeout=120)
    if check:
        assert done.returncode == 0, done.stderr
    return done


@pytest.fixture
def env(tmp_path):
    return {**os.environ, "STOKER_HOME": str(tmp_path / "home"), "STOKER_DB_URL": f"sqlite:///{tmp_path / 's.db'}"}


def _alive(pid: int) -> bool:
    done = subprocess.run(["ps", "-o", "stat=", "-p", str(pid)], capture_output=True, text=True)
    return done.returncode == 0 and not done.stdout.strip().startswith("Z")


def test_local_app_installs_serves_and_uninstalls_cleanly(env, tmp_path):
    base = tmp_path / "apps"
    _stoker(env, "blueprint", "upload", str(EXAMPLE), "-b", "local-app")
    _stoker(env, "deployment", "create", "app1", "-b", "local-app", "-i", f"port={PORT}", "-i", f"base_dir={base}")
    installed = _stoker(env, "install", "app1", "-f", "json")
    assert json.loads(installed.stdout)["status"] == "terminated"
    assert "started the server" in installed.stderr  # --wait is the default: events and logs as they happen
    outputs = json.loads(_stoker(env, "deployment", "outputs", "app1", "-f", "json").stdout)
    assert outputs["url"] == f"http://127.0.0.1:{PORT}/app.conf"
    assert outputs["config_file"] == str(base / "app1" / "app.conf")
    with urllib.request.urlopen(outputs["url"], timeout=10) as answer:
        body = answer.read().decode()
    assert "greeting = Hello from Stoker" in body and f"port = {PORT}" in body
    assert _alive(outputs["pid"])

    uninstalled = _stoker(env, "uninstall", "app1", "-f", "json")
    assert json.loads(uninstalled.stdout)["status"] == "terminated"
    assert not _alive(outputs["pid"]) and not (base / "app1").exists()
    instances = json.loads(_stoker(env, "node-instance", "list", "-d", "app1", "-f", "json").stdout)
    assert {i["state"] for i in instances} == {"deleted"}
    executions = json.loads(_stoker(env, "execution", "list", "-d", "app1", "-f", "json").stdout)
    assert [e["workflow_id"] for e in executions] == ["install", "uninstall"]
    events = _stoker(env, "event", "list", "-e", executions[1]["id"], "--include-logs").stdout
    assert "stopped the server" in events and "workflow_succeeded" in events
    refused = _stoker(env, "execution", "cancel", executions[1]["id"], check=False)
    assert refused.returncode == 1 and "is terminated: there is nothing to cancel" in refused.stderr
    got = json.loads(_stoker(env, "execution", "get", executions[0]["id"], "-f", "json").stdout)
    assert got["workflow_id"] == "install" and got["status"] == "terminated" and got["error"] == ""


def test_cli_errors_are_clear_and_exit_non_zero(env):
    _stoker(env, "blueprint", "upload", str(EXAMPLE), "-b", "local-app")
    _stoker(env, "deployment", "create", "app2", "-b", "local-app")
    for args, message in [(("execution", "start", "nope", "-d", "app2"), "Workflow nope not found"),
                          (("execution", "get", "missing"), "Execution missing not found"),
                          (("install", "ghost"), "Deployment ghost not found"),
                          (("execution", "start", "scale", "-d", "app2", "-p", "delta=x"),
                           "parameter delta must be of type integer, not 'x'"),
                          (("execution", "start", "scale", "-d", "app2"), "missing parameter(s): scalable_entity_name"),
                          (("execution", "start", "scale", "-d", "app2", "-p", "scalable_entity_name=nope"),
                           "'nope' is neither a node nor a scaling group"),
                          (("event", "list", "-e", "missing"), "Execution missing not found")]:
        done = _stoker(env, *args, check=False)
        assert done.returncode == 1 and message in done.stderr and "Traceback" not in done.stderr, args
