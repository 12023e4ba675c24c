"""``stoker stack snapshot create|list|show|restore|delete``: Heat's stack snapshots
(``openstack stack snapshot ...``) over ``Engine.snapshots``."""

from __future__ import annotations

import click

from stoker.cli.formatting import format_option, show_list, show_record
from stoker.cli.stack_cmds import engine_of, run_guarded, stack

SNAPSHOT_COLUMNS = ["id", "name", "status", "status_reason", "creation_time"]


@stack.group("snapshot")
def snapshot() -> None:
    """Snapshots of a stack: its definition and every resource's data, to restore it to."""


@snapshot.command("create")
@click.argument("name")
@click.option("--name", "snapshot_name", default=None, help="The snapshot's name.")
@format_option()
@click.pass_context
def snapshot_create(ctx, name, snapshot_name, fmt):
    """Take a snapshot of stack NAME."""
    engine = engine_of(ctx)
    taken = run_guarded(lambda: engine.snapshots.create(name, snapshot_name), fmt)
    show_record({k: v for k, v in taken.items() if k != "data"}, fmt)


@snapshot.command("list")
@click.argument("name")
@format_option()
@click.pass_context
def snapshot_list(ctx, name, fmt):
    """The snapshots of stack NAME, oldest first."""
    engine = engine_of(ctx)
    show_list(run_guarded(lambda: engine.snapshots.list(name), fmt), SNAPSHOT_COLUMNS, fmt)


@snapshot.command("show")
@click.argument("name")
@click.argument("snapshot_id")
@format_option(default="yaml")
@click.pass_context
def snapshot_show(ctx, name, snapshot_id, fmt):
    """One snapshot of stack NAME, with its data."""
    engine = engine_of(ctx)
    show_record(run_guarded(lambda: engine.snapshots.show(name, snapshot_id), fmt), fmt)


@snapshot.command("restore")
@click.argument("name")
@click.argument("snapshot_id")
@format_option()
@click.pass_context
def snapshot_restore(ctx, name, snapshot_id, fmt):
    """Bring stack NAME back to a snapshot (an update to its definition)."""
    engine = engine_of(ctx)
    info = run_guarded(lambda: engine.snapshots.restore(name, snapshot_id), fmt)
    show_record(info, fmt)
    if info["stack_status"] != "RESTORE_COMPLETE":
        raise SystemExit(1)


@snapshot.command("delete")
@click.argument("name")
@click.argument("snapshot_id")
@click.pass_context
def snapshot_delete(ctx, name, snapshot_id):
    """Delete a snapshot of stack NAME."""
    engine = engine_of(ctx)
    run_guarded(lambda: engine.snapshots.delete(name, snapshot_id))
    click.echo(f"Snapshot {snapshot_id} deleted")
