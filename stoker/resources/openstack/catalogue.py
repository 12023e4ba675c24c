"""The schema data of Heat's resource types, read once, on first use.

The data file is facts extracted from Heat by ``scripts/openstack-schemas``; reading it costs a
few milliseconds, paid only by the first command that meets a type Stoker has no plug-in for.
"""

from __future__ import annotations

import functools
import json
from importlib import resources as package_files
from typing import Any

DATA_FILE = "heat_types.json"


@functools.cache
def _document() -> dict:
    text = package_files.files(__package__).joinpath(DATA_FILE).read_text(encoding="utf-8")
    return json.loads(text)


def names() -> list[str]:
    return sorted(_document()["types"])


def entry(type_name: str) -> dict[str, Any] | None:
    """The schema data of ``type_name``, None when Heat does not register it."""
    return _document()["types"].get(type_name) if isinstance(type_name, str) else None
