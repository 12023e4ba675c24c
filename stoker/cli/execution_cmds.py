"""``stoker execution|event ...`` and ``stoker install|uninstall DEP``, as ``cfy`` users know them.

An execution starts through its service's ``begin`` (here: in a thread of this
process; with a broker, on the workers; with ``--url``, in the server) and is
followed to its end through the ``Started`` handle: this thread prints its
events (with ``--wait``) and, on Ctrl-C, asks it to stop (the second Ctrl-C
kills its scripts).  A failed execution exits 1.
"""

from __future__ import annotations

import sys

import click

from stoker.cli.deployment_cmds import parse_inputs
from stoker.cli.following import follow, line, running
from stoker.cli.formatting import format_option, show_list, show_record
from stoker.cli.group import pass_engine

EXECUTION_COLUMNS = ["id", "workflow_id", "deployment_id", "status", "created_at", "error"]
EVENT_COLUMNS = ["timestamp", "type", "event_type", "level", "node_instance_id", "operation", "message"]
#: how often ``events list --tail`` looks for new events
TAIL_POLL = 0.5


def run_workflow(engine, workflow: str, deployment_id: str, parameters: dict, wait: bool, fmt: str,
                 force: bool = False, allow_custom: bool = False, queue: bool = False, dry_run: bool = False) -> None:
    _to_the_end(engine.executions, deployment_id, wait, fmt, "start", workflow, deployment_id, parameters, force,
                allow_custom, queue, dry_run)


def _to_the_end(service, deployment_id: str, wait: bool, fmt: str, verb: str, *args) -> None:
    """``start`` or ``resume`` an execution and follow it to its end, show how it ended; exit 1
    unless it succeeded (or was queued behind the deployment's running execution)."""
    record = follow(service, service.begin(verb, *args), deployment_id, wait)
    show_record(record, fmt)
    if record["status"] not in ("terminated", "queued"):
        sys.exit(1)


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
@click.option("--dry-run", is_flag=True, help="Walk the workflow and report each operation it would run, running "
                                              "none and changing no instance's state.")
@click.option("--schedule", metavar="TIME", default=None,
              help="Run it once at TIME (e.g. 201801182230-0500 or 2030-01-18T22:30:00+02:00; UTC without an "
                   "offset), as a schedule a `stoker api` server over this database starts when due.")
@format_option()
@pass_engine
def start(engine, workflow, deployment_id, parameters, wait, force, queue, allow_custom_parameters, dry_run, schedule,
          fmt):
    """Run WORKFLOW on a deployment, to its end (or, with --schedule, once at a later time)."""
    if queue and dry_run:  # as cfy's --queue
        raise click.UsageError("--queue is mutually exclusive with --dry-run")
    if schedule is not None:
        if queue or wait:  # as cfy's --schedule
            raise click.UsageError("--schedule is mutually exclusive with --queue and --wait")
        record = engine.executions.schedule(workflow, deployment_id, schedule, parse_inputs(parameters, "-p"),
                                            force, allow_custom_parameters, dry_run)
        show_record(record, fmt)
        if fmt == "table":
            click.echo(f"Execution is scheduled for {record['scheduled_for']} (UTC), as schedule "
                       f"{record['schedule_id']} of deployment {deployment_id}: a `stoker api` server over this "
                       "database starts it when due (its scheduler looks every few seconds; none runs here). "
                       "Cancel it by deleting the schedule (`cfy deployments schedule delete`).", err=True)
        return
    run_workflow(engine, workflow, deployment_id, parse_inputs(parameters, "-p"), wait, fmt,
                 force, allow_custom_parameters, queue, dry_run)


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


@execution.command("delete")
@click.option("--keep-last", type=click.IntRange(min=1), default=None, help="Keep the N most recent ended executions.")
@click.option("--to-datetime", "--to", "to_datetime", metavar="TIME", default=None,
              help="Delete those created before TIME (YYYY-MM-DD, or YYYY-MM-DD HH:MM:SS, UTC).")
@click.option("-d", "--deployment-id", "deployment_id", default=None, help="Only this deployment's executions.")
@pass_engine
def delete(engine, keep_last, to_datetime, deployment_id):
    """Delete ended executions (terminated, failed, cancelled) with their events and logs, as ``cfy executions
    delete``: never a running, queued or scheduled one, nor one a deployment update, a schedule or an unfinished
    execution group still reads."""
    if keep_last is not None and to_datetime is not None:
        raise click.UsageError("--keep-last is mutually exclusive with --to-datetime")
    count = engine.executions.delete_ended(keep_last, to_datetime, deployment_id)
    click.echo(f"Deleted {count} executions" if count else "No executions to delete")


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
        click.echo("".join(line(row, deployment_id) + "\n" for row in rows), nl=False)
        printed += len(rows)

    if not tail:
        show_new()
        return
    from stoker.started import Started

    Started(service.get, running, execution_id).follow(show_new, TAIL_POLL)  # once more after its end


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
