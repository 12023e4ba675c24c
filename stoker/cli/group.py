"""What every ``stoker`` command shares: Stoker's errors turned into output and exit code 1 in
one place (``StokerGroup``, the root group), and the engine handed in (``pass_engine``)."""

from __future__ import annotations

import functools
import sys

import click

from stoker.cli.formatting import FORMAT_META, show_problems
from stoker.errors import StokerError, ValidationFailed
from stoker.names import shown


class StokerGroup(click.Group):
    """The root group: a command that raises ``StokerError`` prints its one-line message (a
    ``ValidationFailed``: its problems, as JSON/YAML when the command was asked for those) and
    exits 1, never with a traceback."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except ValidationFailed as exc:
            fmt = ctx.meta.get(FORMAT_META, "table")
            show_problems(exc.problems, fmt if fmt in ("json", "yaml") else "table")
        except StokerError as exc:
            click.echo(f"ERROR: {shown(str(exc))}", err=True)
        sys.exit(1)


def current_settings():
    """The global options (``stoker.cli._Settings``) of the command running now."""
    return click.get_current_context().find_root().obj


def pass_engine(command):
    """Give ``command`` the engine it talks to (local, or the server's with ``--url``) as its first argument."""
    @functools.wraps(command)
    def with_engine(*args, **kwargs):
        return command(current_settings().engine(), *args, **kwargs)

    return with_engine


def pass_settings(command):
    """Give ``command`` the global options first: for commands that may not open an engine at all."""
    @functools.wraps(command)
    def with_settings(*args, **kwargs):
        return command(current_settings(), *args, **kwargs)

    return with_settings
