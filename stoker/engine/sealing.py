"""Hidden values encrypted before they reach the database, as Heat's
``encrypt_parameters_and_properties`` does.

A stack whose tree has a hidden parameter with a value has *every* parameter
value, environment parameter value and resource JSON field (properties,
data, metadata) sealed with ``stoker.secretbox``: which property was derived
from a hidden value cannot be known in general (``str_replace``, ``yaql``,
a nested stack's parameters), so all of them are.  Stacks without hidden
values are stored as before, at no cost.  The store opens sealed values as
it reads them (``stoker/store/sealed.py``), so readers never see a marker.
"""

from __future__ import annotations

from typing import Any

from stoker.secretbox import seal
from stoker.store.edits import DataEdits
from stoker.store.sealed import ENV_SECTIONS, RESOURCE_FIELDS


def has_secrets(stack: Any) -> bool:
    """Does this stack, or the tree it belongs to, hold a hidden value?"""
    return bool(stack.redact_list())


def stored_inputs(stack: Any, parameters: dict | None, environment: dict | None) -> tuple[dict, dict]:
    """A stack's parameters and environment as they may be stored."""
    if has_secrets(stack):
        return seal_values(parameters), seal_environment(environment)
    return dict(parameters or {}), dict(environment or {})


def seal_values(values: dict | None) -> dict:
    """A map with each value sealed (the names stay readable: they are in the template)."""
    return {name: seal(value) for name, value in (values or {}).items()}


def seal_environment(environment: dict | None) -> dict:
    env = dict(environment or {})
    for section in ENV_SECTIONS:
        if env.get(section):
            env[section] = seal_values(env[section])
    return env


def stored_resource_fields(stack: Any, fields: dict) -> dict:
    """A resource write as it may be stored: its JSON fields sealed whole when the stack
    holds secrets (state columns stay readable)."""
    if not has_secrets(stack):
        return fields
    return {key: _sealed(value) if key in RESOURCE_FIELDS else value for key, value in fields.items()}


def _sealed(value: Any) -> Any:
    """A field sealed whole; data edits, their result once made on the stored data."""
    return value.sealed() if isinstance(value, DataEdits) else seal(value)
