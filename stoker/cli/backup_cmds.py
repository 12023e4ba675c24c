"""``stoker backup create|restore FILE``: the whole local database as one zip and back (the format of
``stoker/store/backups.py``, the same as ``cfy snapshots download`` gives), e.g. from SQLite into PostgreSQL."""

from __future__ import annotations

import os
from pathlib import Path

import click

from stoker.cli.group import pass_settings


@click.group()
def backup() -> None:
    """Back the whole server up (every project) and restore it into an empty one."""


def _store(settings):
    """The local database's store: a server (``--url``) backs up with ``cfy snapshots``, never through here."""
    from stoker.store.db import default_url, open_store

    if settings.remote is not None:
        raise click.UsageError("stoker backup works on a local database (--db-url); a server's is backed up with "
                               "cfy snapshots create|download|upload|restore")
    return open_store(settings.db_url or default_url())


@backup.command("create")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--exclude-events", is_flag=True, help="Leave the executions' events out.")
@click.option("--exclude-logs", is_flag=True, help="Leave the executions' logs out.")
@pass_settings
def create(settings, file: Path, exclude_events: bool, exclude_logs: bool) -> None:
    """Write FILE (made 0600: it holds every project's state, secrets sealed with this server's key)."""
    from stoker.store.backups import dump

    store = _store(settings)
    draft = file.with_name(f".{file.name}.{os.getpid()}")
    try:
        with open(os.open(draft, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600), "wb") as out:
            about = dump(store.engine, out, not exclude_events, not exclude_logs)
        os.replace(draft, file)
    except OSError as exc:
        raise click.ClickException(f"cannot write {file}: {exc.strerror or exc}") from None
    finally:
        draft.unlink(missing_ok=True)
        store.close()
    rows = sum(listed["rows"] for listed in about["tables"].values())
    click.echo(f"Backup written to {file}: {rows} rows of {len(about['tables'])} tables "
               f"(schema {about['schema_revision']})")


@backup.command("restore")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--force", is_flag=True, help="Delete what the server holds first (refused while executions run).")
@pass_settings
def restore(settings, file: Path, force: bool) -> None:
    """Restore FILE into this server's database, which must hold nothing (unless --force): all or nothing."""
    from stoker.store.backups import Backup, restore as restored

    store = _store(settings)
    try:
        counts = restored(store.engine, Backup(str(file)), force)
    finally:
        store.close()
    click.echo(f"Backup {file} restored: {sum(counts.values())} rows")
