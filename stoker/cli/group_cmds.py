"""``stoker deployment group ...`` and ``stoker execution group ...``: deployment groups and execution groups,
as ``cfy deployments groups`` and ``cfy executions groups`` handle them, on the local engine.

An execution group's executions run in threads of this process (with a broker, on the workers), so its
``start`` and ``resume`` wait for the group's end, printing each execution's end as it lands; Ctrl-C
cancels the group.  With ``--url``, use ``cfy`` against the server (``stoker api`` serves both).
"""

from __future__ import annotations

import sys
import time

import click

from stoker.cli.deployment_cmds import deployment, parse_inputs, parse_labels
from stoker.cli.execution_cmds import execution
from stoker.cli.formatting import format_option, show_list, show_record
from stoker.cli.group import pass_engine
from stoker.errors import StokerError

GROUP_COLUMNS = ["id", "description", "default_blueprint_id", "deployment_ids"]
EXECUTION_GROUP_COLUMNS = ["id", "workflow_id", "deployment_group_id", "concurrency", "status"]
#: how often a waiting ``execution group start|resume`` looks at the group
POLL = 0.2


def _local(engine):
    """The local engine; a server's (``--url``) is refused: its groups are served to ``cfy``."""
    if getattr(engine, "store", None) is None:
        raise StokerError("deployment and execution groups are not reachable through --url yet: run cfy deployments "
                          "groups / cfy executions groups against the server")
    return engine


def _deployment_groups(engine):
    from stoker.blueprint.deployment_groups import DeploymentGroups

    return DeploymentGroups(_local(engine).blueprints.deployments)


def _execution_groups(engine):
    from stoker.workflows.execution_groups import ExecutionGroups

    return ExecutionGroups(_local(engine).executions)


def _members(deployment_ids: tuple[str, ...], label_rules: tuple[str, ...], from_group: str | None) -> dict:
    """What ``-d``, ``--label-rule KEY=VALUE`` (``KEY!=VALUE``: without it) and ``--from-group`` name."""
    rules = []
    for text in label_rules:
        key, sep, value = text.replace("!=", "\0", 1).partition("\0") if "!=" in text else text.partition("=")
        if not sep or not key:
            raise StokerError(f"--label-rule {text!r} is not KEY=VALUE or KEY!=VALUE")
        rules.append({"key": key, "values": [value], "operator": "not_any_of" if "!=" in text else "any_of",
                      "type": "label"})
    return {"deployment_ids": list(deployment_ids) or None, "filter_rules": rules or None,
            "deployments_from_group": from_group}


@deployment.group("group")
def group() -> None:
    """Deployment groups: named sets of deployments an execution group runs a workflow on."""


@group.command("create")
@click.argument("group_id")
@click.option("-b", "--default-blueprint", default=None, help="The blueprint of the deployments the group makes.")
@click.option("-i", "--inputs", "inputs", multiple=True, metavar="FILE|KEY=VALUE", help="Their default inputs.")
@click.option("--description", default=None)
@click.option("--label", "labels", multiple=True, metavar="KEY:VALUE", help="Given to every deployment of the group.")
@format_option()
@pass_engine
def create(engine, group_id, default_blueprint, inputs, description, labels, fmt):
    """Create GROUP_ID, or change its blueprint, inputs, description and labels."""
    show_record(_deployment_groups(engine).put(group_id, {
        "blueprint_id": default_blueprint, "default_inputs": parse_inputs(inputs) if inputs else None,
        "description": description, "labels": [{k: v} for k, v in parse_labels(labels)] if labels else None}), fmt)


def _membership_command(verb: str, summary: str) -> None:
    """``extend`` and ``shrink``: deployments by id, label rule or group (``extend --count``: new ones)."""

    @group.command(verb, help=summary)
    @click.argument("group_id")
    @click.option("-d", "--deployment-id", "deployment_ids", multiple=True)
    @click.option("--label-rule", "label_rules", multiple=True, metavar="KEY=VALUE")
    @click.option("--from-group", default=None)
    @click.option("--count", type=click.IntRange(0), default=0, hidden=verb == "shrink",
                  help="New deployments of the group's default blueprint.")
    @format_option()
    @pass_engine
    def command(engine, group_id, deployment_ids, label_rules, from_group, count, fmt):
        chosen = _members(deployment_ids, label_rules, from_group)
        if verb == "extend":
            changed = _deployment_groups(engine).change(group_id, {**chosen, "new_deployments": [{}] * count}, None)
        else:
            changed = _deployment_groups(engine).change(group_id, None, chosen)
        show_record(changed, fmt)


_membership_command("extend", "Add deployments to GROUP_ID (existing ones, or --count new ones).")
_membership_command("shrink", "Remove deployments from GROUP_ID.")


