"""A validator for cron expressions, so ``cron_expression`` needs no dependency.

It accepts what Heat's (croniter-based) check accepts in practice:
5 fields (minute hour day-of-month month day-of-week), a 6th for seconds and
a 7th for the year; ``*``, numbers, ``a-b`` ranges, ``/step``, ``,`` lists,
month and day names, ``?`` for either day field, ``L`` and ``<n>W`` in the
day of month, ``<day>#<n>`` in the day of week, and the ``@daily``-style
shortcuts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_SHORTCUTS = {"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"}
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_DAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
_NUMBER = re.compile(r"[0-9]+")


@dataclass(frozen=True)
class _Field:
    name: str
    low: int
    high: int
    names: tuple[str, ...] = ()
    first_name: int = 0  # the number the first name stands for

    def number(self, text: str) -> int:
        text = text.lower()
        if text in self.names:
            return self.names.index(text) + self.first_name
        if not _NUMBER.fullmatch(text):
            raise ValueError(f'"{text}" is not a valid {self.name}')
        value = int(text)
        if not self.low <= value <= self.high:
            raise ValueError(f"{self.name} {value} is out of range ({self.low}-{self.high})")
        return value


_MINUTE = _Field("minute", 0, 59)
_HOUR = _Field("hour", 0, 23)
_DAY_OF_MONTH = _Field("day of month", 1, 31)
_MONTH = _Field("month", 1, 12, _MONTHS, 1)
_DAY_OF_WEEK = _Field("day of week", 0, 7, _DAYS, 0)
_SECOND = _Field("second", 0, 59)
_YEAR = _Field("year", 1970, 2099)
_FIELDS = (_MINUTE, _HOUR, _DAY_OF_MONTH, _MONTH, _DAY_OF_WEEK, _SECOND, _YEAR)


def check_cron(expression: str) -> None:
    """Raise ``ValueError`` saying what is wrong with ``expression``."""
    if not isinstance(expression, str):
        raise ValueError("a cron expression must be a string")
    fields = expression.split()
    if len(fields) == 1 and fields[0].lower() in _SHORTCUTS:
        return
    if len(fields) not in (5, 6, 7):
        raise ValueError(f"a cron expression has 5, 6 or 7 fields, not {len(fields)}")
    for text, field in zip(fields, _FIELDS):
        if text == "?" and field in (_DAY_OF_MONTH, _DAY_OF_WEEK):
            continue
        for item in text.split(","):
            _check_item(item, field)


def _check_item(item: str, field: _Field) -> None:
    base, slash, step = item.partition("/")
    if slash and not (_NUMBER.fullmatch(step) and int(step) > 0):
        raise ValueError(f'"{item}": the step of a {field.name} must be a positive number')
    if base == "*":
        return
    if not slash and _special_day(base.upper(), field):
        return
    start, dash, end = base.partition("-")
    field.number(start)
    if dash:
        field.number(end)


def _special_day(text: str, field: _Field) -> bool:
    """``L``/``<n>W`` (day of month) and ``<day>#<n>`` (day of week)."""
    if field is _DAY_OF_MONTH and (text == "L" or text.endswith("W")):
        if text != "L":
            field.number(text[:-1])
        return True
    if field is _DAY_OF_WEEK and "#" in text:
        day, _, nth = text.partition("#")
        field.number(day)
        if nth not in ("1", "2", "3", "4", "5"):
            raise ValueError(f'"{text}": the week of the month must be 1 to 5')
        return True
    return False
