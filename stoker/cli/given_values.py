"""Values given on the command line held to the template limits, for blueprints and templates alike.

Deployment inputs and workflow parameters (``-i``, ``-p``) and a template's
parameters (``-P``, ``--parameter-file``, an environment's ``parameters``) are
as hostile as a template: a file is read as a template is (``max_template_size``,
``max_nesting``), and every value is measured (``max_value_size``) and checked
for depth, a text holding JSON included, before anything parses or walks it.
"""

from __future__ import annotations

import re
from typing import Any

from stoker.errors import Problem, ValidationFailed
from stoker.functions.sizes import ValueTooLarge, check_stored
from stoker.limits import limit
from stoker.template.loader import check_nesting, load, read_file

#: ``KEY=VALUE`` (never tried as a path, whatever its length)
_KEY_VALUE = re.compile(r"\s*[A-Za-z_][\w.\-]*\s*=")


def is_key_value(item: str) -> bool:
    return _KEY_VALUE.match(item) is not None


def read_document(path: str) -> Any:
    """The YAML or JSON document in file ``path``, bounded as a template is (``ValidationFailed`` if not)."""
    return load(read_file(path), path)


def bounded(values: dict, option: str) -> dict:
    """``values`` if each is within ``max_value_size`` and ``max_nesting``, else ``ValidationFailed`` naming it."""
    most = limit("max_nesting")
    for key, value in values.items():
        where = f"{option} {key}"
        if isinstance(value, str) and _json_depth_over(value, most):
            raise ValidationFailed([Problem((), "too-deep", f"{where}: the value is nested more than {most} "
                                            "levels deep (max_nesting)")])
        check_nesting(value, where)
        _measured(value, where)
    _measured(values, option)
    return values


def _measured(value: Any, where: str) -> None:
    try:
        check_stored(value, where)
    except ValueTooLarge as exc:
        raise ValidationFailed([Problem((), exc.code, str(exc))]) from None


def _json_depth_over(text: str, most: int) -> bool:
    """Whether ``text`` opens more than ``most`` brackets at once (outside quoted strings)."""
    if text.count("[") + text.count("{") <= most:
        return False
    depth, quoted, escaped = 0, False, False
    for char in text:
        if quoted:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                quoted = False
        elif char == '"':
            quoted = True
        elif char in "[{":
            depth += 1
            if depth > most:
                return True
        elif char in "]}":
            depth -= 1
    return False
