"""A context for script tests: what a workflow would give an operation, recorded for assertions."""

from __future__ import annotations

import asyncio
import copy
from pathlib import Path

from stoker.workflows.operation_context import InstanceView, NodeView, OperationContext, OperationInfo, Side
from stoker.workflows.ctx_server import CtxServer
from stoker.workflows.scripts import Script, run_script


class Recorder:
    def __init__(self):
        self.logs: list[tuple[str, str]] = []
        self.stored: dict[str, list[dict]] = {}  # instance id -> every persisted version

    def log(self, level: str, message: str) -> None:
        self.logs.append((level, message))

    async def persist(self, instance: InstanceView, path: str | list) -> None:
        self.stored.setdefault(instance.id, []).append(copy.deepcopy(instance.runtime_properties))

    def messages(self, level: str | None = None) -> list[str]:
        return [m for lv, m in self.logs if level is None or lv == level]


def node_context(root: Path, recorder: Recorder, inputs: dict | None = None, name: str = "create",
                 properties: dict | None = None, runtime: dict | None = None) -> OperationContext:
    return OperationContext(
        deployment_id="dep1", blueprint_id="bp1", execution_id="ex1", workflow_id="install",
        operation=OperationInfo(f"cloudify.interfaces.lifecycle.{name}", dict(inputs or {}), 0, 2),
        resource_root=root, log=recorder.log, persist=recorder.persist,
        node=NodeView("web", "cloudify.nodes.WebServer", dict(properties or {"port": 8080, "tls": {"on": True}}),
                      ["cloudify.nodes.Root", "cloudify.nodes.WebServer"]),
        instance=InstanceView("web_abc123", 2, dict(runtime or {}), host_id="host_1"))


def relationship_context(root: Path, recorder: Recorder) -> OperationContext:
    return OperationContext(
        deployment_id="dep1", blueprint_id="bp1",
        operation=OperationInfo("cloudify.interfaces.relationship_lifecycle.preconfigure"),
        resource_root=root, log=recorder.log, persist=recorder.persist,
        source=Side(NodeView("web", "cloudify.nodes.WebServer", {"port": 80}), InstanceView("web_1", 0, {})),
        target=Side(NodeView("db", "cloudify.nodes.DBMS", {"name": "main"}),
                    InstanceView("db_1", 0, {"ip": "10.0.0.5"})))


def write_script(root: Path, name: str, text: str) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def run(ctx: OperationContext, script: Script, timeout: float | None = None):
    """Run one script against ``ctx`` under its own ctx server; its ``ctx returns`` value."""
    async def main():
        async with CtxServer() as server:
            return await run_script(server, ctx, script, timeout)

    return asyncio.run(main())
