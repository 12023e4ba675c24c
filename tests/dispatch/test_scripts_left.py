"""A worker SIGKILLed while a command or script it started runs: whoever runs the operation again
kills the commands the dead worker left first, so that two copies never run at once (issue 21).

Each run of the operation appends ``start <its process group>`` to a log, after noting
``beside <group>`` for every earlier run whose group still runs (a process of it that is not a
zombie); the first run then holds for ten minutes (until it is killed), the second ends at once.
"""

from __future__ import annotations

import inspect
import os
import signal
import sys
import time
from contextlib import contextmanager

import pytest

from .conftest import SETTLE_LIMIT
from .test_executions import HEADER, finish

def running(group):
    """Does a process of the group still run (one that is not a zombie: init reaps them late)?"""
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            state, _parent, pgrp = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[:3]
        except OSError:
            continue
        if int(pgrp) == group and state != "Z":
            return True
    return False


OPERATION = "import os, sys, time\n" + inspect.getsource(running) + """
log = sys.argv[1]
lines = open(log).read().splitlines() if os.path.exists(log) else []
earlier = [int(line.split()[1]) for line in lines if line.startswith("start")]
def note(line):
    with open(log, "a") as f:
        f.write(line + "\\n")
for group in earlier:
    if running(group):
        note(f"beside {group}")
note(f"start {os.getpgid(0)}")
if not earlier:
    time.sleep(600)
note(f"end {os.getpgid(0)}")
"""


def runs(log):
    return [line.split() for line in log.read_text().splitlines()] if log.exists() else []


@contextmanager
def operation(tmp_path):
    """(the shell command that runs the operation, its log); the groups it started are killed after."""
    script, log = tmp_path / "op.py", tmp_path / "runs.log"
    script.write_text(OPERATION)
    try:
        yield f"{sys.executable} {script} {log}", log
    finally:
        for fields in runs(log):
            if fields[0] == "start":
                try:
                    os.killpg(int(fields[1]), signal.SIGKILL)
                except ProcessLookupError:
                    pass


def deploy_one(tmp_path, command, cluster):
    """Deployment ``dep``: one node whose create runs ``command``."""
    folder = tmp_path / "bp"
    (folder / "scripts").mkdir(parents=True)
    (folder / "scripts" / "op.sh").write_text(f"exec {command}\n")
    (folder / "blueprint.yaml").write_text(HEADER + """\
node_templates:
  app:
    type: cloudify.nodes.Root
    interfaces:
      cloudify.interfaces.lifecycle:
        create: scripts/op.sh
""")
    cluster.engine.blueprints.upload(folder / "blueprint.yaml", "bp")
    cluster.engine.blueprints.deployments.create("dep", "bp", {})


def kill_the_worker_once_running(cluster, log, another=True):
    """Start a worker, wait for its operation to start, start ``another`` (its task then goes to
    that one), and SIGKILL the first.  The group of the first run."""
    doomed = cluster.start_worker()
    limit = time.monotonic() + SETTLE_LIMIT
    while not runs(log):
        assert time.monotonic() < limit, "the operation never started"
        time.sleep(0.05)
    if another:
        cluster.start_worker()
        cluster.listening(2)
    cluster.kill(doomed)
    return int(runs(log)[0][1])


def assert_ran_again_alone(log, first):
    assert [fields[0] for fields in runs(log)] == ["start", "start", "end"], runs(log)  # never beside the first
    assert not running(first), f"the dead worker's command (group {first}) still runs"


def command_stack(cluster, tmp_path, command):
    """A stack whose ``Stoker::Local::Command`` creates with ``command``; what checks it ended well."""
    template = {"heat_template_version": "2018-08-31",
                "resources": {"cmd": {"type": "Stoker::Local::Command", "properties": {"create": command}}}}
    started = cluster.engine.create_stack("left", template)

    def created():
        done = cluster.settle(started["id"])
        assert done["stack_status"] == "CREATE_COMPLETE", done["stack_status_reason"]
    return created


def script_install(cluster, tmp_path, command):
    """An install whose one operation's script runs ``command``; what checks it ended well."""
    deploy_one(tmp_path, command, cluster)
    started = cluster.engine.executions.start("install", "dep")

    def installed():
        done = finish(cluster, started)
        assert done["status"] == "terminated", done["error"]
    return installed


@pytest.mark.parametrize("start", [command_stack, script_install])
def test_what_a_dead_worker_left_running_is_killed_before_the_operation_runs_again(cluster, tmp_path, start):
    with operation(tmp_path) as (command, log):
        ended_well = start(cluster, tmp_path, command)
        first = kill_the_worker_once_running(cluster, log)
        ended_well()
        assert_ran_again_alone(log, first)


def test_a_cancel_after_the_only_worker_died_kills_the_scripts_it_left(cluster, tmp_path):
    """No worker takes the step over: the process asking for the cancel kills the dead worker's script."""
    with operation(tmp_path) as (command, log):
        deploy_one(tmp_path, command, cluster)
        started = cluster.engine.executions.start("install", "dep")
        first = kill_the_worker_once_running(cluster, log, another=False)
        assert running(first)

        cluster.engine.executions.cancel(started["id"], force=True)
        assert not running(first)
