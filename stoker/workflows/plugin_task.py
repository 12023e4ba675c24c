"""The execution's side of a plugin task run by cloudify-common (``plugin_runner/stoker_operation.py``).

Two ``ctx`` requests serve it: ``plugin-task`` hands over, in one answer, the
context cloudify-common builds its ``CloudifyContext`` from (ids, operation,
plugin, the nodes and instances it may read) and the task's inputs;
``update-instance`` stores an instance's runtime properties as the task's
``ctx.instance.update()`` leaves them (keys set, changed or removed).  While
the task runs it holds REST access to its tenant (``rest_granted``), which its
``cloudify.manager.get_rest_client()`` uses.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
from typing import Any, AsyncIterator

from stoker.workflows import rest_manager
from stoker.workflows.operation_context import InstanceView, NodeView, OperationContext, OperationFailed
from stoker.workflows.workdirs import deployment_plugins_workdir

#: cloudify-common's names of the operation's kinds (``cloudify.constants``)
NODE_INSTANCE, RELATIONSHIP_INSTANCE, DEPLOYMENT = "node-instance", "relationship-instance", "deployment"


class TaskRefused(ValueError):
    """A request of the plugin runner that names something outside its operation."""


def task_context(ctx: OperationContext) -> dict:
    """What the runner needs: ``context`` (cloudify-common's), ``inputs``, ``nodes``, ``instances``, ``workdir``."""
    plugin = ctx.plugin or {}
    context: dict[str, Any] = {
        "deployment_id": ctx.deployment_id, "blueprint_id": ctx.blueprint_id, "execution_id": ctx.execution_id,
        "workflow_id": ctx.workflow_id, "tenant": {"name": ctx.tenant_name}, "type": _kind(ctx),
        "operation": {"name": ctx.operation.name, "retry_number": ctx.operation.retry_number,
                      "max_retries": ctx.operation.max_retries},
        "plugin": {key: plugin.get(key) for key in ("name", "package_name", "package_version", "properties")}}
    sides = []
    if ctx.source is not None and ctx.target is not None:
        acting, related = (ctx.target, ctx.source) if ctx.acting_side == "target" else (ctx.source, ctx.target)
        context.update(_subject(acting.node, acting.instance))
        context["related"] = {**_subject(related.node, related.instance), "is_target": related is ctx.target}
        sides = [ctx.source, ctx.target]
    elif ctx.node is not None and ctx.instance is not None:
        context.update(_subject(ctx.node, ctx.instance))
        sides = [ctx]
    return {"context": context, "inputs": copy.deepcopy(ctx.operation.inputs),
            "nodes": {side.node.id: _node(side.node) for side in sides},
            "instances": {side.instance.id: _instance(side.node, side.instance) for side in sides},
            "workdir": str(deployment_plugins_workdir(ctx.deployment_id)), "rest": ctx.rest}


@contextlib.asynccontextmanager
async def rest_granted(ctx: OperationContext) -> AsyncIterator[None]:
    """``ctx.rest`` set to the process's REST access for the task's project while the task runs."""
    manager = rest_manager.current()
    if manager is None or ctx.manager is None:
        yield
        return
    store, project = ctx.manager.store, ctx.manager.project_id
    purpose = f"plugin task {ctx.operation.name} of execution {ctx.execution_id}"
    try:
        access = await asyncio.to_thread(manager.grant, store, project, purpose)
    except Exception as exc:  # noqa: BLE001  (the database or the server's port: the attempt fails, retried)
        raise OperationFailed(f"cannot give the task its REST manager: {type(exc).__name__}: {exc}") from None
    ctx.rest = access.as_context()
    try:
        yield
    finally:
        ctx.rest = None
        # a token not deleted now (the database away) still expires: the task's outcome stands
        with contextlib.suppress(Exception):
            await asyncio.to_thread(manager.release, store, access)


async def update_instance(ctx: OperationContext, instance_id: Any, properties: Any) -> None:
    """The task's runtime properties of ``instance_id`` as a whole: what differs is stored."""
    views = [v for v in (ctx.instance, ctx.source and ctx.source.instance, ctx.target and ctx.target.instance)
             if v is not None and v.id == instance_id]
    if not views:
        raise TaskRefused(f"instance {instance_id!r} is not one this operation runs on")
    if not isinstance(properties, dict):
        raise TaskRefused("runtime properties are a mapping")
    view = views[0]
    current = view.runtime_properties
    changed = [key for key in properties if key not in current or current[key] != properties[key]]
    removed = [key for key in current if key not in properties]
    for key in removed:
        del current[key]
    for key in changed:
        current[key] = copy.deepcopy(properties[key])
    for key in removed + changed:
        await ctx.persist(view, [key])


def _kind(ctx: OperationContext) -> str:
    return {"relationship-instance": RELATIONSHIP_INSTANCE, "node-instance": NODE_INSTANCE}.get(ctx.type, DEPLOYMENT)


def _subject(node: NodeView, instance: InstanceView) -> dict:
    return {"node_id": instance.id, "node_name": node.name}


def _node(node: NodeView) -> dict:
    return {"id": node.id, "name": node.name, "type": node.type, "type_hierarchy": node.type_hierarchy,
            "properties": node.properties}


def _instance(node: NodeView, instance: InstanceView) -> dict:
    return {"id": instance.id, "node_id": node.id, "runtime_properties": instance.runtime_properties,
            "host_id": instance.host_id, "index": instance.index, "version": 1}