@group.command("delete")
@click.argument("group_id")
@click.option("--delete-deployments", is_flag=True, help="Delete the group's deployments too.")
@pass_engine
def delete(engine, group_id, delete_deployments):
    """Delete GROUP_ID (its deployments stay, unless --delete-deployments)."""
    _deployment_groups(engine).delete(group_id, delete_deployments)
    click.echo(f"Deployment group {group_id} deleted.")


@execution.group("group")
def execution_group() -> None:
    """Execution groups: a workflow on every deployment of a deployment group, N at a time."""


def _waited(groups, started: dict, fmt: str) -> None:
    """Wait for the group's end, saying each execution's end; show the group; exit 1 unless it terminated."""
    said: set[str] = set()
    try:
        while True:
            found = groups.get(started["id"])
            for execution_id in found["execution_ids"]:
                ended = groups.executions.get(execution_id)
                if execution_id not in said and ended["status"] in ("terminated", "failed", "cancelled"):
                    said.add(execution_id)
                    click.echo(f"{ended['deployment_id']}: {ended['workflow_id']} {ended['status']}", err=True)
            if found["status"] in ("terminated", "failed", None):
                break
            time.sleep(POLL)
    except KeyboardInterrupt:
        click.echo("Cancelling the execution group", err=True)
        groups.cancel(started["id"], force=True)
        found = groups.get(started["id"])
    show_record(found, fmt)
    if found["status"] != "terminated":
        sys.exit(1)


def _read_commands(parent: click.Group, services, columns: list[str]) -> None:
    """``list`` and ``get`` of a kind of group (``services(engine)``: its service)."""

    @parent.command("list")
    @format_option()
    @pass_engine
    def list_(engine, fmt):
        """The tenant's groups."""
        show_list(services(engine).list(), columns, fmt)

    @parent.command("get")
    @click.argument("group_id")
    @format_option()
    @pass_engine
    def get(engine, group_id, fmt):
        """One group, with its members."""
        show_record(services(engine).get(group_id), fmt)


_read_commands(group, _deployment_groups, GROUP_COLUMNS)
_read_commands(execution_group, _execution_groups, EXECUTION_GROUP_COLUMNS)


@execution_group.command("start")
@click.argument("workflow")
@click.option("-g", "--deployment-group", "group_id", required=True)
@click.option("-p", "--parameters", "parameters", multiple=True, metavar="FILE|KEY=VALUE")
@click.option("--concurrency", type=click.IntRange(0), default=5, show_default=True,
              help="How many of its executions run at once.")
@click.option("--force", is_flag=True, help="Run even beside a deployment's running execution.")
@format_option()
@pass_engine
def start(engine, workflow, group_id, parameters, concurrency, force, fmt):
    """Run WORKFLOW on every deployment of the group (those having it), waiting for all of them."""
    groups = _execution_groups(engine)
    _waited(groups, groups.start(group_id, workflow, parse_inputs(parameters, "-p"), None, concurrency, force), fmt)


@execution_group.command("cancel")
@click.argument("group_id")
@click.option("-f", "--force", is_flag=True, help="Stop the running executions now, killing their scripts.")
@format_option()
@pass_engine
def execution_group_cancel(engine, group_id, force, fmt):
    """Cancel the group's waiting executions at once and ask its running ones to stop."""
    show_record(_execution_groups(engine).cancel(group_id, force), fmt)


@execution_group.command("resume")
@click.argument("group_id")
@format_option()
@pass_engine
def execution_group_resume(engine, group_id, fmt):
    """Run the group's failed and cancelled executions again from where they stopped, waiting for all."""
    groups = _execution_groups(engine)
    _waited(groups, groups.resume(group_id), fmt)


@execution_group.command("set-concurrency")
@click.argument("group_id")
@click.argument("concurrency", type=click.IntRange(0))
@format_option()
@pass_engine
def set_concurrency(engine, group_id, concurrency, fmt):
    """How many of the group's executions run at once from now on (0: none starts)."""
    show_record(_execution_groups(engine).set_concurrency(group_id, concurrency), fmt)


def _target_command(verb: str, outcome: str) -> None:
    """``set-success-group`` / ``set-failure-group``: a deployment group the deployments join by outcome."""

    @execution_group.command(verb, help=f"Deployments whose execution in GROUP_ID {outcome} join TARGET_GROUP_ID "
                                        "(those that did already, at once).")
    @click.argument("group_id")
    @click.argument("target_group_id")
    @format_option()
    @pass_engine
    def command(engine, group_id, target_group_id, fmt):
        targets = {"success_group_id" if outcome == "succeeds" else "failure_group_id": target_group_id}
        show_record(_execution_groups(engine).set_targets(group_id, **targets), fmt)


_target_command("set-success-group", "succeeds")
_target_command("set-failure-group", "fails")
