"""``stoker secret ...``: a project's secrets, encrypted at rest (as ``cfy secrets``); ``export`` and ``import``
write and read ``cfy secrets export``'s file, so secrets move between a local Stoker and a server (or Cloudify)."""

from __future__ import annotations

import json

import click

from stoker.cli.formatting import format_option, show_list, show_record
from stoker.cli.group import pass_engine
from stoker.errors import StokerError
from stoker.store.plugin_packages import VISIBILITIES

SECRET_COLUMNS = ["key", "created_at", "updated_at", "visibility", "is_hidden_value"]


@click.group()
def secret() -> None:
    """Create and read secrets (read by get_secret)."""


def _schema(key: str, given: str | None, as_dict: bool, as_list: bool) -> dict | None:
    """The schema of ``--schema`` (JSON with a ``type``, as cfy reads it), ``--dict`` or ``--list``."""
    if as_dict or as_list:
        return {"type": "object" if as_dict else "array"}
    if given is None:
        return None
    try:
        schema = json.loads(given)
    except ValueError as exc:
        raise StokerError(f"Error decoding the JSON schema of secret `{key}`: {exc}") from None
    if not isinstance(schema, dict) or not schema.get("type"):
        raise StokerError(f"Invalid JSON schema of secret `{key}`. Expected a dict with a \"type\" key")
    return schema


def _typed(key: str, value: str, schema: dict | None) -> object:
    """A typed secret's value, given as JSON (as cfy takes it; not repeated in the error: it may be hidden)."""
    if schema is None:
        return value
    try:
        return json.loads(value)
    except ValueError:
        raise StokerError(f"Error decoding the value of secret `{key}`: it is not JSON of type "
                          f"'{schema.get('type')}' (a typed secret's value is given as JSON)") from None


@secret.command("create")
@click.argument("key")
@click.option("-s", "--secret-string", "value", required=True,
              help="The value (JSON, for a typed secret: --schema, --dict, --list).")
@click.option("--update-if-exists", is_flag=True, help="Replace the value if the secret exists.")
@click.option("--hidden", "--hidden-value", "hidden", is_flag=True, help="Never show the value.")
@click.option("-l", "--visibility", "shown_to", type=click.Choice(VISIBILITIES), default="tenant",
              help="Who sees it (a server's tenants: cfy's --visibility).")
@click.option("--schema", "schema", default=None,
              help='A JSON Schema the value must match (a typed secret: {"type": "object", ...}).')
@click.option("--dict", "as_dict", is_flag=True, help='A typed secret holding a map: --schema \'{"type": "object"}\'.')
@click.option("--list", "as_list", is_flag=True, help='A typed secret holding a list: --schema \'{"type": "array"}\'.')
@format_option()
@pass_engine
def create(engine, key, value, update_if_exists, hidden, shown_to, schema, as_dict, as_list, fmt):
    if sum(1 for given in (schema is not None, as_dict, as_list) if given) > 1:
        raise click.UsageError("give one of --schema, --dict and --list")
    schema = _schema(key, schema, as_dict, as_list)
    record = engine.blueprints.secrets.create(key, _typed(key, value, schema), update_if_exists, hidden, shown_to,
                                              schema=schema)
    show_record({k: record[k] for k in SECRET_COLUMNS}, fmt)


@secret.command("update")
@click.argument("key")
@click.option("-s", "--secret-string", "value", default=None, help="The new value (JSON, for a typed secret).")
@click.option("--hidden/--visible", "hidden", default=None)
@format_option()
@pass_engine
def update(engine, key, value, hidden, fmt):
    secrets = engine.blueprints.secrets
    if value is not None:
        value = _typed(key, value, secrets.schema(key))
    record = secrets.update(key, value, hidden)
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


@secret.command("export")
@click.option("-o", "--output-path", "output", default="secrets.json", type=click.Path(dir_okay=False),
              help="The file to write (secrets.json).")
@click.option("-p", "--passphrase", default=None, help="Encrypt the values with it (8 characters or more).")
@click.option("--non-encrypted", is_flag=True, help="Write the values in clear.")
@click.option("-l", "--visibility", "shown_to", type=click.Choice(VISIBILITIES), default=None,
              help="Only the secrets of this visibility.")
@click.option("--filter-by", "search", default=None, help="Only the secrets whose key holds this text.")
@pass_engine
def export(engine, output, passphrase, non_encrypted, shown_to, search):
    """Write the project's secrets to a file ``cfy secrets import`` (and ``stoker secret import``) reads."""
    if bool(passphrase) == non_encrypted:
        raise click.UsageError("give one of --passphrase and --non-encrypted")
    entries = engine.blueprints.secrets.export([engine.project_id], passphrase, shown_to, search)
    with click.open_file(output, "w") as out:
        json.dump(entries, out, indent=1)
    click.echo(f"{len(entries)} secrets written to {output}" + ("" if passphrase else " (values not encrypted)"))


@secret.command("import")
@click.option("-i", "--input-path", "source", required=True, type=click.Path(exists=True, dir_okay=False),
              help="A file of cfy secrets export (or stoker secret export).")
@click.option("-p", "--passphrase", default=None, help="The passphrase the values were encrypted with.")
@click.option("--override-collisions", is_flag=True, help="Replace the secrets the project holds already.")
@pass_engine
def import_(engine, source, passphrase, override_collisions):
    """Store the file's secrets in the project (whatever tenant they were exported from): all, or none
    when one entry is wrong."""
    from stoker.blueprint.secret_files import Importer

    try:
        with open(source) as found:
            entries = json.load(found)
    except (OSError, ValueError) as exc:
        raise StokerError(f"{source} is not a secrets file (JSON): {exc}") from None
    importer = Importer(lambda tenant: engine.project_id, None, lambda creator: None, "admin")
    answer = engine.blueprints.secrets.import_(importer, entries, passphrase, None, override_collisions)
    colliding = [key for keys in answer["colliding_secrets"].values() for key in keys]
    stored = len(entries) - (0 if override_collisions else len(colliding))
    click.echo(f"{stored} secrets imported" + (
        f"; {'replaced' if override_collisions else 'held already, left as they were'}: {', '.join(colliding)}"
        if colliding else ""))
