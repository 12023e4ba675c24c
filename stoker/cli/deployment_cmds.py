"""``stoker deployment|node|node-instance ...``: deployments of blueprints, as ``cfy`` shows them."""

from __future__ import annotations

import json
import sys
from typing import Any, Iterable

import click

from stoker.cli.given_values import bounded, is_key_value, read_document
from stoker.cli.formatting import format_option, show_list, show_record
from stoker.cli.group import pass_engine
from stoker.errors import StokerError
from stoker.template.loader import load

DEPLOYMENT_COLUMNS = ["id", "display_name", "blueprint_id", "created_at", "created_by"]
NODE_COLUMNS = ["id", "deployment_id", "blueprint_id", "type", "number_of_instances", "host_id"]
INSTANCE_COLUMNS = ["id", "deployment_id", "host_id", "node_id", "state", "index"]
#: what Cloudify 7 reads from an instance's last status and drift checks
HEALTH_COLUMNS = ["is_status_check_ok", "has_configuration_drift"]
#: a deployment's or node's counts of them (``cfy deployments list``, ``cfy nodes list`` extended)
COUNT_COLUMNS = ["unavailable_instances", "drifted_instances"]


def parse_inputs(items: Iterable[str], option: str = "-i") -> dict[str, Any]:
    """``-i`` values: ``key=value`` (JSON values, else text), an inline mapping, or a YAML/JSON file;
    each bounded as a template is (``given_values``)."""
    values: dict[str, Any] = {}
    for item in items:
        if is_key_value(item):
            data = {}
            for part in item.split(";"):
                key, sep, raw = part.partition("=")
                if not sep or not key.strip():
                    raise StokerError(f"{option} {item[:80]!r}: expected a file, a mapping, or key=value")
                data[key.strip()] = _json_or_text(bounded({key.strip(): raw}, option)[key.strip()])
        else:
            data = load(item, option) if item.lstrip().startswith("{") else read_document(item)
            if not isinstance(data, dict):
                raise StokerError(f"{option} {item[:80]}: inputs must be a mapping of names to values")
        values.update(data)
    return bounded(values, option)


def _json_or_text(raw: str) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return raw


def parse_labels(items: Iterable[str]) -> list[tuple[str, str]]:
    pairs = []
    for item in items:
        key, sep, value = item.partition(":")
        if not sep or not key:
            raise StokerError(f"label {item!r} is not of the form KEY:VALUE")
        pairs.append((key, value))
    return pairs


@click.group()
def deployment() -> None:
    """Create deployments of blueprints and read their outputs, capabilities and inputs."""


@deployment.command("create")
@click.argument("deployment_id")
@click.option("-b", "--blueprint-id", "blueprint_id", required=True)
@click.option("-i", "--inputs", "inputs", multiple=True, metavar="FILE|KEY=VALUE",
              help="Inputs: a YAML/JSON file or key=value; repeat for several.")
@click.option("--label", "labels", multiple=True, metavar="KEY:VALUE", help="A label; repeat for several.")
@click.option("--display-name", default=None)
@click.option("--runtime-only-evaluation", is_flag=True, help="Leave every function for runtime.")
@format_option()
@pass_engine
def create(engine, deployment_id, blueprint_id, inputs, labels, display_name, runtime_only_evaluation, fmt):
    """Create DEPLOYMENT_ID from a blueprint: inputs checked, node instances laid out."""
    record = engine.blueprints.deployments.create(deployment_id, blueprint_id, parse_inputs(inputs),
                                            parse_labels(labels), display_name, runtime_only_evaluation)
    show_record(record, fmt)


@deployment.command("list")
@click.option("-b", "--blueprint-id", "blueprint_id", default=None)
@format_option()
@pass_engine
def list_(engine, blueprint_id, fmt):
    """Deployments (of one blueprint with -b)."""
    show_list(engine.blueprints.deployments.list(blueprint_id), DEPLOYMENT_COLUMNS + COUNT_COLUMNS, fmt)


@deployment.command("get")
@click.argument("deployment_id")
@format_option()
@pass_engine
def get(engine, deployment_id, fmt):
    show_record(engine.blueprints.deployments.get(deployment_id), fmt)


