"""Small helpers several built-in types share."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Callable
from urllib.parse import quote

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


def signal_url(resource: Any) -> str:
    """Where a resource is signalled: its API URL when the stack lives in a ``stoker api``
    server, else a ``stoker://`` URL naming it (for the ``stoker`` command)."""
    stack = resource.stack
    path = (f"stacks/{quote(stack.name, safe='')}/{stack.id}/resources/"
            f"{quote(resource.name, safe='')}/signal")
    engine = getattr(stack, "engine", None)
    api_url = getattr(engine, "api_url", None)
    if api_url:
        return f"{api_url}/v1/{quote(engine.project_id, safe='')}/{path}"
    return f"stoker://{path}"


def software_store(resource: Any) -> Any:
    """The software configs and deployments of the resource's project (the API's tables,
    in the stack's own database), or None for a stack kept in no database."""
    store = getattr(resource.stack, "store", None)
    if store is None or getattr(store, "engine", None) is None:
        return None
    from stoker.store.software import SoftwareStore  # only the software types need it

    return SoftwareStore(store.engine).for_project(resource.stack.project_id)
