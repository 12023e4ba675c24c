"""Wait conditions and software configs through the real engine, on SQLite and PostgreSQL.

The stack is created in a background thread by one ``Engine``; signals come
from a second ``Engine`` on the same database (as another process would send
them), or from a real ``stoker stack resource signal`` process.
"""

from __future__ import annotations

import email
import json
import shlex
import shutil
import subprocess
import sys
import threading
import time

import pytest

from stoker.errors import Conflict
from stoker.resources.builtin.wait_condition import InvalidSignal

from .helpers import hot, outputs_by_key, statuses, wait_until


def wait_stack(count: int = 1, timeout: int = 10) -> dict:
    return hot(
        {
            "handle": {"type": "OS::Heat::WaitConditionHandle"},
            "wait": {"type": "OS::Heat::WaitCondition",
                     "properties": {"handle": {"get_resource": "handle"}, "timeout": timeout,
                                    "count": count}},
            "after": {"type": "OS::Heat::Value", "depends_on": ["wait"], "properties": {"value": "done"}},
        },
        outputs={
            "data": {"value": {"get_attr": ["wait", "data"]}},
            "command": {"value": {"get_attr": ["handle", "curl_cli"]}},
            "token": {"value": {"get_attr": ["handle", "token"]}},
        },
    )


class Background:
    """``engine.create_stack(name, template)`` (or another action of the engine, given the
    stack's name and any other arguments) in a thread; ``result()`` joins it."""

    def __init__(self, engine, name: str, *arguments, action: str = "create_stack"):
        self.outcome: dict = {}
        self.thread = threading.Thread(target=self._run, args=(getattr(engine, action), name, arguments),
                                       daemon=True)
        self.thread.start()

    def _run(self, act, name, arguments):
        try:
            self.outcome["result"] = act(name, *arguments)
        except BaseException as exc:  # reported by result()
            self.outcome["error"] = exc

    def result(self, timeout: float = 30) -> dict:
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "the create did not finish"
        if "error" in self.outcome:
            raise self.outcome["error"]
        return self.outcome["result"]


def waiting(engine, name: str) -> None:
    wait_until(lambda: statuses(engine, name).get("wait") == "CREATE_IN_PROGRESS",
               what="the wait condition to start waiting")


def test_signals_from_another_engine_complete_the_wait(make_engine):
    creator, other = make_engine(), make_engine()
    create = Background(creator, "ws", wait_stack(count=2, timeout=600))
    waiting(other, "ws")
    other.signal("ws", "handle", {"data": "first", "reason": "web up"})
    time.sleep(0.3)
    assert statuses(other, "ws")["wait"] == "CREATE_IN_PROGRESS"  # one of two
    other.signal("ws", "handle", {"id": "db", "data": {"ip": "10.0.0.2"}})
    result = create.result()
    # complete, not timed out: the second signal ended the wait (a timeout would be 10 minutes)
    assert result["stack_status"] == "CREATE_COMPLETE", result["stack_status_reason"]
    outputs = outputs_by_key(result["outputs"])
    assert json.loads(outputs["data"]["output_value"]) == {"1": "first", "db": {"ip": "10.0.0.2"}}
    assert statuses(other, "ws") == {"handle": "CREATE_COMPLETE", "wait": "CREATE_COMPLETE",
                                     "after": "CREATE_COMPLETE"}
    # a third engine reads the same, the token included
    shown = outputs_by_key(make_engine().show_stack("ws")["outputs"])
    assert shown["data"]["output_value"] == outputs["data"]["output_value"]
    assert shown["token"]["output_value"] and shown["token"]["output_value"] == outputs["token"]["output_value"]
    signals = [e for e in other.events("ws", resource_name="handle")
               if e["resource_status_reason"].startswith("Signal")]
    assert len(signals) == 2


def test_no_signal_times_out(make_engine):
    creator = make_engine()
    started = time.monotonic()
    result = creator.create_stack("ws", wait_stack(timeout=1))
    assert time.monotonic() - started >= 1
    assert result["stack_status"] == "CREATE_FAILED"
    assert "WaitConditionTimeout: resources.wait: 0 of 1 received" in result["stack_status_reason"]
    rows = {r["resource_name"]: r for r in creator.resources("ws")}
    assert rows["wait"]["resource_status"] == "CREATE_FAILED"
    assert rows["wait"]["resource_status_reason"] == "WaitConditionTimeout: resources.wait: 0 of 1 received"
    assert rows["after"]["resource_status"] == "INIT_COMPLETE"


def test_failure_signal_fails_the_wait_with_its_reason(make_engine):
    creator, other = make_engine(), make_engine()
    create = Background(creator, "ws", wait_stack(count=2, timeout=600))
    waiting(other, "ws")
    other.signal("ws", "handle", {"status": "FAILURE", "reason": "package install failed"})
    result = create.result()  # long before the 10-minute timeout
    assert result["stack_status"] == "CREATE_FAILED"
    assert "WaitConditionFailure: resources.wait: package install failed" in result["stack_status_reason"]
    rows = {r["resource_name"]: r for r in creator.resources("ws")}
    assert rows["wait"]["resource_status_reason"] == (
        "WaitConditionFailure: resources.wait: package install failed")


