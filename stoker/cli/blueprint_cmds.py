"""``stoker blueprint ...``: validate, upload, list, get and delete blueprints (as ``cfy blueprints``)."""

from __future__ import annotations

import click

from stoker.cli.formatting import format_option, show_list, show_record, show_warnings
from stoker.cli.group import pass_engine
from stoker.errors import Problem

BLUEPRINT_COLUMNS = ["id", "description", "main_file_name", "created_at"]


def _warn(plan: dict) -> None:
    show_warnings([Problem(tuple(w["path"].split(".")) if w["path"] else (), w["code"], w["message"], w["file"],
                           w["line"], w["column"], severity="warning") for w in plan.get("warnings", ())])


@click.group()
def blueprint() -> None:
    """Validate, upload and inspect blueprints."""


@blueprint.command("validate")
@click.argument("path", type=click.Path(dir_okay=False))
@format_option()
def validate(path, fmt):
    """Check blueprint PATH (and what it imports); every error at once, with its place."""
    from stoker.blueprint.parser import parse_file

    plan = parse_file(path)
    _warn(plan)
    if fmt in ("json", "yaml"):
        show_record({"valid": True, "warnings": plan.get("warnings", [])}, fmt)
    else:
        click.echo("Blueprint validated.")


@blueprint.command("upload")
@click.argument("path", type=click.Path(dir_okay=False))
@click.option("-b", "--blueprint-id", "blueprint_id", required=True, help="The id to upload it as.")
@format_option()
@pass_engine
def upload(engine, path, blueprint_id, fmt):
    """Validate blueprint PATH and store it as BLUEPRINT_ID."""
    service = engine.blueprints
    record = service.upload(path, blueprint_id)
    _warn(service.plan(blueprint_id))
    show_record({k: record[k] for k in BLUEPRINT_COLUMNS}, fmt)


@blueprint.command("list")
@format_option()
@pass_engine
def list_(engine, fmt):
    """Uploaded blueprints."""
    show_list(engine.blueprints.list(), BLUEPRINT_COLUMNS, fmt)


@blueprint.command("get")
@click.argument("blueprint_id")
@format_option()
@pass_engine
def get(engine, blueprint_id, fmt):
    """One blueprint, with its inputs and labels."""
    show_record(engine.blueprints.get(blueprint_id), fmt)


@blueprint.command("delete")
@click.argument("blueprint_id")
@pass_engine
def delete(engine, blueprint_id):
    """Delete a blueprint no deployment uses."""
    engine.blueprints.delete(blueprint_id)
    click.echo(f"Blueprint {blueprint_id} deleted.")
