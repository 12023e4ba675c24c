"""``stoker secret ...``: a project's secrets, encrypted at rest (as ``cfy secrets``)."""

from __future__ import annotations

import click

from stoker.cli.blueprint_cmds import dsl
from stoker.cli.formatting import format_option, show_list, show_record
from stoker.cli.stack_cmds import run_guarded

SECRET_COLUMNS = ["key", "created_at", "updated_at", "is_hidden_value"]


@click.group()
def secret() -> None:
    """Create and read secrets (read by get_secret)."""


@secret.command("create")
@click.argument("key")
@click.option("-s", "--secret-string", "value", required=True, help="The value.")
@click.option("--update-if-exists", is_flag=True, help="Replace the value if the secret exists.")
@click.option("--hidden", "--hidden-value", "hidden", is_flag=True, help="Never show the value.")
@format_option()
@click.pass_context
def create(ctx, key, value, update_if_exists, hidden, fmt):
    def go():
        record = dsl(ctx).secrets.create(key, value, update_if_exists, hidden)
        show_record({k: record[k] for k in SECRET_COLUMNS}, fmt)

    run_guarded(go, fmt)


@secret.command("update")
@click.argument("key")
@click.option("-s", "--secret-string", "value", default=None)
@click.option("--hidden/--visible", "hidden", default=None)
@format_option()
@click.pass_context
def update(ctx, key, value, hidden, fmt):
    def go():
        record = dsl(ctx).secrets.update(key, value, hidden)
        show_record({k: record[k] for k in SECRET_COLUMNS}, fmt)

    run_guarded(go, fmt)


@secret.command("get")
@click.argument("key")
@format_option()
@click.pass_context
def get(ctx, key, fmt):
    """A secret with its value (masked when hidden)."""
    run_guarded(lambda: show_record(dsl(ctx).secrets.get(key), fmt), fmt)


@secret.command("list")
@format_option()
@click.pass_context
def list_(ctx, fmt):
    run_guarded(lambda: show_list(dsl(ctx).secrets.list(), SECRET_COLUMNS, fmt), fmt)


@secret.command("delete")
@click.argument("key")
@click.pass_context
def delete(ctx, key):
    def go():
        dsl(ctx).secrets.delete(key)
        click.echo(f"Secret {key} deleted.")

    run_guarded(go)
