"""The bounds on the work one request may cause, each under the name its refusal shows.

A limit is read from ``STOKER_<NAME>`` (e.g. ``STOKER_MAX_NESTING``), else from
``[limits] <name>`` in ``$STOKER_HOME/stoker.conf``, else its default here; the
API's resource limit from ``[api] max_resources_per_stack`` (Heat's default).
"""

from __future__ import annotations

import os
from functools import lru_cache

from stoker.errors import StokerError
from stoker.home import config, stoker_home

DEFAULTS = {
    #: levels of nesting in a document, a chain of function calls or a yaql expression
    "max_nesting": 100,
    #: Heat's max_template_size: bytes of a template, an environment, a get_file target
    "max_template_size": 512 * 1024,
    #: items (list entries, map keys, string characters) in one function result or stored value
    "max_value_size": 1_000_000,
    #: resources in one tree of stacks, in local (CLI) mode
    "max_resources": 100_000,
}
#: Heat's max_resources_per_stack, for the shared API server
API_MAX_RESOURCES = 1000


class LimitSettingError(StokerError):
    code = "invalid-limit"


def limit(name: str) -> int:
    """The current value of one limit."""
    raw = os.environ.get("STOKER_" + name.upper())
    if raw is None:
        raw = _configured(str(stoker_home()), _mtime()).get(("limits", name))
    return DEFAULTS[name] if raw in (None, "") else _positive(name, raw)


def api_max_resources() -> int:
    raw = _configured(str(stoker_home()), _mtime()).get(("api", "max_resources_per_stack"))
    return API_MAX_RESOURCES if raw in (None, "") else _positive("max_resources_per_stack", raw)


def _positive(name: str, raw: str) -> int:
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value <= 0:
        raise LimitSettingError(f"{name} must be a positive whole number, not {raw!r}")
    return value


def _mtime() -> float:
    try:
        return (stoker_home() / "stoker.conf").stat().st_mtime
    except OSError:
        return 0.0


@lru_cache(maxsize=8)
def _configured(home: str, mtime: float) -> dict:
    """(section, key) -> text from stoker.conf, read again when the file changes."""
    parser = config()
    return {(section, key): value for section in ("limits", "api") if parser.has_section(section)
            for key, value in parser.items(section, raw=True)}
