"""``stoker stack ...``: the openstack-stack-style verbs over ``stoker.Engine``."""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path
import time

import click

from stoker.cli import detached
from stoker.cli.formatting import dump, format_option, show_list, show_problems, show_record
from stoker.cli.inputs import load_inputs, template_options
from stoker.errors import Conflict, NotFound, StokerError, ValidationFailed
from stoker.names import shown

STACK_COLUMNS = ["id", "stack_name", "stack_status", "creation_time", "updated_time"]
RESOURCE_COLUMNS = ["resource_name", "physical_resource_id", "resource_type", "resource_status", "updated_time"]
EVENT_COLUMNS = ["resource_name", "id", "resource_status", "resource_status_reason", "event_time"]
#: how often --wait asks a server for new events
FOLLOW_INTERVAL = 0.5


def engine_of(ctx: click.Context):
    return ctx.find_root().obj.engine()


def run_guarded(fn, fmt: str = "table"):
    """Turn Stoker's errors into a clear message and exit code 1, never a traceback."""
    try:
        return fn()
    except ValidationFailed as exc:
        show_problems(exc.problems, fmt if fmt in ("json", "yaml") else "table")
    except (NotFound, Conflict, StokerError) as exc:
        click.echo(f"ERROR: {shown(str(exc))}", err=True)
    sys.exit(1)


@click.group()
def stack() -> None:
    """Create, change and inspect stacks."""


def _stack_id(engine, name: str) -> str | None:
    try:
        return engine.get_record(name).id
    except NotFound:
        return None


def _watch(engine, name: str, action, fmt: str):
    """Run ``action``, printing the stack's events (not its nested stacks') as they are committed."""
    show = _EventPrinter()
    progress = getattr(engine, "progress", None)
    if progress is None or not engine.dispatch.runs_here:  # a server or workers run it: follow its events
        return _follow(engine, name, action, show)

    def pushed(root_stack_id: str, events: list[dict]) -> None:
        show([e for e in events if e["stack_id"] == root_stack_id])

    settings = click.get_current_context().find_root().obj
    with progress.subscribe(pushed), detached.handed_over_on_stop(engine, name, settings):
        return action()  # this process runs it: the engine hands each event over


def _follow(engine, name: str, action, show) -> object:
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
        time.sleep(FOLLOW_INTERVAL)
    if "error" in result:
        raise result["error"]
    return result.get("value")


def _in_background(ctx: click.Context, verb: str, name: str, inputs: tuple = (),
                   options: dict | None = None) -> dict:
    """Start ``<verb>_stack`` and return the stack once the action shows (``*_IN_PROGRESS``):
    in a detached engine process when local (this command then opens neither an engine
    nor the database: the engine process reports the stack), in the server when remote."""
    settings = ctx.find_root().obj
    if settings.remote is not None:
        return getattr(settings.remote, f"{verb}_stack")(name, *(load_inputs(*inputs) if inputs else ()),
                                                         wait=False, **(options or {}))
    return detached.start(settings.db_url, settings.plugin_dirs, verb, name, inputs, options)


class _EventPrinter:
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


def _finish(info: dict, fmt: str, wait: bool) -> None:
    """Show the result; with --wait a failed action exits 1, even when rolled back."""
    show_record(info, fmt)
    status = str(info.get("stack_status", ""))
    if wait and (status.endswith("FAILED") or status.startswith("ROLLBACK_")):
        sys.exit(1)


@stack.command("create")
@click.argument("name")
@template_options
@click.option("--timeout", type=int, help="Stack creation timeout in minutes.")
@click.option("--enable-rollback", is_flag=True, help="Delete what was created if the create fails.")
@click.option("--tags", default="", help="Comma-separated tags.")
@click.option("--wait", is_flag=True, help="Show progress; exit non-zero on failure.")
@click.option("--dry-run", is_flag=True, help="Only show what would be created.")
@format_option()
@click.pass_context
def create(ctx, name, template_file, environment_files, parameters, parameter_files, timeout,
           enable_rollback, tags, wait, dry_run, fmt):
    """Create stack NAME from a template."""
    def go():
        inputs = (template_file, environment_files, parameters, parameter_files)
        options = {"timeout_mins": timeout, "disable_rollback": not enable_rollback,
                   "tags": [t for t in tags.split(",") if t]}
        if not (wait or dry_run):
            show_record(_in_background(ctx, "create", name, inputs, options), fmt)
            return
        engine = engine_of(ctx)
        template, environment, params = load_inputs(*inputs)
        action = lambda: engine.create_stack(  # noqa: E731
            name, template, environment, params, dry_run=dry_run, **options)
        if dry_run:
            result = action()
            show_list(result["resources"], ["resource_name", "resource_type", "action"], fmt)
            return
        info = _watch(engine, name, action, fmt) if wait else action()
        _finish(info, fmt, wait)

    run_guarded(go, fmt)


