"""``stoker stack snapshot create|list|show|restore|delete``: Heat's stack snapshots
(``openstack stack snapshot ...``) over ``Engine.snapshots``."""

from __future__ import annotations

import click

from stoker.cli.formatting import format_option, show_list, show_record
from stoker.cli.group import pass_engine
from stoker.cli.stack_cmds import stack

SNAPSHOT_COLUMNS = ["id", "name", "status", "status_reason", "creation_time"]


@stack.group("snapshot")
def snapshot() -> None:
    """Snapshots of a stack: its definition and every resource's data, to restore it to."""


@snapshot.command("create")
@click.argument("name")
@click.option("--name", "snapshot_name", default=None, help="The snapshot's name.")
@format_option()
@pass_engine
def snapshot_create(engine, name, snapshot_name, fmt):
    """Take a snapshot of stack NAME."""
    taken = engine.snapshots.create(name, snapshot_name)
    show_record({k: v for k, v in taken.items() if k != "data"}, fmt)


@snapshot.command("list")
@click.argument("name")
@format_option()
@pass_engine
def snapshot_list(engine, name, fmt):
    """The snapshots of stack NAME, oldest first."""
    show_list(engine.snapshots.list(name), SNAPSHOT_COLUMNS, fmt)


@snapshot.command("show")
@click.argument("name")
@click.argument("snapshot_id")
@format_option(default="yaml")
@pass_engine
def snapshot_show(engine, name, snapshot_id, fmt):
    """One snapshot of stack NAME, with its data."""
    show_record(engine.snapshots.show(name, snapshot_id), fmt)


@snapshot.command("restore")
@click.argument("name")
@click.argument("snapshot_id")
@format_option()
@pass_engine
def snapshot_restore(engine, name, snapshot_id, fmt):
    """Bring stack NAME back to a snapshot (an update to its definition)."""
    info = engine.snapshots.restore(name, snapshot_id)
    show_record(info, fmt)
    if info["stack_status"] != "RESTORE_COMPLETE":
        raise SystemExit(1)


@snapshot.command("delete")
@click.argument("name")
@click.argument("snapshot_id")
@pass_engine
def snapshot_delete(engine, name, snapshot_id):
    """Delete a snapshot of stack NAME."""
    engine.snapshots.delete(name, snapshot_id)
    click.echo(f"Snapshot {snapshot_id} deleted")
