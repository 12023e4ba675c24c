"""``stoker execution|event ...`` and ``stoker install|uninstall DEP``, as ``cfy`` users know them.

An execution starts through its service's ``begin`` (here: in a thread of this
process; with a broker, on the workers; with ``--url``, in the server) and is
followed to its end through the ``Started`` handle: this thread prints its
events (with ``--wait``) and, on Ctrl-C, asks it to stop (the second Ctrl-C
kills its scripts).  A failed execution exits 1.
"""

from __future__ import annotations

import contextlib
import os
import sys

import click

from stoker.cli.deployment_cmds import parse_inputs
from stoker.cli.formatting import format_option, show_list, show_record
from stoker.cli.group import pass_engine
from stoker.errors import StokerError

EXECUTION_COLUMNS = ["id", "workflow_id", "deployment_id", "status", "created_at", "error"]
#: events a follower reads and prints at once (bounded memory, however long the execution)
FOLLOW_PAGE = 5000
#: events a follower may be behind before it skips to the newest page (following costs what the execution costs)
FOLLOW_BACKLOG = 20_000
EVENT_COLUMNS = ["timestamp", "type", "event_type", "level", "node_instance_id", "operation", "message"]
#: how often a follower looks for new events and the execution's end
FOLLOW_INTERVAL = 0.2
#: how often ``events list --tail`` looks for new events
TAIL_POLL = 0.5
STYLES = {"task_failed": "red", "workflow_failed": "red", "task_succeeded": "green",
          "workflow_succeeded": "green", "task_rescheduled": "yellow", "workflow_cancelled": "yellow"}


def run_workflow(engine, workflow: str, deployment_id: str, parameters: dict, wait: bool, fmt: str,
                 force: bool = False, allow_custom: bool = False, queue: bool = False) -> None:
    _to_the_end(engine.executions, deployment_id, wait, fmt, "start", workflow, deployment_id, parameters, force,
                allow_custom, queue)


def _to_the_end(service, deployment_id: str, wait: bool, fmt: str, verb: str, *args) -> None:
    """``start`` or ``resume`` an execution and follow it to its end, show how it ended; exit 1
    unless it succeeded (or was queued behind the deployment's running execution)."""
    record = _follow(service, service.begin(verb, *args), deployment_id, wait)
    show_record(record, fmt)
    if record["status"] not in ("terminated", "queued"):
        sys.exit(1)


def _follow(service, started, deployment_id: str, wait: bool) -> dict:
    """Wait for the execution's end, printing its events as they land (with ``wait``); Ctrl-C asks
    it to stop, a second Ctrl-C kills its scripts."""
    console = _terminal_console()
    show_new = _new_lines(service, started.id, deployment_id, console) if wait else (lambda: None)
    interrupts = 0
    while True:
        try:
            return started.follow(show_new, FOLLOW_INTERVAL)
        except KeyboardInterrupt:
            interrupts += 1
            _say(console, "Cancelling the execution" + (" (killing its scripts)" if interrupts > 1 else
                                                        "; Ctrl-C again to kill its running scripts"))
            with contextlib.suppress(StokerError):  # it ended meanwhile: nothing to cancel
                service.cancel(started.id, force=interrupts > 1)


def _terminal_console():
    """rich's console on stderr when stderr is a terminal as rich tells (``TTY_COMPATIBLE``,
    ``FORCE_COLOR``, then ``isatty``); None when rich would print plain text anyway: the lines are
    then written as they are, and rich is not imported (~15 ms of a command's start)."""
    tty_compatible = os.environ.get("TTY_COMPATIBLE", "")
    if tty_compatible == "0" or (tty_compatible != "1" and os.environ.get("FORCE_COLOR") is None
                                 and not sys.stderr.isatty()):
        return None
    from rich.console import Console

    console = Console(stderr=True, soft_wrap=True, width=None if sys.stderr.isatty() else 250)
    return console if console.is_terminal else None


def _say(console, text: str) -> None:
    """One message to stderr: through rich on a terminal, as it is elsewhere."""
    if console is not None:
        console.print(text)
    else:
        sys.stderr.write(text + "\n")
        sys.stderr.flush()


