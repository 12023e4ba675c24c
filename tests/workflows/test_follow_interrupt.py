"""``stoker install`` follows its execution through the ``Started`` handle: Ctrl-C asks the execution
to stop (running scripts end), a second Ctrl-C kills them; the command ends with the execution's
state and exit 1."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

from .conftest import write_blueprint

SLOW = """
node_templates:
  a:
    type: cloudify.nodes.Root
    interfaces:
      cloudify.interfaces.lifecycle:
        create: scripts/slow.sh
  b:
    type: cloudify.nodes.Root
    relationships: [{type: cloudify.relationships.depends_on, target: a}]
"""
#: how long the test waits for a step it causes (never reached when all is well)
BOUND = 60


def _wait_for(condition, what: str) -> None:
    deadline = time.monotonic() + BOUND
    while not condition():
        assert time.monotonic() < deadline, f"no {what} within {BOUND} s"
        time.sleep(0.05)


def test_ctrl_c_cancels_the_followed_execution_and_a_second_kills_its_script(tmp_path):
    started_file = tmp_path / "started"
    path = write_blueprint(tmp_path / "slow", SLOW, {
        "scripts/slow.sh": f"ctx logger info going-slow\ntouch {started_file}\nsleep 600\n"})
    env = {**os.environ, "STOKER_HOME": str(tmp_path / "home"), "STOKER_DB_URL": f"sqlite:///{tmp_path / 's.db'}"}
    command = subprocess.Popen([sys.executable, "-m", "stoker", "install", str(path), "-f", "json"], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _wait_for(started_file.exists, "script start")
        command.send_signal(signal.SIGINT)
        time.sleep(0.5)  # the graceful cancel lets the script run on: a second Ctrl-C kills it
        command.send_signal(signal.SIGINT)
        out, err = command.communicate(timeout=BOUND)
    finally:
        command.kill()
    assert command.returncode == 1, err
    assert "going-slow" in err  # the events were followed before the interrupt
    assert "Ctrl-C again to kill its running scripts" in err and "(killing its scripts)" in err
    assert json.loads(out[out.index("{"):])["status"] == "cancelled"
    assert "Traceback" not in err