@stack.command("update")
@click.argument("name")
@click.option("-t", "--template", "template_file", type=click.Path(dir_okay=False))
@click.option("-e", "--environment", "environment_files", multiple=True, type=click.Path(dir_okay=False))
@click.option("-P", "--parameter", "parameters", multiple=True, metavar="KEY=VALUE")
@click.option("--parameter-file", "parameter_files", multiple=True, metavar="KEY=PATH")
@click.option("--existing", is_flag=True, help="Keep the current template, parameters and environment.")
@click.option("--rollback", type=click.Choice(["enabled", "disabled", "keep"]),
              help="Roll back on failure (keep: as the stack has it).")
@click.option("--clear-parameter", "clear_parameters", multiple=True, metavar="NAME",
              help="With --existing: this parameter back to its default (repeat for several).")
@click.option("--tags", default=None, help="Comma-separated tags, replacing the stack's.")
@click.option("--timeout", type=int, help="Update timeout in minutes.")
@click.option("--wait", is_flag=True)
@click.option("--dry-run", is_flag=True, help="Show what would be added, updated, replaced, deleted.")
@click.option("--show-nested", is_flag=True, help="With --dry-run: nested stacks' changes too.")
@format_option()
@click.pass_context
def update(ctx, name, template_file, environment_files, parameters, parameter_files, existing,
           rollback, clear_parameters, tags, timeout, wait, dry_run, show_nested, fmt):
    """Update stack NAME to a new template and/or parameters."""
    def go():
        inputs = (template_file, environment_files, parameters, parameter_files)
        options = {"existing": existing, "timeout_mins": timeout,
                   "disable_rollback": None if rollback in (None, "keep") else rollback == "disabled"}
        if clear_parameters:
            options["clear_parameters"] = list(clear_parameters)
        if tags is not None:
            options["tags"] = [t for t in tags.split(",") if t]
        if not (wait or dry_run):
            show_record(_in_background(ctx, "update", name, inputs, options), fmt)
            return
        engine = engine_of(ctx)
        template, environment, params = load_inputs(*inputs)
        action = lambda: engine.update_stack(  # noqa: E731
            name, template, environment, params, dry_run=dry_run, **options,
            **({"show_nested": True} if show_nested and dry_run else {}))
        if dry_run:
            plan = action()
            rows = [{"change": change, **entry} for change, entries in plan.items() for entry in entries]
            if fmt in ("json", "yaml"):
                show_record(plan, fmt)
            else:
                show_list(rows, ["change", "resource_name", "resource_type", "reason"], fmt)
            return
        info = _watch(engine, name, action, fmt) if wait else action()
        _finish(info, fmt, wait)

    run_guarded(go, fmt)


@stack.command("delete")
@click.argument("names", nargs=-1, required=True)
@click.option("-y", "--yes", is_flag=True, help="Do not ask for confirmation.")
@click.option("--wait", is_flag=True)
@click.pass_context
def delete(ctx, names, yes, wait):
    """Delete one or more stacks."""
    if not yes and sys.stdin.isatty():
        click.confirm(f"Delete stack(s) {', '.join(names)}?", abort=True)
    failed = False
    for name in names:
        def go(name=name):
            if not wait:
                return _in_background(ctx, "delete", name)
            engine = engine_of(ctx)
            return _watch(engine, name, lambda: engine.delete_stack(name), "table")

        info = run_guarded(go)
        if info["stack_status"].endswith("FAILED"):
            failed = True
            click.echo(f"Stack {name} {info['stack_status']}: {info['stack_status_reason']}", err=True)
    if failed and wait:
        sys.exit(1)


def _simple_command(verb: str, method: str):
    @stack.command(verb)
    @click.argument("names", nargs=-1, required=True)
    @click.option("--wait", is_flag=True)
    @format_option()
    @click.pass_context
    def command(ctx, names, wait, fmt):
        engine = engine_of(ctx)
        for name in names:
            def go(name=name):
                action = lambda: getattr(engine, method)(name)  # noqa: E731
                info = _watch(engine, name, action, fmt) if wait else action()
                _finish(info, fmt, wait)

            run_guarded(go, fmt)

    command.__doc__ = f"{verb.capitalize()} stack NAME (several: each in turn)."
    return command


for _verb in ("suspend", "resume", "check"):
    _simple_command(_verb, f"{_verb}_stack")


