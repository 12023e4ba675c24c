"""``stoker stack ...``: the openstack-stack-style verbs over ``stoker.Engine``."""

from __future__ import annotations

import json
import sys
from pathlib import Path
import time

import click

from stoker.cli.formatting import dump, format_option, show_list, show_record
from stoker.cli.group import pass_engine, pass_settings
from stoker.cli.template_options import load_inputs, template_options
from stoker.cli.stack_progress import FOLLOW_INTERVAL, EventPrinter, act, follow_events, in_background, watch
from stoker.engine.resource_filters import FILTERS
from stoker.errors import NotFound


def _key_values(ctx: click.Context, param: click.Parameter, given: tuple) -> dict:
    """``--filter key=value`` repeated: each key's values, a list when given more than once; a key
    Heat does not filter on is refused, naming the ones it does."""
    found: dict = {}
    for item in given:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"{item!r} is not KEY=VALUE", param=param)
        if key not in FILTERS:
            raise click.BadParameter(f"{key!r} is not a filter; the filters are: {', '.join(FILTERS)}", param=param)
        found.setdefault(key, []).append(value)
    return {key: values[0] if len(values) == 1 else values for key, values in found.items()}


STACK_COLUMNS = ["id", "stack_name", "stack_status", "creation_time", "updated_time"]
RESOURCE_COLUMNS = ["resource_name", "physical_resource_id", "resource_type", "resource_status", "updated_time"]
#: openstack stack create --poll's interval when none is given
POLL_DEFAULT = 5.0
EVENT_COLUMNS = ["resource_name", "id", "resource_status", "resource_status_reason", "event_time"]


@click.group()
def stack() -> None:
    """Create, change and inspect stacks."""


@stack.command("create")
@click.argument("name")
@template_options
@click.option("--timeout", type=int, help="Stack creation timeout in minutes.")
@click.option("--enable-rollback", is_flag=True, help="Delete what was created if the create fails.")
@click.option("--tags", default="", help="Comma-separated tags.")
@click.option("--wait", is_flag=True, help="Show progress; exit non-zero on failure.")
@click.option("--poll", type=click.FloatRange(min=0.1), is_flag=False, flag_value=POLL_DEFAULT, default=None,
              metavar="[SECONDS]", help=f"Wait as --wait does, reading new events every SECONDS "
                                        f"(default {POLL_DEFAULT:g}) when another process runs the create.")
@click.option("--dry-run", is_flag=True, help="Only show what would be created.")
@format_option()
@pass_settings
def create(settings, name, template_file, environment_files, parameters, parameter_files, timeout,
           enable_rollback, tags, wait, poll, dry_run, fmt):
    """Create stack NAME from a template."""
    options = {"timeout_mins": timeout, "disable_rollback": not enable_rollback,
               "tags": [t for t in tags.split(",") if t]}
    _run_action(settings, "create", name, (template_file, environment_files, parameters, parameter_files),
                options, wait or poll is not None, dry_run, fmt,
                lambda plan: show_list(plan["resources"], ["resource_name", "resource_type", "action"], fmt),
                poll or FOLLOW_INTERVAL)


def _run_action(settings, verb: str, name: str, inputs: tuple, options: dict, wait: bool, dry_run: bool, fmt: str,
                show_plan, interval: float = FOLLOW_INTERVAL) -> None:
    """``create|update NAME``: started in the background, or run here (``--wait``: its events shown as they
    land, read every ``interval`` seconds when another process runs it; ``--dry-run``: ``show_plan`` given
    what it would do)."""
    if not (wait or dry_run):
        show_record(in_background(settings, verb, name, inputs, options), fmt)
        return
    engine = settings.engine()
    template, environment, params = load_inputs(*inputs)
    if dry_run:
        show_plan(getattr(engine, f"{verb}_stack")(name, template, environment, params, dry_run=True, **options))
        return
    act(engine, True, fmt, verb, name, template, environment, params, interval=interval, **options)


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
@click.option("--converge", is_flag=True,
              help="Also put right the resources whose live state drifted from what the stack applied.")
@format_option()
@pass_settings
def update(settings, name, template_file, environment_files, parameters, parameter_files, existing,
           rollback, clear_parameters, tags, timeout, wait, dry_run, show_nested, converge, fmt):
    """Update stack NAME to a new template and/or parameters."""
    options = {"existing": existing, "timeout_mins": timeout,
               "disable_rollback": None if rollback in (None, "keep") else rollback == "disabled"}
    if converge and not dry_run:
        options["converge"] = True
    if clear_parameters:
        options["clear_parameters"] = list(clear_parameters)
    if tags is not None:
        options["tags"] = [t for t in tags.split(",") if t]
    if show_nested and dry_run:
        options["show_nested"] = True

    def show_plan(plan: dict) -> None:
        if fmt in ("json", "yaml"):
            show_record(plan, fmt)
        else:
            rows = [{"change": change, **entry} for change, entries in plan.items() for entry in entries]
            show_list(rows, ["change", "resource_name", "resource_type", "reason"], fmt)

    _run_action(settings, "update", name, (template_file, environment_files, parameters, parameter_files),
                options, wait, dry_run, fmt, show_plan)


