"""executemany of thousands of rows without SQLAlchemy's per-row work.

``conn.execute(stmt, rows)`` builds each row's parameters and runs each value
through its type's bind processor, row by row: in the engine's group commits
of 10,000 resources that cost more than the database's own work.  Here a
statement is compiled once, each value is turned into what the driver takes
by its column's type (JSON text, naive UTC times), Python-side column
defaults are filled in, and the driver's executemany gets the rows as they are.
What compiling a statement gives is kept (``_plan``): a statement built once
(``insert_of``) costs its compile once, not once per group commit.
"""

from __future__ import annotations

import json
from datetime import datetime
from functools import lru_cache
from typing import Any, Callable

from sqlalchemy import JSON, Column, Connection, Dialect, Table, bindparam, insert
from sqlalchemy.sql.expression import Executable

from stoker.store.models import UTCDateTime, naive_utc


def execute_many(conn: Connection, stmt: Executable, rows: list[dict[str, Any]],
                 column_of: Callable[[str], Column | None]) -> None:
    """Run ``stmt`` once per row; a row's keys are the statement's parameter names and
    ``column_of(name)`` is the column a parameter writes (None: a constant of the statement)."""
    string, positional, names, fills = _plan(stmt, conn.dialect, frozenset(rows[0]), column_of)
    params = [[row[name] if fill is None else fill() for name, fill, _ in fills] for row in rows]
    for index, (_, _, convert) in enumerate(fills):
        if convert is not None:
            for values in params:
                values[index] = convert(values[index])
    if positional:
        conn.exec_driver_sql(string, [tuple(values) for values in params])
    else:
        conn.exec_driver_sql(string, [dict(zip(names, values)) for values in params])


@lru_cache(maxsize=256)
def insert_of(table: Table, keys: tuple[str, ...]) -> Executable:
    """The INSERT of rows with these keys (one object per kind of row, so its plan is kept)."""
    return insert(table).values({k: bindparam(k) for k in keys})


@lru_cache(maxsize=256)
def _plan(stmt: Executable, dialect: Dialect, given: frozenset, column_of: Callable[[str], Column | None]) -> tuple:
    """(SQL, positional?, parameter names, each one's (name, default or None, converter)) of ``stmt``."""
    compiled = stmt.compile(dialect=dialect)
    names = list(compiled.positiontup) if compiled.positional else list(compiled.binds)
    fills = []
    for name in names:
        column = column_of(name)
        convert = _converter(column, dialect.name) if column is not None else None
        if name in given:
            fills.append((name, None, convert))
        else:  # a constant of the statement, or a column the rows leave to its default
            fills.append((name, _default(column, compiled.params.get(name)), convert))
    return compiled.string, compiled.positional, names, fills


def _default(column: Column | None, constant: Any) -> Callable[[], Any]:
    default = getattr(column, "default", None)
    if default is None:
        return lambda: constant
    if default.is_callable:
        return lambda: default.arg(None)  # SQLAlchemy wraps a zero-argument default to take a context
    return lambda: default.arg


def _converter(column: Column, dialect: str) -> Callable[[Any], Any] | None:
    """What turns a value of ``column`` into the driver's value (None: it is one already)."""
    if isinstance(column.type, JSON):
        return _json_text  # None too: SQLAlchemy stores it as JSON's null
    if isinstance(column.type, UTCDateTime):
        return _sqlite_time if dialect == "sqlite" else naive_utc
    return None


def _json_text(value: Any) -> str:
    """``json.dumps``, minus the encoder for the empty maps and lists most JSON columns hold (a
    deployment's instances: runtime properties, scaling groups)."""
    if isinstance(value, dict) and not value:
        return "{}"
    if isinstance(value, list) and not value:
        return "[]"
    return json.dumps(value)


def _sqlite_time(value: datetime | None) -> str | None:
    """As SQLAlchemy's SQLite dialect stores a DATETIME (and reads it back)."""
    return None if value is None else naive_utc(value).isoformat(" ", "microseconds")
