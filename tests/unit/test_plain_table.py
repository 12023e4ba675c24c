"""The plain-text table is character for character what rich prints, or it leaves the table to rich."""

from __future__ import annotations

import io
import random
import string

import pytest
from rich.console import Console
from rich.table import Table
from rich.text import Text

from stoker.cli.plain_table import WIDTH, plain_table


def drawn_by_rich(columns: list[str], rows: list[list[str]]) -> str:
    """As ``stoker.cli.formatting`` has rich print it into a pipe."""
    out = io.StringIO()
    table = Table(*columns, show_lines=False)
    for column in table.columns:
        column.overflow = "fold"
    for row in rows:
        table.add_row(*(Text(cell) for cell in row))
    Console(file=out, soft_wrap=True, width=WIDTH, color_system=None).print(table)
    return out.getvalue().rstrip("\n")


def test_a_record_table_is_drawn_as_rich_draws_it():
    rows = [["id", "9b7a981c"], ["stack_status", "CREATE_COMPLETE"], ["parent", ""],
            ["parameters", '{"OS::stack_name": "s"}']]
    assert plain_table(["Field", "Value"], rows) == drawn_by_rich(["Field", "Value"], rows)


def test_an_empty_list_is_drawn_as_rich_draws_it():
    assert plain_table(["a", "bb"], []) == drawn_by_rich(["a", "bb"], [])


def test_random_tables_are_drawn_as_rich_draws_them():
    chance = random.Random(13)
    compared = 0
    for _ in range(400):
        width = chance.randint(1, 5)
        columns = [f"c{i}_{chance.choice(string.ascii_letters)}" for i in range(width)]
        rows = [["".join(chance.choices(string.printable[:94] + " ", k=chance.choice([0, 3, 20, 70])))
                 for _ in range(width)] for _ in range(chance.randint(0, 5))]
        plain = plain_table(columns, rows)
        if plain is not None:
            assert plain == drawn_by_rich(columns, rows), (columns, rows)
            compared += 1
    assert compared > 200


@pytest.mark.parametrize("cell", ["two\nlines", "tab\there", "café", " padded", "x" * WIDTH])
def test_what_rich_would_wrap_or_change_is_left_to_rich(cell):
    assert plain_table(["Field", "Value"], [["k", cell]]) is None
