"""Entry points of the installed distributions, read without ``importlib.metadata``.

Every command looks for plug-ins that packages declare; importing
``importlib.metadata`` for it (with ``email``, ``zipfile``, ``csv``,
``tempfile``...) cost each command ~30 ms.  This reads the same files:
``entry_points.txt`` in the ``*.dist-info`` / ``*.egg-info`` folders of the
``sys.path`` directories, the first distribution of a name winning, as
``importlib.metadata`` does.
"""

from __future__ import annotations

import importlib
import os
import re
import sys
from configparser import ConfigParser, Error
from typing import Any, Iterator

METADATA_DIRS = (".dist-info", ".egg-info")


def entry_points(group: str) -> Iterator[tuple[str, str]]:
    """``(name, value)`` of every entry point in ``group``."""
    seen: set[str] = set()
    for folder in sys.path:
        try:
            names = sorted(os.listdir(folder or "."))
        except OSError:
            continue
        for name in names:
            if not name.endswith(METADATA_DIRS):
                continue
            distribution = _normalized(name.rsplit(".", 1)[0].split("-", 1)[0])
            if distribution in seen:
                continue
            seen.add(distribution)
            yield from _group(os.path.join(folder or ".", name, "entry_points.txt"), group)


def load(value: str) -> Any:
    """What ``module.path:attribute.path [extras]`` names."""
    module, _, attribute = value.split("[", 1)[0].strip().partition(":")
    found = importlib.import_module(module.strip())
    for part in filter(None, attribute.strip().split(".")):
        found = getattr(found, part)
    return found


def _group(path: str, group: str) -> list[tuple[str, str]]:
    try:
        with open(path, encoding="utf-8") as file:
            text = file.read()
    except OSError:
        return []
    if f"[{group}]" not in text:  # most distributions: no need to parse (ConfigParser's first use costs ~15 ms)
        return []
    parser = ConfigParser(delimiters=("=",), interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # names keep their case
    try:
        parser.read_string(text, path)
    except Error:
        return []  # a broken file: importlib.metadata would not list it either
    return list(parser.items(group)) if parser.has_section(group) else []


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()
