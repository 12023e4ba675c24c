"""A group's nested stack brought to its members in stages (batches), with pauses between them.

``OS::Heat::ResourceGroup`` (``batch_create``, ``rolling_update``) and
``OS::Heat::AutoScalingGroup`` (``rolling_updates``) plan a list of stages,
each the members (name, definition) the nested stack holds after it, and the
seconds to pause before it.  In-process the stages run here one after the
other, the pauses slept.  On the workers nothing waits in a worker slot: the
plan is stored in the resource's data, the first stage starts on the workers,
and each poll of the resource moves the plan on once the nested stack's
action has ended and the pause has passed.  The pause's end is stored as a
moment of the database's clock, the one clock all workers share.

A worker lost mid-plan leaves it to the redelivered poll: a stage is marked
started only after its nested action started, so the poll after a loss at
worst applies that stage again, a nested update to the template the nested
stack already has, which replaces nothing a second time.
"""

from __future__ import annotations

import abc
import asyncio
import json
from typing import Any, Callable

#: resource data key of a plan on the workers: its definitions, its stages, the next one, a pause's end
STAGES_KEY = "stoker:stages"

Members = list[tuple[str, Any]]
#: (seconds to pause before the stage, the members after it)
Stage = tuple[float, Members]


class StagedNested(abc.ABC):
    """Mixed into a group (before ``NestedStackResource``) whose nested stack changes in stages."""

    @abc.abstractmethod
    async def apply_stage(self, members: Members, create: bool = False) -> Any:
        """Make the nested stack (``create``: a new one) hold exactly ``members``; on the workers,
        returning the id to poll (as ``create_child`` / ``update_child``)."""

    async def stages_ended(self) -> None:
        """What the group records once its last stage has ended."""

    async def run_stages(self, stages: list[Stage], create: bool = False) -> Any:
        """All ``stages`` (the first a create when ``create``): here, one after the other; on the
        workers, the first started and the plan stored, returning the id to poll (the dispatcher
        chooses, ``nested_action``)."""
        self.forget_stages()

        async def here() -> None:
            for number, (pause, members) in enumerate(stages):
                if pause:
                    await asyncio.sleep(pause)
                await self.apply_stage(members, create and number == 0)
            await self.stages_ended()

        async def apart() -> Any:
            self.data_set(STAGES_KEY, _plan(stages))
            return await self.apply_stage(stages[0][1], create)

        return await self.stack.engine.dispatch.nested_action(here, apart)

    def forget_stages(self) -> None:
        """Drop the plan left by a run that failed; writes nothing when there is none (in-process)."""
        if STAGES_KEY in self._data:
            self.data_delete(STAGES_KEY)

    async def check_create_complete(self, token: Any) -> bool:
        return await self._poll_stages(token, super().check_create_complete)  # type: ignore[misc]

    async def check_update_complete(self, token: Any) -> bool:
        return await self._poll_stages(token, super().check_update_complete)  # type: ignore[misc]

    async def _poll_stages(self, token: Any, ended: Callable[[Any], bool]) -> bool:
        """One look at the plan: wait for the nested action, then for the pause, then start the next
        stage; with none left, ``ended`` (the nested stack's own check) decides."""
        plan = self._data.get(STAGES_KEY)
        if plan is None:
            return ended(token)
        if not self._child_action_ended(self.resource_id):
            return False
        number = plan["next"]
        if number == len(plan["stages"]):
            self.forget_stages()
            await self.stages_ended()
            return ended(self.resource_id)
        if not self._paused(plan, number):
            await self.apply_stage(_members(plan, number))
            self.data_set(STAGES_KEY, {**plan, "next": number + 1})
        return False

    def _paused(self, plan: dict, number: int) -> bool:
        """Whether stage ``number`` must still wait: its pause's end stored when first seen, then
        compared with, both by the database's clock."""
        pause = plan["stages"][number]["pause"]
        if not pause:
            return False
        now = self.stack.engine.store.clock()
        if plan["resume"] is None or plan["resume"][0] != number:
            self.data_set(STAGES_KEY, {**plan, "resume": [number, now + pause]})
            return True
        return now < plan["resume"][1]


def _plan(stages: list[Stage]) -> dict:
    """The stored plan: each distinct definition once, each stage's members as [name, its index]."""
    definitions: list = []
    index: dict[str, int] = {}
    stored = []
    for pause, members in stages:
        named = []
        for name, definition in members:
            key = json.dumps(definition, sort_keys=True)
            if key not in index:
                index[key] = len(definitions)
                definitions.append(definition)
            named.append([name, index[key]])
        stored.append({"pause": pause, "members": named})
    return {"definitions": definitions, "stages": stored, "next": 1, "resume": None}


def _members(plan: dict, number: int) -> Members:
    return [(name, plan["definitions"][at]) for name, at in plan["stages"][number]["members"]]
