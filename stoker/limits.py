"""The bounds on the work one request may cause, each under the name its refusal shows.

A limit is read from ``STOKER_<NAME>`` (e.g. ``STOKER_MAX_NESTING``), else from
``[limits] <name>`` in ``$STOKER_HOME/stoker.conf``, else its default here; the
API's resource limit from ``[api] max_resources_per_stack`` (Heat's default).
A bad value, or an unknown key under ``[limits]``, is refused naming the
variable or the file, section and key.
"""

from __future__ import annotations

import configparser
import os
import time

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
    #: bytes of a blueprint's files, packed (an upload) or unpacked (Cloudify's blueprint_folder_max_size_mb)
    "max_blueprint_size": 50 * 1000 * 1000,
    #: files in one blueprint's folder or archive (Cloudify's blueprint_folder_max_files)
    "max_blueprint_files": 10_000,
    #: bytes of a blueprint's icon (``cfy blueprints set-icon``), a PNG image
    "max_blueprint_icon_size": 1000 * 1000,
    #: bytes of a typed secret's JSON Schema (``cfy secrets create --schema``), as JSON text
    "max_secret_schema_size": 64 * 1024,
    #: bytes of a whole-server backup (``stoker backup``, ``cfy snapshots``), packed (an upload) or unpacked
    "max_backup_size": 1000 * 1000 * 1000,
    #: CPU seconds one match of an author's regular expression may take (``allowed_pattern``, ``pattern``...)
    "max_pattern_seconds": 1,
}
#: Heat's max_resources_per_stack, for the shared API server
API_MAX_RESOURCES = 1000
#: the longest lifetime an API token may be given, in days (a hundred years)
MAX_TOKEN_DAYS = 36_525


class LimitSettingError(StokerError):
    code = "invalid-limit"


#: numeric settings read from the environment only (seconds, or counts)
ENV_NUMBERS = ("STOKER_MAX_NESTED_DEPTH", "STOKER_MAX_NODE_INSTANCES", "STOKER_STOP_TIMEOUT",
               "STOKER_LOCK_TIMEOUT", "STOKER_ENGINE_TIMEOUT", "STOKER_EXECUTION_TIMEOUT",
               "STOKER_PLUGIN_IMPORT_TIMEOUT")


def limit(name: str) -> int:
    """The current value of one limit."""
    variable = "STOKER_" + name.upper()
    raw = os.environ.get(variable)
    if raw is not None:
        return DEFAULTS[name] if raw == "" else _positive(variable, raw)
    raw = _configured().get(("limits", name))
    return DEFAULTS[name] if raw in (None, "") else _positive(f"{_conf_file()}: [limits] {name}", raw)


def api_max_resources() -> int:
    raw = _configured().get(("api", "max_resources_per_stack"))
    if raw in (None, ""):
        return API_MAX_RESOURCES
    return _positive(f"{_conf_file()}: [api] max_resources_per_stack", raw)


def check_settings() -> None:
    """Read every limit and numeric setting once, so that a bad one is one line before any
    work starts (``stoker`` and ``stoker api`` call it first), naming where it is set."""
    for name in DEFAULTS:
        limit(name)
    api_max_resources()
    unknown = sorted(key for section, key in _configured() if section == "limits" and key not in DEFAULTS)
    if unknown:
        raise LimitSettingError(f"{_conf_file()}: [limits] {unknown[0]} is not a limit "
                                f"(the limits are {', '.join(DEFAULTS)})")
    for variable in ENV_NUMBERS:
        raw = os.environ.get(variable)
        if raw:
            try:
                number = float(raw)
            except ValueError:
                number = 0.0
            if not number > 0:
                raise LimitSettingError(f"{variable} must be a positive number, not {raw!r}")


def _positive(where: str, raw: str) -> int:
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value <= 0:
        raise LimitSettingError(f"{where} must be a positive whole number, not {raw!r}")
    return value


def _conf_file() -> str:
    return str(stoker_home() / "stoker.conf")


#: the settings last read, from which file version, and when (the file is looked at once a second at most)
_cache: dict = {"key": None, "checked": 0.0, "settings": {}}


def _configured() -> dict:
    """(section, key) -> text from stoker.conf, read again when the file (or $STOKER_HOME) changes."""
    home = os.environ.get("STOKER_HOME", "")
    now = time.monotonic()
    if _cache["key"] is not None and _cache["key"][0] == home and now - _cache["checked"] < 1.0:
        return _cache["settings"]
    try:
        mtime = (stoker_home() / "stoker.conf").stat().st_mtime
    except OSError:
        mtime = 0.0
    if _cache["key"] != (home, mtime):
        try:
            parser = config()
        except configparser.Error as exc:
            raise LimitSettingError(f"{_conf_file()}: {str(exc).splitlines()[0]}") from None
        _cache["settings"] = {(section, key): value for section in ("limits", "api")
                              if parser.has_section(section) for key, value in parser.items(section, raw=True)}
        _cache["key"] = (home, mtime)
    _cache["checked"] = now
    return _cache["settings"]
