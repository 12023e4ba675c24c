"""``stoker stack export|abandon|adopt|file list``: Heat's abandon data out of a stack and
back into a new one (``openstack stack abandon|adopt|export|file list``)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from stoker.cli.formatting import format_option, show_document
from stoker.cli.stack_cmds import _finish, _watch, engine_of, run_guarded, stack


def _write_or_show(data: dict, output_file: str | None, fmt: str) -> None:
    if output_file:
        Path(output_file).write_text(json.dumps(data, indent=2))
    else:
        show_document(data, fmt)


def _data_command(verb: str, method: str, doc: str) -> None:
    @stack.command(verb)
    @click.argument("name")
    @click.option("--output-file", default=None, help="Write the data to this file (JSON).")
    @format_option(default="json")
    @click.pass_context
    def command(ctx, name, output_file, fmt):
        engine = engine_of(ctx)
        _write_or_show(run_guarded(lambda: getattr(engine, method)(name), fmt), output_file, fmt)

    command.__doc__ = doc


_data_command("export", "export_stack", "Stack NAME's data, to adopt it elsewhere; the stack stays.")
_data_command("abandon", "abandon_stack", "Forget stack NAME, leaving what it made; prints its data for adopt.")


@stack.command("adopt")
@click.argument("name")
@click.option("--adopt-file", required=True, type=click.Path(exists=True, dir_okay=False),
              help="The data abandon or export gave (JSON).")
@click.option("--timeout", type=int, help="Timeout in minutes.")
@click.option("--wait", is_flag=True, help="Show progress; exit non-zero on failure.")
@format_option()
@click.pass_context
def adopt_cmd(ctx, name, adopt_file, timeout, wait, fmt):
    """Make stack NAME from abandon data, taking over the resources it lists."""
    engine = engine_of(ctx)

    def go():
        action = lambda: engine.adopt_stack(name, Path(adopt_file).read_text(), timeout_mins=timeout)  # noqa: E731
        _finish(_watch(engine, name, action, fmt) if wait else action(), fmt, wait)

    run_guarded(go, fmt)


@stack.group("file")
def file_group() -> None:
    """The files map a stack was given (get_file contents, nested templates)."""


@file_group.command("list")
@click.argument("name")
@format_option(default="yaml")
@click.pass_context
def file_list(ctx, name, fmt):
    engine = engine_of(ctx)
    show_document(run_guarded(lambda: engine.export_stack(name)["files"], fmt), fmt)