@deployment.command("delete")
@click.argument("deployment_id")
@click.option("-f", "--force", is_flag=True, help="Delete it even while other deployments name it their parent.")
@click.option("-r", "--recursive", is_flag=True, help="Delete the deployments naming it their parent first.")
@pass_engine
def delete(engine, deployment_id, force, recursive):
    """Delete DEPLOYMENT_ID (refused while it is the csys-obj-parent of another deployment)."""
    engine.blueprints.deployments.delete(deployment_id, force, recursive)
    click.echo(f"Deployment {deployment_id} deleted.")


#: what ``deployment update`` and ``history`` show of an update (``get-update``, json/yaml: all of it)
UPDATE_COLUMNS = ["id", "deployment_id", "state", "execution_id", "created_at", "old_blueprint_id", "new_blueprint_id"]


@deployment.command("update")
@click.argument("deployment_id")
@click.option("-b", "--blueprint-id", "blueprint_id", default=None, help="The blueprint to move onto (uploaded).")
@click.option("-i", "--inputs", "inputs", multiple=True, metavar="FILE|KEY=VALUE",
              help="New inputs, over the deployment's own; repeat for several.")
@click.option("--preview", is_flag=True, help="Show the steps the update would take; change nothing.")
@click.option("--skip-install", is_flag=True, help="Do not install the instances added.")
@click.option("--skip-uninstall", is_flag=True, help="Do not uninstall the instances removed.")
@click.option("--skip-reinstall", is_flag=True, help="Do not reinstall the instances of changed nodes.")
@click.option("--reinstall-list", "reinstall_list", multiple=True, metavar="INSTANCE_ID",
              help="Reinstall this node instance too; repeat for several.")
@click.option("--wait/--no-wait", default=True, help="Print the update's events as they happen.")
@format_option()
@pass_engine
def update(engine, deployment_id, blueprint_id, inputs, preview, skip_install, skip_uninstall, skip_reinstall,
           reinstall_list, wait, fmt):
    """Move DEPLOYMENT_ID onto another blueprint and/or new inputs (cfy deployments update): what went is
    uninstalled, what came installed, changed nodes reinstalled."""
    from stoker.cli.following import follow

    if not blueprint_id and not inputs:
        raise StokerError("give a blueprint (-b) or new inputs (-i) to update the deployment with")
    found, started = engine.executions.updates.begin(
        deployment_id, blueprint_id, parse_inputs(inputs), preview, skip_install=skip_install,
        skip_uninstall=skip_uninstall, skip_reinstall=skip_reinstall, reinstall_list=list(reinstall_list))
    if started is not None:
        follow(engine.executions, started, deployment_id, wait)
        found = engine.executions.updates.get(found["id"])
    show_record(found, fmt)
    if found["state"] == "failed":
        sys.exit(1)


@deployment.command("history")
@click.option("-d", "--deployment-id", "deployment_id", default=None)
@format_option()
@pass_engine
def history(engine, deployment_id, fmt):
    """The deployment updates (of one deployment with -d), oldest first."""
    show_list(engine.executions.updates.list(deployment_id), UPDATE_COLUMNS, fmt)


@deployment.command("get-update")
@click.argument("update_id")
@format_option()
@pass_engine
def get_update(engine, update_id, fmt):
    show_record(engine.executions.updates.get(update_id), fmt)


MODIFICATION_COLUMNS = ["id", "deployment_id", "status", "created_at", "ended_at"]


@deployment.group("modifications")
def modifications() -> None:
    """A deployment's modifications (each scale's change of its instances), as ``cfy deployments modifications``."""


@modifications.command("list")
@click.argument("deployment_id", required=False)
@format_option()
@pass_engine
def modifications_list(engine, deployment_id, fmt):
    """The modifications (of DEPLOYMENT_ID, or of every deployment), oldest first."""
    show_list(engine.executions.modifications.list(deployment_id), MODIFICATION_COLUMNS, fmt)


@modifications.command("get")
@click.argument("modification_id")
@format_option()
@pass_engine
def modifications_get(engine, modification_id, fmt):
    """One modification: what it asked, the instances it added, removed and related, its context."""
    show_record(engine.executions.modifications.get(modification_id), fmt)


