"""The ``ctx`` verbs: one request (a list of words and JSON values) -> one answer.

Every verb is spelt as Cloudify's ctx proxy spells it (``runtime-properties``
or ``runtime_properties``); only the verbs in these tables exist -- a request
never reaches an arbitrary attribute of the engine's objects.
"""

from __future__ import annotations

import asyncio
from typing import Any

from stoker.workflows import dotted, plugin_task, workdirs
from stoker.workflows.operation_context import AbortRequested, InstanceView, NodeView, OperationContext
from stoker.workflows.resources import download, resource_path

LEVELS = ("debug", "info", "warning", "error")


class CtxRequestError(Exception):
    """A request ``ctx`` cannot answer; the script's ``ctx`` command exits 1 with this message."""


class StopOperation(Exception):
    """The script asked to end its operation (abort or retry); ``ctx`` exits 1 with this message."""


def _word(value: Any) -> str:
    return value.replace("_", "-") if isinstance(value, str) else ""


def _only(args: list, count: int, usage: str) -> None:
    if len(args) > count:
        raise CtxRequestError(f"too many arguments: ctx {usage}")


async def handle(ctx: OperationContext, args: list) -> Any:
    if not args:
        raise CtxRequestError("missing verb: ctx instance|node|source|target|deployment|blueprint|"
                              "logger|operation|returns|download-resource ...")
    verb, rest = _word(args[0]), args[1:]
    if verb in ("instance", "node"):
        if ctx.source is not None:
            raise CtxRequestError(f"ctx {verb} is not available in a relationship operation; "
                                  f"use ctx source {verb} or ctx target {verb}")
        if ctx.instance is None or ctx.node is None:
            raise CtxRequestError(f"ctx {verb} is not available in a {ctx.type} operation")
        return await _side(ctx, ctx.node, ctx.instance, verb, rest)
    if verb in ("source", "target"):
        side = getattr(ctx, verb)
        if side is None:
            raise CtxRequestError(f"ctx {verb} is only available in a relationship operation")
        which = _word(rest[0]) if rest else ""
        if which not in ("instance", "node"):
            raise CtxRequestError(f"usage: ctx {verb} instance|node ...")
        return await _side(ctx, side.node, side.instance, which, rest[1:])
    handler = _TOP.get(verb)
    if handler is None:
        raise CtxRequestError(f"unknown ctx verb: {args[0]}")
    return await handler(ctx, rest)


async def _side(ctx: OperationContext, node: NodeView, instance: InstanceView, which: str, args: list) -> Any:
    if not args:
        raise CtxRequestError(f"usage: ctx {which} " + ("id|index|host-id|runtime-properties [KEY [VALUE]]"
                                                        if which == "instance" else
                                                        "id|name|type|type-hierarchy|properties [KEY]"))
    attribute, rest = _word(args[0]), args[1:]
    if which == "node":
        if attribute == "properties":
            _only(rest, 1, "node properties [KEY]")
            return _read(node.properties, rest)
        values = {"id": node.id, "name": node.name, "type": node.type, "type-hierarchy": node.type_hierarchy}
    else:
        if attribute == "runtime-properties":
            return await _runtime_properties(ctx, instance, rest)
        values = {"id": instance.id, "index": instance.index, "host-id": instance.host_id}
    if attribute not in values:
        raise CtxRequestError(f"unknown ctx {which} attribute: {args[0]}")
    _only(rest, 0, f"{which} {attribute}")
    return values[attribute]


def _read(data: dict, path: list) -> Any:
    if not path:
        return data
    try:
        return dotted.get(data, path[0])
    except dotted.PathError as exc:
        raise CtxRequestError(str(exc)) from None


async def _runtime_properties(ctx: OperationContext, instance: InstanceView, args: list) -> Any:
    if len(args) < 2:
        return _read(instance.runtime_properties, args)
    _only(args, 2, "instance runtime-properties [KEY [VALUE]]")
    try:
        dotted.set(instance.runtime_properties, args[0], args[1])
    except dotted.PathError as exc:
        raise CtxRequestError(str(exc)) from None
    await ctx.persist(instance, args[0])
    return None


async def _id_of(ctx: OperationContext, args: list, which: str) -> Any:
    if [_word(a) for a in args] != ["id"]:
        raise CtxRequestError(f"usage: ctx {which} id")
    return ctx.deployment_id if which == "deployment" else ctx.blueprint_id


async def _deployment(ctx: OperationContext, args: list) -> Any:
    return await _id_of(ctx, args, "deployment")


async def _blueprint(ctx: OperationContext, args: list) -> Any:
    return await _id_of(ctx, args, "blueprint")


async def _logger(ctx: OperationContext, args: list) -> Any:
    level = _word(args[0]) if args else ""
    if level not in LEVELS or len(args) < 2:
        raise CtxRequestError("usage: ctx logger debug|info|warning|error MESSAGE")
    ctx.log(level, " ".join(str(a) for a in args[1:]))
    return None


