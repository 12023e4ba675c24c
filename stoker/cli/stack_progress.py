"""How a stack action is shown: run here or in the background, its events as they land, its result
and exit code (``stack create|update|delete|adopt ...`` share them)."""

from __future__ import annotations

import sys
import threading
import time

from stoker.cli import detached
from stoker.cli.formatting import show_record
from stoker.cli.group import current_settings
from stoker.cli.template_options import load_inputs
from stoker.errors import NotFound
from stoker.names import shown

#: how often --wait asks a server for new events
FOLLOW_INTERVAL = 0.5


def _stack_id(engine, name: str) -> str | None:
    try:
        return engine.get_record(name).id
    except NotFound:
        return None


def watch(engine, name: str, action, fmt: str, interval: float = FOLLOW_INTERVAL):
    """Run ``action``, printing the stack's events (not its nested stacks') as they are committed
    (read every ``interval`` seconds when another process runs it)."""
    show = EventPrinter()
    progress = getattr(engine, "progress", None)
    if progress is None or not engine.dispatch.runs_here:  # a server or workers run it: follow its events
        return follow(engine, name, action, show, interval)

    def pushed(root_stack_id: str, events: list[dict]) -> None:
        show([e for e in events if e["stack_id"] == root_stack_id])

    with progress.subscribe(pushed), detached.handed_over_on_stop(engine, name, current_settings()):
        return action()  # this process runs it: the engine hands each event over


def follow(engine, name: str, action, show, interval: float = FOLLOW_INTERVAL) -> object:
    """Run ``action`` in a thread, reading only the events newer than the last one shown."""
    result: dict = {}

    def target():
        try:
            result["value"] = action()
        except BaseException as exc:  # re-raised in the caller's thread
            result["error"] = exc

    stack_id = _stack_id(engine, name)
    seen = engine.events(stack_id, sort_dir="desc", limit=1) if stack_id else []
    last = seen[0]["id"] if seen else None
    worker = threading.Thread(target=target, daemon=True)
    worker.start()
    while True:
        alive = worker.is_alive()
        stack_id = stack_id or _stack_id(engine, name)
        new = engine.events(stack_id, marker=last) if stack_id else []
        if new:
            show(new)
            last = new[-1]["id"]
        if not alive:
            if "error" in result or not _running(result.get("value")):
                break
            result["value"] = _refreshed(engine, result["value"])  # workers run it (a broker is set)
        time.sleep(interval)
    if "error" in result:
        raise result["error"]
    return result.get("value")


def in_background(settings, verb: str, name: str, inputs: tuple = (),
                  options: dict | None = None) -> dict:
    """Start ``<verb>_stack`` and return the stack once the action shows (``*_IN_PROGRESS``):
    in a detached engine process when local (this command then opens neither an engine
    nor the database: the engine process reports the stack), in the server when remote."""
    if settings.remote is not None:
        return getattr(settings.remote, f"{verb}_stack")(name, *(load_inputs(*inputs) if inputs else ()),
                                                         wait=False, **(options or {}))
    return detached.start(settings.db_url, settings.plugin_dirs, verb, name, inputs, options)


class EventPrinter:
    """One line per event on stderr, coloured on a terminal; a batch costs one write."""

    COLOURS = {"FAILED": "\x1b[31m", "COMPLETE": "\x1b[32m"}

    def __init__(self) -> None:
        self.colour = sys.stderr.isatty()

    def __call__(self, events: list[dict]) -> None:
        lines = []
        for event in events:
            status = event["resource_status"]
            if self.colour:
                start = self.COLOURS.get(status.rsplit("_", 1)[-1], "\x1b[33m")
                status = f"{start}{status}\x1b[0m"
            reason = " ".join(str(event["resource_status_reason"] or "").split())
            lines.append(f"{event['event_time']} [{shown(str(event['resource_name']))}]: {status} {shown(reason)}\n")
        if lines:
            sys.stderr.write("".join(lines))
            sys.stderr.flush()


def _running(info) -> bool:
    return isinstance(info, dict) and str(info.get("stack_status", "")).endswith("IN_PROGRESS")


def _refreshed(engine, info: dict) -> dict:
    """The stack as stored now (with outputs if ``info`` had them and the stack is still there)."""
    from stoker.engine.summaries import stack_summary

    record = engine.get_record(info["id"], show_deleted=True)
    fresh = stack_summary(record)
    if "outputs" in info:
        done = record.deleted_at is None and not _running(fresh)
        fresh["outputs"] = engine.outputs(record.id) if done else info["outputs"]
    return fresh


def finish(info: dict, fmt: str, wait: bool) -> None:
    """Show the result; with --wait a failed action exits 1, even when rolled back."""
    show_record(info, fmt)
    status = str(info.get("stack_status", ""))
    if wait and (status.endswith("FAILED") or status.startswith("ROLLBACK_")):
        sys.exit(1)
