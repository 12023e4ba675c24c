"""Stopping the commands a dead engine left behind, and only those."""

from __future__ import annotations

import os
import socket
import subprocess

from stoker.resources import processes


def _dead_engine() -> str:
    gone = subprocess.Popen(["true"])
    gone.wait()
    return f"{socket.gethostname()}:{gone.pid}:x"


def _running():
    proc, record = processes.start(["sleep", "600"], dict(os.environ), None)
    return proc, record


def test_a_command_of_a_live_engine_is_left_alone():
    proc, record = _running()
    try:
        assert record["engine"].split(":")[1] == str(os.getpid())
        assert processes.stop_orphan(record) is False
        assert proc.poll() is None
    finally:
        processes.kill_group(proc.pid)
        proc.wait()


def test_a_dead_engines_command_is_killed_only_when_it_carries_the_marker():
    proc, record = _running()
    try:
        orphan = {**record, "engine": _dead_engine()}
        assert processes.stop_orphan({**orphan, "marker": "another command"}) is False
        assert proc.poll() is None
        assert processes.stop_orphan({**orphan, "host": "elsewhere"}) is False
        assert processes.stop_orphan(orphan) is True
        assert proc.wait(timeout=10) == -9
        assert processes.stop_orphan(orphan) is False  # nothing left to stop
    finally:
        processes.kill_group(proc.pid)
        proc.wait()


def test_records_that_are_not_commands_are_ignored():
    for record in (None, {}, {"pgid": "1"}, "text"):
        assert processes.stop_orphan(record) is False