async def _operation(ctx: OperationContext, args: list) -> Any:
    attribute = _word(args[0]) if args else ""
    rest = args[1:]
    if attribute == "retry":
        _only(rest, 2, "operation retry [MESSAGE [INTERVAL]]")
        ctx.request_retry(_message(rest), _interval(rest))
        return None
    if attribute == "inputs":
        _only(rest, 1, "operation inputs [KEY]")
        return _read(ctx.operation.inputs, rest)
    values = {"name": ctx.operation.name, "retry-number": ctx.operation.retry_number,
              "max-retries": ctx.operation.max_retries}
    if attribute not in values:
        raise CtxRequestError("usage: ctx operation name|retry-number|max-retries|inputs [KEY]|"
                              "retry [MESSAGE [INTERVAL]]")
    _only(rest, 0, f"operation {attribute}")
    return values[attribute]


def _message(args: list) -> str:
    return str(args[0]) if args and args[0] is not None else ""


def _interval(args: list) -> float | None:
    if len(args) < 2 or args[1] is None:
        return None
    try:
        interval = float(args[1])
    except (TypeError, ValueError):
        raise CtxRequestError(f"retry interval must be a number of seconds, not {args[1]!r}") from None
    if not 0 <= interval <= 86400:
        raise CtxRequestError(f"retry interval must be between 0 and 86400 seconds, not {args[1]!r}")
    return interval


async def _returns(ctx: OperationContext, args: list) -> Any:
    if len(args) != 1:
        raise CtxRequestError("usage: ctx returns VALUE")
    ctx.answer_once()
    ctx.returned = args[0]
    return None


async def _abort(ctx: OperationContext, args: list) -> Any:
    _only(args, 1, "abort-operation [MESSAGE]")
    ctx.answer_once()
    message = _message(args) or "operation aborted"
    ctx.outcome = AbortRequested(message)
    raise StopOperation(message)


async def _retry_operation(ctx: OperationContext, args: list) -> Any:
    _only(args, 2, "retry-operation [MESSAGE [INTERVAL]]")
    ctx.answer_once()
    ctx.request_retry(_message(args), _interval(args))
    raise StopOperation(str(ctx.outcome))


async def _download(ctx: OperationContext, args: list) -> Any:
    if not 1 <= len(args) <= 2 or not all(isinstance(a, str) for a in args):
        raise CtxRequestError("usage: ctx download-resource PATH [TARGET_PATH]")
    try:
        return download(ctx.resource_root, args[0], args[1] if len(args) == 2 else None)
    except (ValueError, OSError) as exc:
        raise CtxRequestError(str(exc)) from None


#: ``ctx get-resource`` answers with the content: bigger resources are downloaded instead
MAX_RESOURCE = 1024 * 1024


async def _get_resource(ctx: OperationContext, args: list) -> Any:
    if len(args) != 1 or not isinstance(args[0], str):
        raise CtxRequestError("usage: ctx get-resource PATH")
    try:
        path = resource_path(ctx.resource_root, args[0])
        if path.stat().st_size > MAX_RESOURCE:
            raise CtxRequestError(f"resource {args[0]} is larger than {MAX_RESOURCE} bytes: download it instead")
        return path.read_text(encoding="utf-8", errors="replace")
    except (ValueError, OSError) as exc:
        raise CtxRequestError(str(exc)) from None


async def _local_deployment_workdir(ctx: OperationContext, args: list) -> Any:
    _only(args, 0, "local-deployment-workdir")
    return str(await asyncio.to_thread(workdirs.deployment_workdir, ctx.tenant_name, ctx.deployment_id))


async def _plugin_task(ctx: OperationContext, args: list) -> Any:
    _only(args, 0, "plugin-task")
    if ctx.plugin is None:
        raise CtxRequestError("plugin-task: this operation is not a plugin's")
    return await asyncio.to_thread(plugin_task.task_context, ctx)


async def _update_instance(ctx: OperationContext, args: list) -> Any:
    if len(args) != 2:
        raise CtxRequestError("usage: update-instance INSTANCE_ID RUNTIME_PROPERTIES")
    try:
        await plugin_task.update_instance(ctx, args[0], args[1])
    except plugin_task.TaskRefused as exc:
        raise CtxRequestError(str(exc)) from None


async def _plain(ctx: OperationContext, args: list, value: Any) -> Any:
    _only(args, 0, "")
    return value


_TOP = {
    "deployment": _deployment,
    "blueprint": _blueprint,
    "logger": _logger,
    "operation": _operation,
    "returns": _returns,
    "abort-operation": _abort,
    "retry-operation": _retry_operation,
    "download-resource": _download,
    "get-resource": _get_resource,
    "local-deployment-workdir": _local_deployment_workdir,
    "plugin-task": _plugin_task,
    "update-instance": _update_instance,
    "plugin": lambda ctx, args: _plain(ctx, args, ctx.plugin or {}),
    "execution-id": lambda ctx, args: _plain(ctx, args, ctx.execution_id),
    "workflow-id": lambda ctx, args: _plain(ctx, args, ctx.workflow_id),
    "type": lambda ctx, args: _plain(ctx, args, ctx.type),
    "tenant-name": lambda ctx, args: _plain(ctx, args, ctx.tenant_name),
}
