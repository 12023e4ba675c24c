"""The execution's side of a plugin task: the context handed to cloudify-common in one answer, and
runtime properties stored as the task's ``update()`` leaves them (asked as the runner asks, over ctx)."""

from __future__ import annotations

import asyncio

import pytest

from stoker.workflows.ctx_verbs import CtxRequestError, handle

from .fakes import Recorder, node_context, relationship_context


def _ask(ctx, *args):
    return asyncio.run(handle(ctx, list(args)))


def test_the_task_context_names_what_cloudify_common_reads(tmp_path, monkeypatch):
    monkeypatch.setenv("STOKER_HOME", str(tmp_path / "home"))
    ctx = node_context(tmp_path, Recorder(), inputs={"size": 3}, runtime={"a": 1})
    ctx.plugin = {"name": "demo", "package_name": "demo-plugin", "package_version": "1.0", "properties": {"r": "x"}}
    task = _ask(ctx, "plugin-task")
    assert task["context"] == {
        "deployment_id": "dep1", "blueprint_id": "bp1", "execution_id": "ex1", "workflow_id": "install",
        "tenant": {"name": "default_tenant"}, "type": "node-instance", "node_id": "web_abc123", "node_name": "web",
        "operation": {"name": "cloudify.interfaces.lifecycle.create", "retry_number": 0, "max_retries": 2},
        "plugin": {"name": "demo", "package_name": "demo-plugin", "package_version": "1.0", "properties": {"r": "x"}}}
    assert task["inputs"] == {"size": 3}
    assert task["instances"] == {"web_abc123": {"id": "web_abc123", "node_id": "web", "runtime_properties": {"a": 1},
                                                "host_id": "host_1", "index": 2, "version": 1}}
    assert task["nodes"]["web"]["properties"] == {"port": 8080, "tls": {"on": True}}
    assert task["workdir"] == str(tmp_path / "home" / "plugin-workdirs" / "dep1")


def test_a_relationship_task_acts_on_its_side_with_the_other_related(tmp_path, monkeypatch):
    monkeypatch.setenv("STOKER_HOME", str(tmp_path / "home"))
    ctx = relationship_context(tmp_path, Recorder())
    ctx.plugin = {"name": "demo"}
    ctx.acting_side = "target"
    context = _ask(ctx, "plugin-task")["context"]
    assert (context["type"], context["node_id"], context["related"]) == (
        "relationship-instance", "db_1", {"node_id": "web_1", "node_name": "web", "is_target": False})
    assert sorted(_ask(ctx, "plugin-task")["instances"]) == ["db_1", "web_1"]


def test_update_instance_stores_what_changed_and_what_went(tmp_path):
    recorder = Recorder()
    ctx = node_context(tmp_path, recorder, runtime={"keep": 1, "change": 1, "drop": 1})
    _ask(ctx, "update-instance", "web_abc123", {"keep": 1, "change": 2, "new": [3]})
    assert ctx.instance.runtime_properties == {"keep": 1, "change": 2, "new": [3]}
    assert len(recorder.stored["web_abc123"]) == 3  # drop, change, new: one edit each
    with pytest.raises(CtxRequestError, match="not one this operation runs on"):
        _ask(ctx, "update-instance", "other_1", {})
    with pytest.raises(CtxRequestError, match="runtime properties are a mapping"):
        _ask(ctx, "update-instance", "web_abc123", ["x"])
    with pytest.raises(CtxRequestError, match="not a plugin's"):
        _ask(ctx, "plugin-task")