@stack.command("delete")
@click.argument("names", nargs=-1, required=True)
@click.option("-y", "--yes", is_flag=True, help="Do not ask for confirmation.")
@click.option("--wait", is_flag=True)
@pass_settings
def delete(settings, names, yes, wait):
    """Delete one or more stacks."""
    if not yes and sys.stdin.isatty():
        click.confirm(f"Delete stack(s) {', '.join(names)}?", abort=True)
    failed = False
    for name in names:
        if wait:
            engine = settings.engine()
            info = watch(engine, "delete", name)
        else:
            info = in_background(settings, "delete", name)
        if info["stack_status"].endswith("FAILED"):
            failed = True
            click.echo(f"Stack {name} {info['stack_status']}: {info['stack_status_reason']}", err=True)
    if failed and wait:
        sys.exit(1)


def _simple_command(verb: str):
    @stack.command(verb)
    @click.argument("names", nargs=-1, required=True)
    @click.option("--wait", is_flag=True)
    @format_option()
    @pass_engine
    def command(engine, names, wait, fmt):
        for name in names:
            act(engine, wait, fmt, verb, name)

    command.__doc__ = f"{verb.capitalize()} stack NAME (several: each in turn)."
    return command


for _verb in ("suspend", "resume", "check"):
    _simple_command(_verb)


@stack.command("cancel")
@click.argument("names", nargs=-1, required=True)
@click.option("--no-rollback", is_flag=True, help="Leave a cancelled update as it is (no rollback).")
@click.option("--wait", is_flag=True, help="Wait until each cancelled action has ended.")
@pass_engine
def cancel(engine, names, no_rollback, wait):
    """Cancel the create or update in progress on stack NAME (an update rolls back)."""
    for name in names:
        engine.cancel_stack(name, rollback=not no_rollback)
        click.echo(f"Cancel requested for stack {name}")
    while wait and any(engine.show_stack(name, resolve_outputs=False)["stack_status"].endswith("IN_PROGRESS")
                       for name in names):
        time.sleep(FOLLOW_INTERVAL)


@stack.command("list")
@click.option("--deleted", "--show-deleted", "show_deleted", is_flag=True, help="Deleted stacks too.")
@click.option("--tags", default=None, help="Only stacks with all these comma-separated tags.")
@format_option()
@pass_engine
def list_cmd(engine, show_deleted, tags, fmt):
    """List stacks."""
    filters = {"show_deleted": show_deleted}
    if tags:
        filters["tags"] = [t for t in tags.split(",") if t]
    rows = engine.list_stacks(**filters)
    show_list(rows, STACK_COLUMNS, fmt)


@stack.command("show")
@click.argument("name")
@click.option("--no-resolve-outputs", is_flag=True)
@format_option()
@pass_engine
def show(engine, name, no_resolve_outputs, fmt):
    """Show stack NAME."""
    show_record(engine.show_stack(name, not no_resolve_outputs), fmt)


@stack.group("output")
def output() -> None:
    """Stack outputs."""


@output.command("list")
@click.argument("name")
@format_option()
@pass_engine
def output_list(engine, name, fmt):
    rows = engine.outputs(name)
    show_list(rows, ["output_key", "description"], fmt)


@output.command("show")
@click.argument("name")
@click.argument("output_name", required=False)
@click.option("--all", "show_all", is_flag=True, help="Show every output.")
@format_option()
@pass_engine
def output_show(engine, name, output_name, show_all, fmt):
    """Show one output of stack NAME, or --all of them."""
    outputs = engine.outputs(name)
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
        raise NotFound(f"Stack {name} has no output {output_name!r}")
    show_record(found, fmt)


@stack.group("resource")
def resource() -> None:
    """Resources of a stack."""


@resource.command("list")
@click.argument("name")
@click.option("-n", "--nested-depth", type=int, default=0, help="Also list nested stacks' resources, this deep.")
@click.option("--long", "long_listing", is_flag=True, help="More columns: the stack each resource is in.")
@click.option("--filter", "filters", multiple=True, metavar="KEY=VALUE", callback=_key_values,
              help=f"Only resources with this {'|'.join(FILTERS)} (repeat for several; one key given "
                   "several values keeps any of them).")
@format_option()
@pass_engine
def resource_list(engine, name, nested_depth, long_listing, filters, fmt):
    """The resources of stack NAME."""
    columns = RESOURCE_COLUMNS + (["stack_name"] if nested_depth or long_listing else [])
    rows = engine.resources(name, nested_depth, filters=filters)
    if any(row.get("simulated") for row in rows):  # OpenStack types run offline: say so
        columns.append("simulated")
    show_list(rows, columns, fmt)


@resource.command("show")
@click.argument("name")
@click.argument("resource_name")
@click.option("--with-attr", "with_attr", multiple=True, metavar="ATTRIBUTE",
              help="Also resolve this attribute into the attributes shown (repeat for several).")
