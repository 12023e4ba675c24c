"""A stand-in for the engine's stack, for driving resources in tests.

A resource only needs a few things from its stack: a name and id, a way to
persist its state (``persist`` on each state change, ``durable`` when it must be on disk first; ``persist_soon``
for data and ids) and the reason a cancelled action gives.  ``FakeStack``
records what it was asked to persist so tests can check the state history.
"""

from __future__ import annotations

import asyncio
from typing import Any

from stoker.resources.exceptions import UpdateReplace
from stoker.resources.resource import Resource
from stoker.resources.stepper import RUN_TO_END
from stoker.template.definition import ResourceDefinition


class FakeStack:
    def __init__(self, name: str = "test-stack", id: str = "f00dfeed-0000-4000-8000-000000000001"):
        self.name = name
        self.id = id
        self.cancel_reason: str | None = None
        self.handing_back = False
        self.root = self  # a top stack, as the real one's ``root``
        self.driver = RUN_TO_END  # its resources' actions run to their end, as in-process
        #: (resource name, action, status, reason) of every persisted state
        self.states: list[tuple[str, str, str, str]] = []
        self.soon: list[str] = []

    async def persist(self, resource: Resource, event: bool = True, durable: bool = False) -> None:
        self.states.append((resource.name, resource.action, resource.status,
                            resource.status_reason))

    def persist_soon(self, resource: Resource) -> None:
        asyncio.get_running_loop()  # as the real stack: only on the event loop's thread
        self.soon.append(resource.name)


def make(cls: type[Resource], properties: dict | None = None, name: str = "res",
         stack: FakeStack | None = None, type_name: str = "Test::Type") -> Resource:
    """A resource of plug-in class ``cls`` in a (new) fake stack, not yet created."""
    definition = ResourceDefinition(name=name, type=type_name, properties=dict(properties or {}))
    return cls(name, definition, stack if stack is not None else FakeStack())


def run(coro: Any) -> Any:
    return asyncio.run(coro)


async def create(resource: Resource) -> None:
    """Create ``resource`` as the engine does: properties checked first."""
    resource.prepare_properties()
    await resource.create()


async def update(resource: Resource, new_properties: dict) -> str:
    """Update ``resource`` to ``new_properties`` as the engine decides:
    "unchanged", "updated" (in place) or "replace" (the engine would replace it)."""
    definition = ResourceDefinition(name=resource.name, type=resource.t.type,
                                    properties=dict(new_properties))
    new_props = resource.build_properties(definition.properties)
    new_props.validate()
    plan = resource.plan_update(definition, new_props)
    if plan is None:
        resource.t = definition
        return "unchanged"
    if plan.replace:
        return "replace"
    try:
        await resource.update(definition, new_props, plan.tmpl_diff, plan.prop_diff)
    except UpdateReplace:
        return "replace"
    return "updated"
