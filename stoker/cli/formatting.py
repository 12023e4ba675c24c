"""Print results as ``-f table|json|yaml|value``, like ``openstack ... -f``.

rich and PyYAML are imported when a table or YAML is printed, not when the CLI
starts: most commands (``stack create --wait``) print neither."""

from __future__ import annotations

import json
from typing import Any, Iterable, Sequence

import click

FORMATS = ("table", "json", "yaml", "value")


def format_option(default: str = "table"):
    return click.option("-f", "--format", "fmt", type=click.Choice(FORMATS), default=default,
                        show_default=True, help="Output format.")


def _console():
    """Wide when piped (no terminal to fit), so values are never cut."""
    import sys

    from rich.console import Console

    return Console(soft_wrap=True, width=None if sys.stdout.isatty() else 250)


def _text(value: Any) -> str:
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True)
    if value is None:
        return ""
    return str(value)


def dump(data: Any, fmt: str) -> str:
    if fmt == "json":
        return json.dumps(data, indent=4, sort_keys=False, default=str)
    import yaml

    return yaml.safe_dump(data, sort_keys=False, default_flow_style=False).rstrip()


def show_record(record: dict, fmt: str) -> None:
    """One object: a Field/Value table, or JSON/YAML, or bare values."""
    if fmt in ("json", "yaml"):
        click.echo(dump(record, fmt))
    elif fmt == "value":
        for value in record.values():
            click.echo(_text(value))
    else:
        from rich.table import Table
        from rich.text import Text

        table = Table("Field", "Value", show_lines=False)
        table.columns[1].overflow = "fold"
        for key, value in record.items():
            table.add_row(Text(str(key)), Text(_text(value)))
        _console().print(table)


def show_document(document: dict, fmt: str) -> None:
    """A nested document: JSON when asked, YAML otherwise (a table cannot nest)."""
    click.echo(dump(document, "json" if fmt == "json" else "yaml"))


def show_list(rows: Sequence[dict], columns: Iterable[str], fmt: str) -> None:
    """Several objects: a table with ``columns``, or a list in JSON/YAML."""
    columns = list(columns)
    if fmt in ("json", "yaml"):
        click.echo(dump([{c: row.get(c) for c in columns} for row in rows], fmt))
    elif fmt == "value":
        for row in rows:
            click.echo(" ".join(_text(row.get(c)) for c in columns))
    else:
        from rich.table import Table
        from rich.text import Text

        table = Table(*columns)
        for column in table.columns:
            column.overflow = "fold"
        for row in rows:
            table.add_row(*(Text(_text(row.get(c))) for c in columns))
        _console().print(table)


def show_problems(problems: Sequence, fmt: str, wrap: str | None = None) -> None:
    """Errors: a list of {path, file, line, column, code, message} in JSON/YAML,
    one line each otherwise (to stderr, so stdout stays clean)."""
    if fmt in ("json", "yaml"):
        items = [p.as_dict() for p in problems]
        click.echo(dump({wrap: items} if wrap else items, fmt))
    else:
        for problem in problems:
            click.echo(f"ERROR: {problem} [{problem.code}]", err=True)


def show_warnings(warnings: Sequence) -> None:
    for warning in warnings:
        click.echo(f"WARNING: {warning} [{warning.code}]", err=True)