@stack.command("cancel")
@click.argument("names", nargs=-1, required=True)
@click.option("--no-rollback", is_flag=True, help="Leave a cancelled update as it is (no rollback).")
@click.option("--wait", is_flag=True, help="Wait until each cancelled action has ended.")
@click.pass_context
def cancel(ctx, names, no_rollback, wait):
    """Cancel the create or update in progress on stack NAME (an update rolls back)."""
    engine = engine_of(ctx)
    for name in names:
        run_guarded(lambda name=name: engine.cancel_stack(name, rollback=not no_rollback))
        click.echo(f"Cancel requested for stack {name}")
    while wait and any(run_guarded(lambda name=name: engine.show_stack(name, resolve_outputs=False))
                       ["stack_status"].endswith("IN_PROGRESS") for name in names):
        time.sleep(FOLLOW_INTERVAL)


@stack.command("list")
@click.option("--deleted", "--show-deleted", "show_deleted", is_flag=True, help="Deleted stacks too.")
@click.option("--tags", default=None, help="Only stacks with all these comma-separated tags.")
@format_option()
@click.pass_context
def list_cmd(ctx, show_deleted, tags, fmt):
    """List stacks."""
    engine = engine_of(ctx)
    filters = {"show_deleted": show_deleted}
    if tags:
        filters["tags"] = [t for t in tags.split(",") if t]
    rows = run_guarded(lambda: engine.list_stacks(**filters), fmt)
    show_list(rows, STACK_COLUMNS, fmt)


@stack.command("show")
@click.argument("name")
@click.option("--no-resolve-outputs", is_flag=True)
@format_option()
@click.pass_context
def show(ctx, name, no_resolve_outputs, fmt):
    """Show stack NAME."""
    engine = engine_of(ctx)
    show_record(run_guarded(lambda: engine.show_stack(name, not no_resolve_outputs), fmt), fmt)


@stack.group("output")
def output() -> None:
    """Stack outputs."""


@output.command("list")
@click.argument("name")
@format_option()
@click.pass_context
def output_list(ctx, name, fmt):
    engine = engine_of(ctx)
    rows = run_guarded(lambda: engine.outputs(name), fmt)
    show_list(rows, ["output_key", "description"], fmt)


@output.command("show")
@click.argument("name")
@click.argument("output_name", required=False)
@click.option("--all", "show_all", is_flag=True, help="Show every output.")
@format_option()
@click.pass_context
def output_show(ctx, name, output_name, show_all, fmt):
    """Show one output of stack NAME, or --all of them."""
    engine = engine_of(ctx)
    outputs = run_guarded(lambda: engine.outputs(name), fmt)
    if show_all:
        if fmt in ("json", "yaml"):
            click.echo(dump(outputs, fmt))
        else:
            for entry in outputs:
                show_record(entry, fmt)
        return
    if not output_name:
        raise click.UsageError("give an OUTPUT name or --all")
    found = next((o for o in outputs if o["output_key"] == output_name), None)
    if found is None:
        click.echo(f"ERROR: Stack {name} has no output {output_name!r}", err=True)
        sys.exit(1)
    show_record(found, fmt)


@stack.group("resource")
def resource() -> None:
    """Resources of a stack."""


@resource.command("list")
@click.argument("name")
@click.option("-n", "--nested-depth", type=int, default=0, help="Also list nested stacks' resources, this deep.")
@format_option()
@click.pass_context
def resource_list(ctx, name, nested_depth, fmt):
    """The resources of stack NAME."""
    engine = engine_of(ctx)
    columns = RESOURCE_COLUMNS + (["stack_name"] if nested_depth else [])
    rows = run_guarded(lambda: engine.resources(name, nested_depth), fmt)
    if any(row.get("simulated") for row in rows):  # OpenStack types run offline: say so
        columns.append("simulated")
    show_list(rows, columns, fmt)


@resource.command("show")
@click.argument("name")
@click.argument("resource_name")
@format_option()
@click.pass_context
def resource_show(ctx, name, resource_name, fmt):
    engine = engine_of(ctx)
    show_record(run_guarded(lambda: engine.resource(name, resource_name), fmt), fmt)


@resource.command("mark-unhealthy")
@click.argument("name")
@click.argument("resource_name")
@click.argument("reason", required=False, default="")
@click.option("--reset", is_flag=True, help="Mark the resource healthy again.")
@click.pass_context
def mark_unhealthy(ctx, name, resource_name, reason, reset):
    """Mark a resource unhealthy: the next update replaces it."""
    engine = engine_of(ctx)
    run_guarded(lambda: engine.mark_unhealthy(name, resource_name, not reset, reason))


@resource.group("mark")
def mark() -> None:
    """``resource mark unhealthy``: openstack's spelling of mark-unhealthy."""


mark.add_command(mark_unhealthy, "unhealthy")


@stack.group("event")
def event() -> None:
    """Events of a stack."""


@event.command("show")
@click.argument("name")
@click.argument("resource_name")
@click.argument("event_id")
@format_option()
@click.pass_context
def event_show(ctx, name, resource_name, event_id, fmt):
    """One event of RESOURCE of stack NAME."""
    engine = engine_of(ctx)
    events = run_guarded(lambda: engine.events(name, resource_name), fmt)
    found = next((e for e in events if str(e.get("id")) == event_id), None)
    if found is None:
        click.echo(f"ERROR: No event {event_id} of resource {resource_name} in stack {name}", err=True)
        sys.exit(1)
    show_record(found, fmt)


