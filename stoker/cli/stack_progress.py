"""How a stack action is shown: run here or in the background, its events as they land, its result
and exit code (``stack create|update|delete|adopt ...`` share them)."""

from __future__ import annotations

import sys

from stoker.cli import detached
from stoker.cli.formatting import show_record
from stoker.cli.group import current_settings
from stoker.cli.template_options import load_inputs
from stoker.errors import NotFound
from stoker.names import shown

#: how often --wait asks a server for new events
FOLLOW_INTERVAL = 0.5


def act(engine, wait: bool, fmt: str, verb: str, name: str, *args, interval: float = FOLLOW_INTERVAL, **kwargs):
    """``<verb>_stack(name, ...)`` to its end (``--wait``: its events shown meanwhile, ``watch``), shown."""
    finish(watch(engine, verb, name, *args, interval=interval, **kwargs) if wait
           else getattr(engine, f"{verb}_stack")(name, *args, **kwargs), fmt, wait)


def watch(engine, verb: str, name: str, *args, interval: float = FOLLOW_INTERVAL, **kwargs) -> dict:
    """``<verb>_stack(name, ...)`` to its end, printing the stack's events (not its nested stacks') as
    they are committed: handed over by the engine when this process runs it, else (a server or
    workers run it) read every ``interval`` seconds while its ``Started`` handle says it runs."""
    show = EventPrinter()
    progress = getattr(engine, "progress", None)
    if progress is not None and engine.dispatch.runs_here:
        def pushed(root_stack_id: str, events: list[dict]) -> None:
            show([e for e in events if e["stack_id"] == root_stack_id])

        with progress.subscribe(pushed), detached.handed_over_on_stop(engine, name, current_settings()):
            return getattr(engine, f"{verb}_stack")(name, *args, **kwargs)
    last = _last_event(engine, name)
    started = engine.begin(verb, name, *args, **kwargs)
    return started.follow(_new_events(engine, started, last, show), interval)


def follow_events(engine, name: str, show, interval: float = FOLLOW_INTERVAL) -> None:
    """Print the stack's new events until its action (run by anyone) has ended."""
    from stoker.started import Started, stack_running

    stack_id = engine.get_record(name).id
    started = Started(lambda _id: engine.show_stack(stack_id, resolve_outputs=False), stack_running, stack_id)
    started.follow(_new_events(engine, started, _last_event(engine, stack_id), show), interval)


def _last_event(engine, name: str) -> str | None:
    """The id of the stack's newest event (None: no stack, or no event yet)."""
    try:
        seen = engine.events(engine.get_record(name).id, sort_dir="desc", limit=1)
    except NotFound:
        return None
    return seen[0]["id"] if seen else None


def _new_events(engine, started, last: str | None, show):
    """What shows the stack's events newer than the last one shown, each once."""
    def show_new() -> None:
        nonlocal last
        new = engine.events(started.id, marker=last)
        if new:
            show(new)
            last = new[-1]["id"]

    return show_new


def in_background(settings, verb: str, name: str, inputs: tuple = (),
                  options: dict | None = None) -> dict:
    """Start ``<verb>_stack`` and return the stack once the action shows (``*_IN_PROGRESS``):
    in a detached engine process when local (this command then opens neither an engine
    nor the database: the engine process reports the stack), in the server when remote."""
    if settings.remote is not None:
        loaded = load_inputs(*inputs) if inputs else ()
        return settings.remote.begin(verb, name, *loaded, **(options or {})).state()
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


def finish(info: dict, fmt: str, wait: bool) -> None:
    """Show the result; with --wait a failed action exits 1, even when rolled back."""
    show_record(info, fmt)
    status = str(info.get("stack_status", ""))
    if wait and (status.endswith("FAILED") or status.startswith("ROLLBACK_")):
        sys.exit(1)
