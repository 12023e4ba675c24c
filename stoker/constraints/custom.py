"""The registry of custom constraints (``custom_constraint: <name>``).

A check can be registered in three forms, all adapted to ``CustomCheck``:

* a callable ``value -> bool``, or one that raises ``ValueError`` (or any
  exception) with the reason when the value is invalid;
* a Heat-style object or class with ``validate(value, context) -> bool``,
  and optionally ``error(value)`` for the message and ``message`` for the
  rule in words;
* a Heat-style ``BaseCustomConstraint`` subclass that only implements
  ``validate_with_client(client, value)``: Stoker has no cloud clients, so it
  is called with ``client=None`` and an exception means invalid.

The generic constraints Heat ships (``ip_addr``, ``cron_expression`` ...)
are registered on import, and so are Heat's service constraints
(``nova.flavor`` ...), which accept every value (``services.py``).
"""

from __future__ import annotations

from typing import Any

from stoker.constraints.common import COMMON_CHECKS
from stoker.constraints.services import SERVICE_CONSTRAINTS, Unchecked


class CustomCheck:
    """A registered check, whatever form it was registered in."""

    def __init__(self, name: str, check: Any):
        if isinstance(check, type):
            check = check()
        if not (callable(check) or hasattr(check, "validate")
                or hasattr(check, "validate_with_client")):
            raise TypeError(f"custom constraint {name!r}: {check!r} is neither callable "
                            "nor has a validate method")
        self.name = name
        self.check = check
        #: the rule in words (no value), when the check provides one
        self.message: str | None = getattr(check, "message", None) or None
        #: does the check take Heat's client form only?  (Known once: its class does not change.)
        self.uses_client = _uses_client(check)

    def error(self, value: Any, context: Any = None) -> str | None:
        """Why ``value`` is invalid, or None when it is valid."""
        check = self.check
        try:
            if self.uses_client:
                check.validate_with_client(None, value)
                return None
            if hasattr(check, "validate"):
                if check.validate(value, context):
                    return None
                describe = getattr(check, "error", None)
                return describe(value) if callable(describe) else self._generic(value)
            result = check(value)
        except Exception as exc:  # any failure of a plug-in's check means "invalid"
            return f"Error validating value '{value}': {exc}"
        return None if result is None or result else self._generic(value)

    def _generic(self, value: Any) -> str:
        return f'"{value}" does not validate {self.name}'


def _uses_client(check: Any) -> bool:
    """Heat's base class implements ``validate`` by calling
    ``validate_with_client``; subclasses that do not override ``validate``
    only have the client form."""
    if not hasattr(check, "validate_with_client"):
        return False
    owner = next((k for k in type(check).__mro__ if "validate" in vars(k)), None)
    return owner is None or owner.__name__ == "BaseCustomConstraint"


_REGISTRY: dict[str, CustomCheck] = {}


def register(name: str, check: Any) -> None:
    """Register (or replace) the custom constraint ``name``."""
    _REGISTRY[name] = CustomCheck(name, check)


def get(name: str) -> CustomCheck | None:
    return _REGISTRY.get(name)


def is_unchecked(name: str) -> bool:
    """Is ``name`` one of Heat's service constraints that no plug-in checks here?"""
    check = _REGISTRY.get(name)
    return check is not None and getattr(check.check, "unchecked", False)


def names() -> list[str]:
    return sorted(_REGISTRY)


for _name, _check in COMMON_CHECKS.items():
    register(_name, _check)
for _name in SERVICE_CONSTRAINTS:
    register(_name, Unchecked(_name))