@event.command("list")
@click.argument("name")
@click.option("--resource", "resource_name", help="Only this resource's events.")
@click.option("-n", "--nested-depth", type=int, default=0, help="Also nested stacks' events, this deep.")
@click.option("--sort", "sort_key", default=None, metavar="KEY[:asc|desc]",
              help="Order by this field (openstack's --sort), e.g. event_time:desc.")
@click.option("--limit", type=click.IntRange(min=0), default=None, help="At most this many events.")
@click.option("--follow", is_flag=True, help="Print the events, then each new one until the stack's action ends.")
@format_option()
@click.pass_context
def event_list(ctx, name, resource_name, nested_depth, sort_key, limit, follow, fmt):
    """The events of stack NAME, oldest first."""
    engine = engine_of(ctx)
    if follow:
        show = _EventPrinter()
        show(run_guarded(lambda: engine.events(name, resource_name, nested_depth), fmt))
        run_guarded(lambda: _follow(engine, name, lambda: engine.show_stack(name, resolve_outputs=False), show))
        return
    rows = run_guarded(lambda: engine.events(name, resource_name, nested_depth), fmt)
    if sort_key:
        key, _, direction = sort_key.partition(":")
        if direction not in ("", "asc", "desc"):
            raise click.BadParameter(f"the direction is asc or desc, not {direction!r}", param_hint="--sort")
        rows = sorted(rows, key=lambda row: str(row.get(key) or ""), reverse=direction == "desc")
    show_list(rows[:limit] if limit is not None else rows, EVENT_COLUMNS + (["stack_name"] if nested_depth else []), fmt)


@stack.group("template")
def template_group() -> None:
    """The template of a stack."""


@template_group.command("show")
@click.argument("name")
@format_option(default="yaml")
@click.pass_context
def template_show(ctx, name, fmt):
    engine = engine_of(ctx)
    show_record(run_guarded(lambda: engine.template(name), fmt), "json" if fmt == "json" else "yaml")


@stack.group("environment")
def environment_group() -> None:
    """The environment of a stack."""


@environment_group.command("show")
@click.argument("name")
@format_option(default="yaml")
@click.pass_context
def environment_show(ctx, name, fmt):
    engine = engine_of(ctx)
    show_record(run_guarded(lambda: engine.environment(name), fmt), "json" if fmt == "json" else "yaml")


@stack.group("failures")
def failures() -> None:
    """Why a stack failed."""


@failures.command("list")
@click.argument("name")
@format_option()
@click.pass_context
def failures_list(ctx, name, fmt):
    """The failed resources of stack NAME with their reasons (the root cause)."""
    engine = engine_of(ctx)
    rows = run_guarded(lambda: engine.failures(name), fmt)
    show_list(rows, ["resource_name", "resource_type", "resource_status", "resource_status_reason"], fmt)


@resource.command("signal")
@click.argument("name")
@click.argument("resource_name")
@click.option("-D", "--data", "--data-binary", "data", default=None,
              help="JSON data to send with the signal.")
@click.option("--data-file", type=click.Path(dir_okay=False), help="File holding the JSON data.")
@click.pass_context
def resource_signal(ctx, name, resource_name, data, data_file):
    """Signal RESOURCE of stack NAME (e.g. a wait condition handle)."""
    engine = engine_of(ctx)

    def go():
        text = Path(data_file).read_text(encoding="utf-8") if data_file else data
        try:
            details = json.loads(text) if text else None
        except ValueError as exc:
            raise click.BadParameter(f"not valid JSON: {exc}", param_hint="--data") from None
        engine.signal(name, resource_name, details)

    run_guarded(go)


@stack.group("hook")
def hook() -> None:
    """Breakpoints set by the environment's resource_registry hooks."""


@hook.command("clear")
@click.argument("name")
@click.argument("resource_names", nargs=-1, required=True)
@click.option("--pre-create", "hooks", flag_value="pre-create", multiple=True)
@click.option("--pre-update", "hooks", flag_value="pre-update", multiple=True)
@click.option("--pre-delete", "hooks", flag_value="pre-delete", multiple=True)
@click.pass_context
def hook_clear(ctx, name, resource_names, hooks):
    """Let paused RESOURCE_NAMES of stack NAME go on (the hook each is paused at, unless told)."""
    engine = engine_of(ctx)
    for resource_name in resource_names:
        for one in hooks or (None,):
            cleared = run_guarded(lambda r=resource_name, h=one: engine.clear_hook(name, r, h))
            click.echo(f"Cleared hook {cleared} on {resource_name}")