@format_option()
@pass_engine
def resource_show(engine, name, resource_name, with_attr, fmt):
    """RESOURCE of stack NAME, with its attributes."""
    show_record(engine.resource(name, resource_name, with_attr), fmt)


@resource.command("mark-unhealthy")
@click.argument("name")
@click.argument("resource_name")
@click.argument("reason", required=False, default="")
@click.option("--reset", is_flag=True, help="Mark the resource healthy again.")
@pass_engine
def mark_unhealthy(engine, name, resource_name, reason, reset):
    """Mark a resource unhealthy: the next update replaces it."""
    engine.mark_unhealthy(name, resource_name, not reset, reason)


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
@pass_engine
def event_show(engine, name, resource_name, event_id, fmt):
    """One event of RESOURCE of stack NAME."""
    events = engine.events(name, resource_name)
    found = next((e for e in events if str(e.get("id")) == event_id), None)
    if found is None:
        raise NotFound(f"No event {event_id} of resource {resource_name} in stack {name}")
    show_record(found, fmt)


@event.command("list")
@click.argument("name")
@click.option("--resource", "resource_name", help="Only this resource's events.")
@click.option("-n", "--nested-depth", type=int, default=0, help="Also nested stacks' events, this deep.")
@click.option("--sort", "sort_key", default=None, metavar="KEY[:asc|desc]",
              help="Order by this field (openstack's --sort), e.g. event_time:desc.")
@click.option("--limit", type=click.IntRange(min=0), default=None, help="At most this many events.")
@click.option("--follow", "follow_on", is_flag=True,
              help="Print the events, then each new one until the stack's action ends.")
@format_option()
@pass_engine
def event_list(engine, name, resource_name, nested_depth, sort_key, limit, follow_on, fmt):
    """The events of stack NAME, oldest first."""
    if follow_on:
        show = EventPrinter()
        show(engine.events(name, resource_name, nested_depth))
        follow_events(engine, name, show)
        return
    rows = engine.events(name, resource_name, nested_depth)
    if sort_key:
        key, _, direction = sort_key.partition(":")
        if direction not in ("", "asc", "desc"):
            raise click.BadParameter(f"the direction is asc or desc, not {direction!r}", param_hint="--sort")
        rows = sorted(rows, key=lambda row: str(row.get(key) or ""), reverse=direction == "desc")
    show_list(rows[:limit] if limit is not None else rows, EVENT_COLUMNS + (["stack_name"] if nested_depth else []), fmt)


def _given_group(part: str) -> None:
    """``stack template|environment show NAME``: that part of what the stack was given, as YAML or JSON."""

    group = stack.group(part, help=f"The {part} of a stack.")(lambda: None)

    @group.command("show")
    @click.argument("name")
    @format_option(default="yaml")
    @pass_engine
    def show(engine, name, fmt):
        show_record(getattr(engine, part)(name), "json" if fmt == "json" else "yaml")


_given_group("template")
_given_group("environment")


@stack.group("failures")
def failures() -> None:
    """Why a stack failed."""


@failures.command("list")
@click.argument("name")
@format_option()
@pass_engine
def failures_list(engine, name, fmt):
    """The failed resources of stack NAME with their reasons (the root cause)."""
    rows = engine.failures(name)
    show_list(rows, ["resource_name", "resource_type", "resource_status", "resource_status_reason"], fmt)


@resource.command("signal")
@click.argument("name")
@click.argument("resource_name")
@click.option("-D", "--data", "--data-binary", "data", default=None,
              help="JSON data to send with the signal.")
@click.option("--data-file", type=click.Path(dir_okay=False), help="File holding the JSON data.")
@pass_engine
def resource_signal(engine, name, resource_name, data, data_file):
    """Signal RESOURCE of stack NAME (e.g. a wait condition handle)."""
    text = Path(data_file).read_text(encoding="utf-8") if data_file else data
    try:
        details = json.loads(text) if text else None
    except ValueError as exc:
        raise click.BadParameter(f"not valid JSON: {exc}", param_hint="--data") from None
    engine.signal(name, resource_name, details)


@stack.group("hook")
def hook() -> None:
    """Breakpoints set by the environment's resource_registry hooks."""


@hook.command("clear")
@click.argument("name")
@click.argument("resource_names", nargs=-1, required=True)
@click.option("--pre-create", "hooks", flag_value="pre-create", multiple=True)
@click.option("--pre-update", "hooks", flag_value="pre-update", multiple=True)
@click.option("--pre-delete", "hooks", flag_value="pre-delete", multiple=True)
@pass_engine
def hook_clear(engine, name, resource_names, hooks):
    """Let paused RESOURCE_NAMES of stack NAME go on (the hook each is paused at, unless told)."""
    for resource_name in resource_names:
        for one in hooks or (None,):
            cleared = engine.clear_hook(name, resource_name, one)
            click.echo(f"Cleared hook {cleared} on {resource_name}")
