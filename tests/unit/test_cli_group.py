"""``StokerGroup`` turns any Stoker error a command raises, however deep in nested groups, into
today's one-line message and exit 1; ``pass_engine`` hands a command its engine."""

from __future__ import annotations

import json

import click
from click.testing import CliRunner

from stoker.cli.formatting import format_option
from stoker.cli.group import StokerGroup, pass_engine
from stoker.errors import NotFound, Problem, ValidationFailed

PROBLEMS = [Problem(("resources", "a"), "bad-type", "no such type")]


class _Settings:
    def engine(self):
        return {"opened": True}


@click.group(cls=StokerGroup)
@click.pass_context
def root(ctx: click.Context) -> None:
    ctx.obj = _Settings()


@root.group()
def things() -> None:
    """A nested group: errors pass through it to the root."""


@things.command("missing")
@pass_engine
def missing(engine) -> None:
    click.echo(f"engine {engine}")
    raise NotFound("Stack 'x' not found\x1b[31m")


@things.command("invalid")
@format_option()
@pass_engine
def invalid(engine, fmt) -> None:
    raise ValidationFailed(PROBLEMS)


def test_a_stoker_error_is_one_line_and_exit_1():
    result = CliRunner().invoke(root, ["things", "missing"])
    assert result.exit_code == 1
    assert result.stdout == "engine {'opened': True}\n"
    assert result.stderr.splitlines() == ["ERROR: Stack 'x' not found\\x1b[31m"]  # control characters shown, not run


def test_validation_problems_follow_the_commands_format():
    table = CliRunner().invoke(root, ["things", "invalid"])
    assert table.exit_code == 1 and table.stdout == ""
    assert table.stderr.splitlines() == ["ERROR: resources.a: no such type [bad-type]"]
    as_json = CliRunner().invoke(root, ["things", "invalid", "-f", "json"])
    assert as_json.exit_code == 1 and as_json.stderr == ""
    assert json.loads(as_json.stdout) == [PROBLEMS[0].as_dict()]
    as_value = CliRunner().invoke(root, ["things", "invalid", "-f", "value"])
    assert as_value.exit_code == 1 and "[bad-type]" in as_value.stderr


LAZY_ROOT = """
import json
import sys
import click
from stoker.cli import main
assert "stoker.cli.stack_cmds" not in sys.modules and "stoker.cli.api_cmds" not in sys.modules
ctx = click.Context(main)
stack = main.get_command(ctx, "stack")
print(json.dumps(sorted(stack.commands)))
print("stoker.cli.stack_cmds" in sys.modules, "stoker.cli.api_cmds" in sys.modules)
"""


def test_the_root_group_imports_a_commands_module_when_the_command_is_asked_for():
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", LAZY_ROOT], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    subcommands, loaded = done.stdout.splitlines()
    assert {"create", "snapshot", "abandon", "adopt"} <= set(json.loads(subcommands))  # with those other modules add
    assert loaded == "True False"


def test_an_unknown_command_is_matched_against_commands_not_imported_yet():
    from stoker.cli import main

    result = CliRunner().invoke(main, ["instal", "x"])
    assert result.exit_code == 2
    assert "No such command 'instal'. (Did you mean one of: 'install', 'uninstall'?)" in result.stderr
