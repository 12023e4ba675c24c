"""``stoker blueprint ...``: validate, upload, list, get and delete blueprints (as ``cfy blueprints``)."""

from __future__ import annotations

import click

from stoker.cli.formatting import format_option, show_list, show_record, show_warnings
from stoker.cli.stack_cmds import engine_of, run_guarded
from stoker.errors import Problem, StokerError

BLUEPRINT_COLUMNS = ["id", "description", "main_file_name", "created_at"]


def dsl(ctx: click.Context):
    """The blueprint service of the engine the command talks to."""
    service = getattr(engine_of(ctx), "blueprints", None)
    if service is None:
        raise StokerError("blueprints and deployments are not served over the REST API yet: "
                          "run this command without --url")
    return service


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

    def go():
        plan = parse_file(path)
        _warn(plan)
        if fmt in ("json", "yaml"):
            show_record({"valid": True, "warnings": plan.get("warnings", [])}, fmt)
        else:
            click.echo("Blueprint validated.")

    run_guarded(go, fmt)


@blueprint.command("upload")
@click.argument("path", type=click.Path(dir_okay=False))
@click.option("-b", "--blueprint-id", "blueprint_id", required=True, help="The id to upload it as.")
@format_option()
@click.pass_context
def upload(ctx, path, blueprint_id, fmt):
    """Validate blueprint PATH and store it as BLUEPRINT_ID."""

    def go():
        service = dsl(ctx)
        record = service.upload(path, blueprint_id)
        _warn(service.plan(blueprint_id))
        show_record({k: record[k] for k in BLUEPRINT_COLUMNS}, fmt)

    run_guarded(go, fmt)


@blueprint.command("list")
@format_option()
@click.pass_context
def list_(ctx, fmt):
    """Uploaded blueprints."""
    run_guarded(lambda: show_list(dsl(ctx).list(), BLUEPRINT_COLUMNS, fmt), fmt)


@blueprint.command("get")
@click.argument("blueprint_id")
@format_option()
@click.pass_context
def get(ctx, blueprint_id, fmt):
    """One blueprint, with its inputs and labels."""
    run_guarded(lambda: show_record(dsl(ctx).get(blueprint_id), fmt), fmt)


@blueprint.command("delete")
@click.argument("blueprint_id")
@click.pass_context
def delete(ctx, blueprint_id):
    """Delete a blueprint no deployment uses."""

    def go():
        dsl(ctx).delete(blueprint_id)
        click.echo(f"Blueprint {blueprint_id} deleted.")

    run_guarded(go)
