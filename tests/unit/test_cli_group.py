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
