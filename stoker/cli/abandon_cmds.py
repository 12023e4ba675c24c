"""``stoker stack export|abandon|adopt|file list``: Heat's abandon data out of a stack and
back into a new one (``openstack stack abandon|adopt|export|file list``)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from stoker.cli.formatting import format_option, show_document
from stoker.cli.group import pass_engine
from stoker.cli.stack_cmds import stack
from stoker.cli.stack_progress import act


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
    @pass_engine
    def command(engine, name, output_file, fmt):
        _write_or_show(getattr(engine, method)(name), output_file, fmt)

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
@pass_engine
def adopt_cmd(engine, name, adopt_file, timeout, wait, fmt):
    """Make stack NAME from abandon data, taking over the resources it lists."""
    act(engine, wait, fmt, "adopt", name, Path(adopt_file).read_text(), timeout_mins=timeout)


@stack.group("file")
def file_group() -> None:
    """The files map a stack was given (get_file contents, nested templates)."""


@file_group.command("list")
@click.argument("name")
@format_option(default="yaml")
@pass_engine
def file_list(engine, name, fmt):
    show_document(engine.export_stack(name)["files"], fmt)
