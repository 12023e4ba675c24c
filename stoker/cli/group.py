"""What every ``stoker`` command shares: Stoker's errors turned into output and exit code 1 in
one place (``StokerGroup``, the root group), and the engine handed in (``pass_engine``)."""

from __future__ import annotations

import functools
import importlib
import sys

import click

from stoker.cli.formatting import FORMAT_META, show_problems
from stoker.errors import StokerError, ValidationFailed
from stoker.names import shown


class StokerGroup(click.Group):
    """The root group: a command that raises ``StokerError`` prints its one-line message (a
    ``ValidationFailed``: its problems, as JSON/YAML when the command was asked for those) and
    exits 1, never with a traceback.

    Its commands may be named in ``lazy`` (``name: (module, attribute, modules it also needs)``)
    rather than added: a command's module is imported when the command is asked for, so
    ``stoker install`` does not import the stack, template and API commands' modules.
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.lazy: dict[str, tuple[str, str, tuple[str, ...]]] = {}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *self.lazy})

    def get_command(self, ctx: click.Context, name: str):
        if name not in self.commands and name in self.lazy:
            from stoker.template.loader import paused_gc

            module, attribute, also = self.lazy[name]
            with paused_gc():  # modules live on: the collector need not rescan them as they load
                command = getattr(importlib.import_module(module), attribute)
                for other in also:  # modules that attach subcommands to it (``stack snapshot ...``)
                    importlib.import_module(other)
            self.add_command(command, name)
        return super().get_command(ctx, name)

    def resolve_command(self, ctx: click.Context, args: list[str]):
        try:
            return super().resolve_command(ctx, args)
        except click.exceptions.NoSuchCommand as exc:  # "did you mean" among every command, not the loaded ones
            raise click.exceptions.NoSuchCommand(exc.command_name, possibilities=self.list_commands(ctx),
                                                 ctx=ctx) from None

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