def _new_lines(service, execution_id: str, deployment_id: str, console):
    """What prints the execution's events and logs not printed yet, a page at a time (far behind:
    it skips to the last page, saying so)."""
    printed = 0

    def show_new() -> None:
        nonlocal printed
        behind = service.count_events(execution_id, include_logs=True) - printed
        if behind > FOLLOW_BACKLOG:
            _skip_note(console, behind - FOLLOW_PAGE, execution_id)
            printed += behind - FOLLOW_PAGE
        while True:
            events = service.event_lines(execution_id, since=printed, limit=FOLLOW_PAGE)
            _print_events(console, events, deployment_id)
            printed += len(events)
            if len(events) < FOLLOW_PAGE:
                return

    return show_new


def _print_events(console, events: list[dict], deployment_id: str) -> None:
    """Events as lines, written at once: coloured on a terminal, plain text (cheap) elsewhere."""
    if not events:
        return
    if console is None:
        sys.stderr.write("".join(_line(event, deployment_id) + "\n" for event in events))
        sys.stderr.flush()
        return
    from rich.markup import escape

    lines = []
    for event in events:
        style = STYLES.get(event["event_type"] or "", "red" if event["level"] == "error" else "")
        text = escape(_line(event, deployment_id))
        lines.append(f"[{style}]{text}[/]" if style else text)
    console.print("\n".join(lines))


def _skip_note(console, skipped: int, execution_id: str) -> None:
    note = (f"... {skipped} events not shown, to keep up with the execution "
            f"(stoker event list -e {execution_id} --include-logs lists them)")
    if console is not None:
        console.print(note, style="yellow", markup=False)
    else:
        sys.stderr.write(note + "\n")


def _running(execution: dict) -> bool:
    from stoker.store.models import ACTIVE_EXECUTION

    return execution["status"] in ACTIVE_EXECUTION


def _line(event: dict, deployment_id: str) -> str:
    where = event["node_instance_id"] or ""
    if event["operation"] and where:
        where += "." + event["operation"].rsplit(".", 1)[-1]
    label = event["event_type"] if event["type"] == "cloudify_event" else (event["level"] or "info").upper()
    return f"{event['timestamp']}  {label:<18} <{deployment_id}> [{where}] {event['message']}"


@click.group()
def execution() -> None:
    """Run workflows on deployments (install, uninstall, scale, heal, execute_operation, ...)."""


@execution.command("start")
@click.argument("workflow")
@click.option("-d", "--deployment-id", "deployment_id", required=True)
@click.option("-p", "--parameters", "parameters", multiple=True, metavar="FILE|KEY=VALUE",
              help="Workflow parameters: a YAML/JSON file or key=value; repeat for several.")
@click.option("--wait", is_flag=True, help="Print events and logs as they happen.")
@click.option("--force", is_flag=True, help="Run even while another execution of the deployment runs.")
@click.option("--queue", is_flag=True, help="While the deployment runs another execution, queue this one: it starts when that one ends.")
@click.option("--allow-custom-parameters", is_flag=True, help="Pass parameters the workflow does not declare.")
@format_option()
@pass_engine
def start(engine, workflow, deployment_id, parameters, wait, force, queue, allow_custom_parameters, fmt):
    """Run WORKFLOW on a deployment, to its end."""
    run_workflow(engine, workflow, deployment_id, parse_inputs(parameters, "-p"), wait, fmt,
                 force, allow_custom_parameters, queue)


@execution.command("list")
@click.option("-d", "--deployment-id", "deployment_id", default=None)
@format_option()
@pass_engine
def list_(engine, deployment_id, fmt):
    show_list(engine.executions.list(deployment_id), EXECUTION_COLUMNS, fmt)


@execution.command("get")
@click.argument("execution_id")
@format_option()
@pass_engine
def get(engine, execution_id, fmt):
    show_record(engine.executions.get(execution_id), fmt)


@execution.command("cancel")
@click.argument("execution_id")
@click.option("--force", "-k", "--kill", "force", is_flag=True,
              help="Kill the running scripts instead of letting them end.")
@format_option()
@pass_engine
def cancel(engine, execution_id, force, fmt):
    """Stop scheduling new operations (running scripts end, or are killed with --force)."""
    show_record(engine.executions.cancel(execution_id, force), fmt)


