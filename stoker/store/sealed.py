"""Which stored fields may hold sealed (encrypted) values, and opening them as rows are read.

The engine seals the inputs and resource fields of stacks holding hidden
values (``stoker/engine/sealing.py``); every read of the store opens them
here, so nothing above the store ever sees a sealed marker.  Rows are
detached from their session when opened: the clear values are never
written back.
"""

from __future__ import annotations

from typing import Any

from stoker.secretbox import MARK, unseal

#: environment sections whose values are sealed one by one
ENV_SECTIONS = ("parameters", "parameter_defaults")
#: resource columns sealed whole
RESOURCE_FIELDS = ("properties_data", "data", "rsrc_metadata")


def opened_stack(stack: Any) -> Any:
    if stack.parameters:
        stack.parameters = opened_values(stack.parameters)
    if stack.environment:
        stack.environment = {section: opened_values(value) if section in ENV_SECTIONS and isinstance(value, dict)
                             else value for section, value in stack.environment.items()}
    return stack


def opened_values(values: dict) -> dict:
    return {name: unseal(value) for name, value in values.items()}


def opened_resource(row: Any) -> Any:
    for field in RESOURCE_FIELDS:
        value = getattr(row, field)
        if isinstance(value, dict) and MARK in value:
            setattr(row, field, unseal(value))
    return row