@modifications.command("rollback")
@click.argument("modification_id")
@format_option()
@pass_engine
def modifications_rollback(engine, modification_id, fmt):
    """Undo a started modification: the instances it added go (their scripts are not undone)."""
    show_record(engine.executions.modifications.rollback(modification_id), fmt)


def _document_command(name: str, read: str, summary: str) -> None:
    """``deployment outputs|capabilities|inputs DEP``: one ``{name: value}`` object."""

    @deployment.command(name, help=summary)
    @click.argument("deployment_id")
    @format_option()
    @pass_engine
    def command(engine, deployment_id, fmt):
        show_record(getattr(engine.blueprints.deployments, read)(deployment_id), fmt)


_document_command("outputs", "outputs", "The deployment's outputs, evaluated now.")
_document_command("capabilities", "capabilities", "The deployment's capabilities, evaluated now.")
_document_command("inputs", "inputs", "The deployment's inputs (hidden ones masked).")


@deployment.group("labels")
def labels() -> None:
    """A deployment's labels."""


@labels.command("list")
@click.argument("deployment_id")
@format_option()
@pass_engine
def labels_list(engine, deployment_id, fmt):
    show_list(engine.blueprints.deployments.labels(deployment_id), ["key", "value"], fmt)


@labels.command("add")
@click.argument("labels", nargs=-1, required=True, metavar="KEY:VALUE...")
@click.argument("deployment_id")
@format_option()
@pass_engine
def labels_add(engine, labels, deployment_id, fmt):
    """Add labels (``stoker deployment labels add env:prod DEP``)."""
    show_list(engine.blueprints.deployments.add_labels(deployment_id, parse_labels(labels)), ["key", "value"], fmt)


@labels.command("delete")
@click.argument("label", metavar="KEY[:VALUE]")
@click.argument("deployment_id")
@format_option()
@pass_engine
def labels_delete(engine, label, deployment_id, fmt):
    """Delete a label's value, or every value of a key."""
    key, _, value = label.partition(":")
    show_list(engine.blueprints.deployments.delete_label(deployment_id, key, value or None), ["key", "value"], fmt)


@click.group()
def node() -> None:
    """A deployment's nodes."""


@node.command("list")
@click.option("-d", "--deployment-id", "deployment_id", required=True)
@format_option()
@pass_engine
def node_list(engine, deployment_id, fmt):
    show_list(engine.blueprints.deployments.nodes(deployment_id), NODE_COLUMNS + COUNT_COLUMNS, fmt)


@click.group("node-instance")
def node_instance() -> None:
    """A deployment's node instances, with their state and runtime properties."""


@node_instance.command("list")
@click.option("-d", "--deployment-id", "deployment_id", required=True)
@click.option("--node-name", default=None, help="Only the instances of this node.")
@format_option()
@pass_engine
def instance_list(engine, deployment_id, node_name, fmt):
    rows = engine.blueprints.deployments.node_instances(deployment_id, node_name)
    columns = INSTANCE_COLUMNS + (HEALTH_COLUMNS + ["runtime_properties", "system_properties"]
                                  if fmt in ("json", "yaml") else [])
    show_list(rows, columns, fmt)


@node_instance.command("get")
@click.argument("instance_id")
@click.option("-d", "--deployment-id", "deployment_id", default=None)
@format_option()
@pass_engine
def instance_get(engine, instance_id, deployment_id, fmt):
    show_record(engine.blueprints.deployments.node_instance(instance_id, deployment_id), fmt)


@click.group()
def workflow() -> None:
    """A deployment's workflows (cfy workflows list)."""


@workflow.command("list")
@click.option("-d", "--deployment-id", "deployment_id", required=True)
@format_option()
@pass_engine
def workflow_list(engine, deployment_id, fmt):
    """The workflows DEPLOYMENT_ID can run, with their parameters."""
    declared = engine.blueprints.deployments.plan(deployment_id).get("workflows") or {}
    rows = [{"name": name, "parameters": sorted((w if isinstance(w, dict) else {}).get("parameters") or {})}
            for name, w in sorted(declared.items())]  # ``hello: scripts/x.sh`` (short form) declares none
    show_list(rows, ["name", "parameters"], fmt)