@execution.command("resume")
@click.argument("execution_id")
@click.option("--wait", is_flag=True, help="Print events and logs as they happen.")
@format_option()
@pass_engine
def resume(engine, execution_id, wait, fmt):
    """Continue an interrupted, failed or cancelled execution; finished operations do not run again."""
    service = engine.executions
    _to_the_end(service, service.get(execution_id)["deployment_id"], wait, fmt, "resume", execution_id)


@click.group()
def event() -> None:
    """Events and logs of executions."""


@event.command("list")
@click.argument("execution_id_arg", metavar="[EXECUTION_ID]", required=False)
@click.option("-e", "--execution-id", "execution_id", default=None)
@click.option("--include-logs/--hide-logs", "include_logs", default=None,
              help="Also the operations' logs (script output, ctx logger); with --tail, on by default, as cfy.")
@click.option("--tail", is_flag=True, help="Go on printing new events until the execution ends.")
@format_option()
@pass_engine
def event_list(engine, execution_id_arg, execution_id, include_logs, tail, fmt):
    """Events of EXECUTION_ID (or -e), as ``cfy events list``."""
    execution_id = execution_id or execution_id_arg
    if not execution_id:
        raise click.UsageError("name the execution: stoker events list EXECUTION_ID")
    include_logs = tail if include_logs is None else include_logs

    service = engine.executions
    if fmt != "table":
        rows = service.events(execution_id, include_logs)
        show_list(rows, list(rows[0]) if rows else EVENT_COLUMNS, fmt)
        return
    deployment_id = service.get(execution_id)["deployment_id"]
    printed = 0

    def show_new() -> None:
        nonlocal printed
        rows = service.events(execution_id, include_logs, since=printed)
        click.echo("".join(_line(row, deployment_id) + "\n" for row in rows), nl=False)
        printed += len(rows)

    if not tail:
        show_new()
        return
    from stoker.started import Started

    Started(service.get, _running, execution_id).follow(show_new, TAIL_POLL)  # once more after its end


def _shortcut(workflow: str):
    @click.command(workflow, help=f"Run the {workflow} workflow on DEPLOYMENT_ID (stoker execution start "
                                  f"{workflow} -d DEPLOYMENT_ID).")
    @click.argument("deployment_id")
    @click.option("-p", "--parameters", "parameters", multiple=True, metavar="FILE|KEY=VALUE")
    @click.option("--wait/--no-wait", default=True, help="Print events and logs as they happen (default).")
    @format_option()
    @pass_engine
    def command(engine, deployment_id, parameters, wait, fmt):
        run_workflow(engine, workflow, deployment_id, parse_inputs(parameters, "-p"), wait, fmt)

    return command


uninstall = _shortcut("uninstall")


@click.command("install")
@click.argument("target", metavar="DEPLOYMENT_ID | BLUEPRINT_PATH")
@click.option("-b", "--blueprint-id", "blueprint_id", default=None,
              help="With a BLUEPRINT_PATH: upload it as this id (default: its folder's name, as cfy).")
@click.option("-d", "--deployment-id", "deployment_id", default=None,
              help="With a BLUEPRINT_PATH: the deployment to create (default: the blueprint id).")
@click.option("-i", "--inputs", "inputs", multiple=True, metavar="FILE|KEY=VALUE",
              help="With a BLUEPRINT_PATH: the deployment's inputs.")
@click.option("-p", "--parameters", "parameters", multiple=True, metavar="FILE|KEY=VALUE")
@click.option("--wait/--no-wait", default=True, help="Print events and logs as they happen (default).")
@format_option()
@pass_engine
def install(engine, target, blueprint_id, deployment_id, inputs, parameters, wait, fmt):
    """Run the install workflow on DEPLOYMENT_ID; or, as ``cfy install``, upload BLUEPRINT_PATH, create
    its deployment and install it."""
    from pathlib import Path

    if blueprint_id or deployment_id or inputs or Path(target).is_file():
        path = Path(target)
        blueprint_id = blueprint_id or path.resolve().parent.name
        deployment_id = deployment_id or blueprint_id

        service = engine.blueprints
        service.upload(path, blueprint_id)
        service.deployments.create(deployment_id, blueprint_id, parse_inputs(inputs))
        target = deployment_id
    run_workflow(engine, "install", target, parse_inputs(parameters), wait, fmt)
