"""Small helpers several built-in types share."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Callable

from stoker.errors import ResourcePending


def unless_pending(validate: Callable[[Any], None]) -> Callable[[Any], None]:
    """Wrap a ``validate`` that reads properties: skip it while a value still
    needs a resource that does not exist yet (the type checks again when it acts)."""

    def wrapper(self: Any) -> None:
        try:
            validate(self)
        except ResourcePending:
            pass

    wrapper.__doc__ = validate.__doc__
    wrapper.__name__ = validate.__name__
    return wrapper


def given(resource: Any, name: str) -> Any:
    """Property ``name`` as the template gives it, None when left out.

    ``properties[name]`` cannot tell: a property left out reads as its
    default or its type's empty value.
    """
    data = resource.properties.data
    return data.get(name) if isinstance(data, Mapping) else None
