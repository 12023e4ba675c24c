"""Print results as ``-f table|json|yaml|value``, like ``openstack ... -f``.

rich and PyYAML are imported when a table for a terminal or YAML is printed,
not when the CLI starts: most commands (``stack create --wait`` in a script)
print neither (``plain_table`` draws rich's table when it is plain text)."""

from __future__ import annotations

import json
import sys
from typing import Any, Iterable, Sequence

import click

from stoker.cli.plain_table import plain_table
from stoker.names import shown

FORMATS = ("table", "json", "yaml", "value")
#: where ``-f`` is remembered in ``click.Context.meta`` (shared by the whole command line)
FORMAT_META = "stoker.format"


def format_option(default: str = "table"):
    """``-f FORMAT``, and ``-c COLUMN`` (repeatable) keeping only those fields, as openstack's."""
    def decorate(command):
        command = click.option("-c", "--column", "columns", multiple=True, expose_value=False,
                               callback=_keep_columns, help="Show only this column (repeat for several).")(command)
        return click.option("-f", "--format", "fmt", type=click.Choice(FORMATS), default=default,
                            show_default=True, callback=_remember_format, help="Output format.")(command)

    return decorate


def _remember_format(ctx: click.Context, param: Any, value: str) -> str:
    ctx.meta[FORMAT_META] = value  # errors are shown in it too (cli/group.py)
    return value


def _keep_columns(ctx: click.Context, param: Any, value: tuple) -> tuple:
    ctx.meta["columns"] = value
    return value


def _chosen(columns: Iterable[str]) -> list[str]:
    """The columns ``-c`` kept, in the order given; all when it was not used."""
    columns = list(columns)
    ctx = click.get_current_context(silent=True)
    wanted = ctx.meta.get("columns") if ctx is not None else None
    if not wanted:
        return columns
    kept = [c for c in dict.fromkeys(wanted) if c in columns]
    if not kept:
        raise click.UsageError(f"No recognized column names in {list(wanted)}; the columns are: {', '.join(columns)}")
    return kept


def _print_table(columns: Sequence[str], rows: Sequence[Sequence[str]], fold: Sequence[int]) -> None:
    """A table with these cells; the columns at indexes ``fold`` wrap long values."""
    terminal = sys.stdout.isatty()
    plain = None if terminal else plain_table(columns, rows)
    if plain is not None:
        click.echo(plain)
        return
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    table = Table(*columns, show_lines=False)
    for index in fold:
        table.columns[index].overflow = "fold"
    for row in rows:
        table.add_row(*(Text(cell) for cell in row))
    # wide when piped (no terminal to fit), so values are never cut
    Console(soft_wrap=True, width=None if terminal else 250).print(table)


def _text(value: Any) -> str:
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True)
    if value is None:
        return ""
    return str(value)


def _cell(value: Any) -> str:
    """A table cell: control characters escaped (a table is for people)."""
    return shown(_text(value))


def _echo_value(text: str) -> None:
    """A ``-f value`` line: as it is for a script, control characters escaped on a terminal."""
    click.echo(shown(text) if sys.stdout.isatty() else text)


def dump(data: Any, fmt: str) -> str:
    if fmt == "json":
        return json.dumps(data, indent=4, sort_keys=False, default=str)
    import yaml

    return yaml.safe_dump(data, sort_keys=False, default_flow_style=False).rstrip()


def show_record(record: dict, fmt: str) -> None:
    """One object: a Field/Value table, or JSON/YAML, or bare values."""
    record = {key: record[key] for key in _chosen(record)}
    if fmt in ("json", "yaml"):
        click.echo(dump(record, fmt))
    elif fmt == "value":
        for value in record.values():
            _echo_value(_text(value))
    else:
        _print_table(["Field", "Value"], [[_cell(key), _cell(value)] for key, value in record.items()], [1])


def show_document(document: dict, fmt: str) -> None:
    """A nested document: JSON when asked, YAML otherwise (a table cannot nest)."""
    click.echo(dump(document, "json" if fmt == "json" else "yaml"))


def show_list(rows: Sequence[dict], columns: Iterable[str], fmt: str) -> None:
    """Several objects: a table with ``columns``, or a list in JSON/YAML."""
    columns = _chosen(columns)
    if fmt in ("json", "yaml"):
        click.echo(dump([{c: row.get(c) for c in columns} for row in rows], fmt))
    elif fmt == "value":
        for row in rows:
            _echo_value(" ".join(_text(row.get(c)) for c in columns))
    else:
        _print_table(columns, [[_cell(row.get(c)) for c in columns] for row in rows], range(len(columns)))


def show_problems(problems: Sequence, fmt: str, wrap: str | None = None) -> None:
    """Errors: a list of {path, file, line, column, code, message} in JSON/YAML,
    one line each otherwise (to stderr, so stdout stays clean)."""
    if fmt in ("json", "yaml"):
        items = [p.as_dict() for p in problems]
        click.echo(dump({wrap: items} if wrap else items, fmt))
    else:
        for problem in problems:
            click.echo(f"ERROR: {shown(str(problem))} [{problem.code}]", err=True)


def show_warnings(warnings: Sequence) -> None:
    for warning in warnings:
        click.echo(f"WARNING: {shown(str(warning))} [{warning.code}]", err=True)
