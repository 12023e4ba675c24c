"""``stoker secret ...``: a project's secrets, encrypted at rest (as ``cfy secrets``)."""

from __future__ import annotations

import click

from stoker.cli.formatting import format_option, show_list, show_record
from stoker.cli.group import pass_engine

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
@pass_engine
def create(engine, key, value, update_if_exists, hidden, fmt):
    record = engine.blueprints.secrets.create(key, value, update_if_exists, hidden)
    show_record({k: record[k] for k in SECRET_COLUMNS}, fmt)


@secret.command("update")
@click.argument("key")
@click.option("-s", "--secret-string", "value", default=None)
@click.option("--hidden/--visible", "hidden", default=None)
@format_option()
@pass_engine
def update(engine, key, value, hidden, fmt):
    record = engine.blueprints.secrets.update(key, value, hidden)
    show_record({k: record[k] for k in SECRET_COLUMNS}, fmt)


@secret.command("get")
@click.argument("key")
@format_option()
@pass_engine
def get(engine, key, fmt):
    """A secret with its value (masked when hidden)."""
    show_record(engine.blueprints.secrets.get(key), fmt)


@secret.command("list")
@format_option()
@pass_engine
def list_(engine, fmt):
    show_list(engine.blueprints.secrets.list(), SECRET_COLUMNS, fmt)


@secret.command("delete")
@click.argument("key")
@pass_engine
def delete(engine, key):
    engine.blueprints.secrets.delete(key)
    click.echo(f"Secret {key} deleted.")
