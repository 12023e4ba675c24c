"""The stack context the engine gives functions: resources answer for real."""

from __future__ import annotations

from typing import Any, Protocol

from stoker.errors import ResourcePending
from stoker.template.stack_context import StackContext


class LiveStack(Protocol):
    """What the context reads of a running stack (``engine/stack.py``'s ``Stack``)."""

    definition: Any
    resources: dict[str, Any]


class EngineContext(StackContext):
    """Answers ``get_resource``/``get_attr`` from the live resources of ``stack``."""

    def __init__(self, stack: LiveStack, **kwargs: Any):
        super().__init__(**kwargs)
        self.runtime = stack
        #: a create preview: ``get_resource`` of a resource not made yet gives its name, as in Heat
        #: (a resource without a physical id is referred to by its name)
        self.previewing = False

    def resource_enabled(self, name: str) -> bool:
        definition = self.runtime.definition
        resource = definition.resources.get(name) if definition else None
        return resource is not None and definition.enabled(resource.condition)

    def resource_ready(self, name: str) -> bool:
        resource = self.runtime.resources.get(name)
        return resource is not None and resource.action != resource.INIT

    def _resource(self, name: str):
        """The live resource; ``ResourcePending`` while it has never been created."""
        if not self.resource_ready(name):
            raise ResourcePending(name)
        return self.runtime.resources[name]

    def resource_reference(self, name: str) -> Any:
        if self.previewing and not self.resource_ready(name):
            return name
        return self._resource(name).FnGetRefId()

    def resource_attribute(self, name: str, attribute: str, path: list | tuple = ()) -> Any:
        return self._resource(name).FnGetAtt(attribute, *path)

    def resource_all_attributes(self, name: str) -> dict:
        return self._resource(name).all_attributes()
