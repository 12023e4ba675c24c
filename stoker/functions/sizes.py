"""How big a value is, measured without walking more of it than the limit.

Function results and stored values are capped at ``max_value_size`` (bytes
of the value as JSON, roughly): ``repeat`` over three 200-item lists would
otherwise build 8 million entries, and a value that big made every later
``stack show`` slow.  Functions that multiply their input estimate their
result *before* building it (``bounded_product``); every other building
function's result is measured as soon as it exists (``measure``), so a chain
of doublings stops at twice the limit, never at 2**n.

Values that already exist elsewhere (a parameter, an attribute, a file) are
measured once per resolution and remembered by identity, so a big value
referenced a thousand times is walked once, not a thousand times.
"""

from __future__ import annotations

import threading
from typing import Any

from stoker.errors import RESULT_TOO_LARGE, VALUE_TOO_LARGE, FunctionError, StokerError
from stoker.limits import limit

_local = threading.local()


def value_size(value: Any, budget: int) -> int:
    """About how many bytes ``value`` takes as JSON; stops counting once over ``budget``."""
    known = getattr(_local, "known", None) or {}
    total = 0
    pending = [value]
    while pending:
        item = pending.pop()
        kind = type(item)
        if kind is str:
            total += len(item) + 2
        elif kind is dict or kind is list or isinstance(item, (dict, list)):
            seen = known.get(id(item))
            if seen is not None:
                total += seen[1]
            elif kind is dict or isinstance(item, dict):
                total += 2 + len(item)
                for key, child in item.items():
                    total += len(key) + 3 if type(key) is str else 8
                    pending.append(child)
            else:
                total += 2 + len(item)
                pending.extend(item)
        else:
            total += 8
        if total > budget:
            return total
    return total


class _Scope:
    """A ``remembering`` block (a class, not a generator: one is entered for every value resolved)."""

    def __init__(self, owner: bool):
        self.owner = owner

    def __enter__(self) -> None:
        if self.owner:
            _local.known, _local.most = {}, None  # the limit is read once per resolution, when first needed

    def __exit__(self, *exc: Any) -> None:
        if self.owner:
            _local.known = _local.most = None


_OUTERMOST, _INNER = _Scope(owner=True), _Scope(owner=False)


def remembering() -> _Scope:
    """Within: sizes of existing values are remembered by identity (the outermost block owns it)."""
    return _INNER if getattr(_local, "known", None) is not None else _OUTERMOST


def _most() -> int:
    most = getattr(_local, "most", None)
    if most is None:
        most = limit("max_value_size")
        if getattr(_local, "known", None) is not None:
            _local.most = most
    return most


def measured(value: Any) -> int:
    """``value_size`` up to just over the limit (all a check needs to know)."""
    return value_size(value, _most())


def remember(value: Any) -> None:
    """Measure an existing value once; later walks through it add its size without descending."""
    known = getattr(_local, "known", None)
    if known is not None and isinstance(value, (dict, list)) and id(value) not in known:
        known[id(value)] = (value, value_size(value, _most()))  # kept alive: its id stays its own


def too_large(what: str, size: int | str, most: int) -> str:
    return f"{what} would be {size} bytes or more, over the limit of {most} bytes (max_value_size)"


class ValueTooLarge(StokerError):
    code = VALUE_TOO_LARGE


def check_stored(value: Any, what: str) -> Any:
    """``value``, if it is not over ``max_value_size``: what is stored is read again by every show."""
    most = limit("max_value_size")
    size = value_size(value, most)
    if size > most:
        raise ValueTooLarge(too_large(what, size, most))
    return value


def measure(fn: Any, result: Any) -> None:
    """Refuse a function's result over ``max_value_size``."""
    most = _most()
    if type(result) is str:
        size = len(result)
    elif isinstance(result, (dict, list)):
        size = value_size(result, most)
    else:
        return
    if size > most:
        raise FunctionError(too_large(f'The result of "{fn.name}"', size, most), RESULT_TOO_LARGE, fn.path)


def within_limit(size: int) -> bool:
    """Is ``size`` bytes within ``max_value_size``?"""
    return size <= _most()


def bounded_product(fn: Any, count: int, each: int) -> None:
    """Before building ``count`` pieces of about ``each`` bytes: refuse if that is over the limit."""
    most = _most()
    if count * each > most:
        raise FunctionError(too_large(f'The result of "{fn.name}" ({count} pieces of about {each} bytes)',
                                      count * each, most), RESULT_TOO_LARGE, fn.path)