def test_the_handles_command_signals_from_anywhere(make_engine, tmp_path):
    """Run elsewhere: no ``stoker`` on PATH, another directory, another $STOKER_HOME."""
    creator, other = make_engine(), make_engine()
    create = Background(creator, "ws", wait_stack(timeout=600))
    waiting(other, "ws")
    command = other.resource("ws", "handle")["attributes"]["curl_cli"]
    argv = shlex.split(command) + ["--data", json.dumps({"data": "from a process"})]
    assert argv[:3] == [sys.executable, "-m", "stoker"]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {"PATH": "/usr/bin:/bin", "STOKER_HOME": str(elsewhere / "home"), "HOME": str(elsewhere)}
    assert shutil.which("stoker", path=env["PATH"]) is None
    done = subprocess.run(argv, cwd=elsewhere, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    result = create.result(timeout=120)
    assert result["stack_status"] == "CREATE_COMPLETE", result["stack_status_reason"]
    assert outputs_by_key(result["outputs"])["data"]["output_value"] == '{"1": "from a process"}'


def test_bad_signals_are_refused_and_change_nothing(make_engine):
    creator, other = make_engine(), make_engine()
    create = Background(creator, "ws", wait_stack(timeout=10))
    waiting(other, "ws")
    with pytest.raises(InvalidSignal):
        other.signal("ws", "handle", {"status": "MAYBE"})
    with pytest.raises(Conflict):
        other.signal("ws", "wait", {"data": 1})
    time.sleep(0.3)
    assert statuses(other, "ws")["wait"] == "CREATE_IN_PROGRESS"
    other.signal("ws", "handle")
    result = create.result()
    assert result["stack_status"] == "CREATE_COMPLETE"
    assert outputs_by_key(result["outputs"])["data"]["output_value"] == '{"1": null}'


def test_stack_with_a_wait_condition_deletes(make_engine):
    creator, other = make_engine(), make_engine()
    create = Background(creator, "ws", wait_stack())
    waiting(other, "ws")
    other.signal("ws", "handle", {"data": 1})
    assert create.result()["stack_status"] == "CREATE_COMPLETE"
    assert other.delete_stack("ws")["stack_status"] == "DELETE_COMPLETE"


CLOUD = {"packages": ["git"], "write_files": [{"path": "/etc/motd", "content": "hi"}]}
CLOUD_TEXT = "#cloud-config\npackages:\n- git\nwrite_files:\n- content: hi\n  path: /etc/motd\n"
SCRIPT = "#!/bin/sh\necho configured > /tmp/done\n"


def config_stack() -> dict:
    return hot(
        {
            "script": {"type": "OS::Heat::SoftwareConfig",
                       "properties": {"group": "script", "config": SCRIPT,
                                      "inputs": [{"name": "who", "default": "world"}],
                                      "outputs": [{"name": "result"}]}},
            "structured": {"type": "OS::Heat::StructuredConfig",
                           "properties": {"config": {"roles": ["web", "db"], "port": 80}}},
            "cloud": {"type": "OS::Heat::CloudConfig", "properties": {"cloud_config": CLOUD}},
            "mime": {"type": "OS::Heat::MultipartMime", "properties": {"parts": [
                {"config": {"get_resource": "cloud"}},
                {"config": {"get_resource": "script"}, "subtype": "x-shellscript",
                 "filename": "setup.sh"},
                {"config": "inline part"},
            ]}},
        },
        outputs={
            "script": {"value": {"get_attr": ["script", "config"]}},
            "script_id": {"value": {"get_resource": "script"}},
            "script_show": {"value": {"get_attr": ["script", "show"]}},
            "structured": {"value": {"get_attr": ["structured", "config"]}},
            "port": {"value": {"get_attr": ["structured", "config", "port"]}},
            "cloud": {"value": {"get_attr": ["cloud", "config"]}},
            "mime": {"value": {"get_attr": ["mime", "config"]}},
        },
    )


def test_config_outputs_render_the_content(make_engine):
    engine = make_engine()
    result = engine.create_stack("configs", config_stack())
    assert result["stack_status"] == "CREATE_COMPLETE", result["stack_status_reason"]
    out = {k: v["output_value"] for k, v in outputs_by_key(result["outputs"]).items()}
    assert out["script"] == SCRIPT
    assert out["structured"] == {"roles": ["web", "db"], "port": 80}
    assert out["port"] == 80
    assert out["cloud"] == CLOUD_TEXT
    assert out["script_show"] == {
        "id": out["script_id"], "name": out["script_show"]["name"], "group": "script", "config": SCRIPT,
        "inputs": [{"name": "who", "type": "String", "default": "world", "replace_on_change": False}],
        "outputs": [{"name": "result", "type": "String", "error_output": False}],
        "options": {},
    }
    message = email.message_from_string(out["mime"])
    assert message.get_content_type() == "multipart/mixed"
    assert [(p.get_content_type(), p.get_filename(), p.get_payload()) for p in message.get_payload()] == [
        ("text/plain", None, CLOUD_TEXT),
        ("text/x-shellscript", "setup.sh", SCRIPT),
        ("text/plain", None, "inline part"),
    ]
    # another engine (process) shows exactly the same
    again = {k: v["output_value"] for k, v in outputs_by_key(make_engine().outputs("configs")).items()}
    assert again == out


def test_changing_a_config_replaces_it(make_engine):
    engine = make_engine()
    engine.create_stack("configs", config_stack())
    before = engine.show_stack("configs")["outputs"]
    template = config_stack()
    template["resources"]["script"]["properties"]["config"] = "echo changed\n"
    result = engine.update_stack("configs", template)
    assert result["stack_status"] == "UPDATE_COMPLETE", result["stack_status_reason"]
    after = {k: v["output_value"] for k, v in outputs_by_key(engine.show_stack("configs")["outputs"]).items()}
    old = {k: v["output_value"] for k, v in outputs_by_key(before).items()}
    assert after["script"] == "echo changed\n"
    assert after["script_id"] != old["script_id"]
    assert "echo changed" in after["mime"] and after["mime"] != old["mime"]
    assert after["cloud"] == old["cloud"]
