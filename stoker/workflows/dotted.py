"""Dotted paths into runtime properties, as Cloudify's ctx reads them.

``a.b[2].c`` walks dicts by key and lists by index.  Reading a path that is
not there is an error (the ``ctx`` command exits non-zero, as Cloudify's
does); writing creates the dicts on the way.  A path given as a list is taken
literally, one key per item, so a key that holds a dot can still be reached.
"""

from __future__ import annotations

import re
from typing import Any

_INDEXED = re.compile(r"^(.+)\[(\d+)\]$")


class PathError(LookupError):
    """The path does not lead to a value."""


def steps(path: str | list) -> list:
    """The keys and indexes of ``path``."""
    if isinstance(path, list):
        if not path or not all(isinstance(p, (str, int)) and not isinstance(p, bool) for p in path):
            raise PathError(f"illegal path: {path!r}")
        return list(path)
    if not isinstance(path, str) or not path:
        raise PathError(f"illegal path: {path!r}")
    out: list = []
    for segment in path.split("."):
        match = _INDEXED.match(segment)
        if match:
            out.extend((match.group(1), int(match.group(2))))
        elif segment:
            out.append(segment)
        else:
            raise PathError(f"illegal path: {path}")
    return out


def get(data: dict, path: str | list) -> Any:
    current: Any = data
    for step in steps(path):
        try:
            if isinstance(step, int) and isinstance(current, list):
                current = current[step]
            elif isinstance(current, dict) and not isinstance(step, int):
                current = current[step]
            else:
                raise KeyError(step)
        except (KeyError, IndexError):
            raise PathError(f"illegal path: {_show(path)}") from None
    return current


def set(data: dict, path: str | list, value: Any) -> None:  # noqa: A001 - the verb ctx users know
    keys = steps(path)
    current: Any = data
    for step in keys[:-1]:
        if isinstance(step, int):
            if not isinstance(current, list) or not -len(current) <= step < len(current):
                raise PathError(f"illegal path: {_show(path)}")
            current = current[step]
        elif isinstance(current, dict):
            current = current.setdefault(step, {})
        else:
            raise PathError(f"illegal path: {_show(path)}")
    last = keys[-1]
    if isinstance(last, int):
        if not isinstance(current, list) or not -len(current) <= last < len(current):
            raise PathError(f"illegal path: {_show(path)}")
    elif not isinstance(current, dict):
        raise PathError(f"illegal path: {_show(path)}")
    current[last] = value


def _show(path: str | list) -> str:
    return path if isinstance(path, str) else ".".join(map(str, path))
