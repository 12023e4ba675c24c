"""``OS::Heat::AutoScalingGroup``: between ``min_size`` and ``max_size`` copies of one
resource, in a nested stack, resized by ``OS::Heat::ScalingPolicy`` signals.

As in Heat, members get short random names (never reused) and are ordered
oldest first: a shrink removes the oldest (failed ones before them), and
``resource.N`` is the N-th member in that order.  The order is kept in the
group's data, so it does not hang on creation times.  A stack update resizes
the group to ``desired_capacity`` (or keeps its size), and a change of the
member definition replaces members in batches (``rolling_updates``).

A scaling holds the top stack's lock; the group's metadata says
``scaling_in_progress`` meanwhile and keeps Heat's ``cooldown_end``.
"""

from __future__ import annotations

import base64
import secrets
from typing import Any

from stoker.constraints import Range
from stoker.resources.nested_stack import NESTED_INVALID, NestedStackResource, template_from_data
from stoker.errors import ResourcePending, ValidationFailed
from stoker.functions.references import select_path
from stoker.resources import attributes, properties
from stoker.resources.builtin import scaling, staged
from stoker.resources.builtin._common import given
from stoker.resources.exceptions import InvalidTemplateAttribute, NoActionRequired
from stoker.resources.support import SupportStatus
from stoker.template.template import Template

S = properties.Schema
#: resource data key: the members' names, oldest first
MEMBERS_KEY = "members"
#: resource data key: the scaling a signal started on the workers (its traversal, target size, reason, cooldown)
SCALING_KEY = "stoker:scaling"
HOT_VERSION = "2015-04-30"


def new_member_name() -> str:
    """12 lower-case characters, as Heat's short ids."""
    return base64.b32encode(secrets.token_bytes(8)).decode().lower()[:12]


class AutoScalingGroup(staged.StagedNested, NestedStackResource):
    """A group of resources that scaling policies resize within ``min_size``..``max_size``.

    Attributes: ``outputs`` and ``outputs_list`` (a member attribute, by member
    name or as a list), ``current_size``, ``refs``, ``refs_map``,
    ``resource.N`` and ``resource.N.attr``.
    """

    support_status = SupportStatus(version="2014.1")

    properties_schema = {
        "resource": S(S.MAP, "The definition of each member, as a resource in a HOT template.",
                      required=True, update_allowed=True),
        "max_size": S(S.INTEGER, "The maximum number of members.", required=True, update_allowed=True,
                      constraints=[Range(min=0)]),
        "min_size": S(S.INTEGER, "The minimum number of members.", required=True, update_allowed=True,
                      constraints=[Range(min=0)]),
        "cooldown": S(S.INTEGER, "Seconds after a scaling during which the group refuses to scale.",
                      update_allowed=True),
        "desired_capacity": S(S.INTEGER, "The number of members to create (and to return to on update).",
                              update_allowed=True),
        "rolling_updates": S(S.MAP, "How members are replaced when the member definition changes.",
                             update_allowed=True,
                             schema={
                                 "min_in_service": S(S.INTEGER, "Members kept in service meanwhile.",
                                                     default=0, constraints=[Range(min=0)]),
                                 "max_batch_size": S(S.INTEGER, "Members replaced at once.",
                                                     default=1, constraints=[Range(min=1)]),
                                 "pause_time": S(S.NUMBER, "Seconds to wait between two batches.",
                                                 default=0, constraints=[Range(min=0)]),
                             },
                             default={"min_in_service": 0, "max_batch_size": 1, "pause_time": 0}),
    }
    attributes_schema = {
        "outputs": attributes.Schema("Member name to the given member attribute.", type=attributes.Schema.MAP),
        "outputs_list": attributes.Schema("The given member attribute of every member.",
                                          type=attributes.Schema.LIST),
        "current_size": attributes.Schema("The number of members (failed ones left out).",
                                          type=attributes.Schema.INTEGER),
        "refs": attributes.Schema("The members' reference ids.", type=attributes.Schema.LIST),
        "refs_map": attributes.Schema("Member name to reference id.", type=attributes.Schema.MAP),
    }

    #: the properties holding the bounds, the size to create with and the cooldown (the AWS types name them
    #: otherwise); ``COOLDOWN`` None: the type has none
    MIN_SIZE, MAX_SIZE, DESIRED, COOLDOWN = "min_size", "max_size", "desired_capacity", "cooldown"
    #: the property whose change replaces the members (rolling, as the update policy says)
    DEFINITION = "resource"

    _planned: list[tuple[str, Any]] | None = None

    @classmethod
    def has_attribute(cls, name: str) -> bool:
        return name in cls.attribute_schemata() or name.startswith("resource.")

    def validate(self) -> None:
        """Heat's checks of the sizes, and a member; while the member's values wait for other
        resources, its type at least (Heat checks the member with stand-ins for them)."""
        try:
            self._validate_group()
        except ResourcePending:
            self.validate_member_type(self.DEFINITION)

    def _validate_group(self) -> None:
        low, high = self.size_bounds()
        path = ("resources", self.name, "properties")
        if high < low:
            raise ValidationFailed.single(path + (self.MIN_SIZE,), "invalid-size",
                                          "MinSize can not be greater than MaxSize")
        desired = self._desired()
        if desired is not None and not low <= desired <= high:
            raise ValidationFailed.single(path + (self.DESIRED,), "invalid-size",
                                          "DesiredCapacity must be between MinSize and MaxSize")
        if not isinstance(self.member_definition().get("type"), str):
            raise ValidationFailed.single(path + (self.DEFINITION, "type"), "missing-type",
                                          "the member definition needs a type")
        # as Heat: the nested stack a create makes (desired_capacity, else min_size members)
        # is what is checked; an empty one checks no member
        if desired or low:
            self._validate_member()

    def nested_validation_template(self) -> None:
        """Its ``validate`` checks one member already."""
        return None

    def _validate_member(self) -> None:
        """Check one member as its nested stack will (as Heat validates a group of one);
        each problem placed under the ``resource`` property."""
        data = {"heat_template_version": HOT_VERSION, "resources": {"member": self.member_definition()}}
        try:
            self.define_probe(template_from_data(data, self.stack.definition.template.files, self.name), {})
        except ValidationFailed as exc:
            place = ("resources", self.name, "properties", self.DEFINITION)
            for problem in exc.problems:
                inside = tuple(problem.path or ())
                if problem.code == NESTED_INVALID:  # inside the member's own nested stack
                    problem.path = place + inside[1:]
                else:
                    problem.path = place + (inside[2:] if inside[:2] == ("resources", "member") else ())
            raise

    # -- what the subclasses read otherwise ------------------------------------------------------
    def member_definition(self) -> dict:
        """Every member's resource definition (a HOT resource)."""
        return self.properties["resource"]

    def size_bounds(self) -> tuple[int, int]:
        return self.properties[self.MIN_SIZE], self.properties[self.MAX_SIZE]

    def rolling_policy(self) -> dict | None:
        """``min_in_service``, ``max_batch_size`` and ``pause_time`` (seconds) of a rolling replace;
        None: members keep their definition (only new ones get the new one)."""
        return self.properties["rolling_updates"]

    def _desired(self) -> int | None:
        return self.properties[self.DESIRED] if given(self, self.DESIRED) is not None else None

    def _cooldown(self) -> int | None:
        if self.COOLDOWN is None or given(self, self.COOLDOWN) is None:
            return None
        return self.properties[self.COOLDOWN]

    # -- the members ------------------------------------------------------------------------
    def members(self) -> list[tuple[str, Any]]:
        """(name, definition) of every member, oldest first, failed ones ahead."""
        child = self.child()
        if child is None or child.definition is None:
            return []
        definitions = child.definition.template.data.get("resources") or {}
        order = [n for n in self._data.get(MEMBERS_KEY, []) if n in definitions]
        order += sorted(n for n in definitions if n not in order)
        failed = {n for n in order if n in child.resources and child.resources[n].status == "FAILED"}
        order.sort(key=lambda n: n not in failed)
        return [(n, definitions[n]) for n in order]

    def live_members(self) -> list[Any]:
        """The member resources that did not fail, oldest first."""
        child = self.child()
        if child is None:
            return []
        found = [child.resources.get(name) for name, _ in self.members()]
        return [m for m in found if m is not None and m.status != "FAILED"]

    def child_template(self) -> Template:
        members = self._planned if self._planned is not None else self._update_outcome()
        data = {"heat_template_version": HOT_VERSION, "resources": dict(members)}
        return template_from_data(data, self.stack.definition.template.files, self.name)

    def _update_outcome(self) -> list[tuple[str, Any]]:
        """For a preview (no batch planned): the members an update to this definition ends
        with.  The group as it is now is the stack's resource of this name."""
        live = self.stack.resources.get(self.name) or self
        size = self._size_after_update(len(live.live_members()))
        return scaling.next_members(live.members(), self.member_definition(), size, size, new_member_name)

    def _size_after_update(self, current: int) -> int:
        """As Heat: a stack update brings the group to ``desired_capacity`` (else keeps its
        size), within the bounds."""
        return scaling.new_capacity(current, self._desired() or current, scaling.EXACT_CAPACITY, None,
                                    *self.size_bounds())

    async def apply_stage(self, members: list[tuple[str, Any]], create: bool = False) -> Any:
        self._planned = members
        self.data_set(MEMBERS_KEY, [name for name, _ in members])
        try:
            return await (self.create_child() if create else self.update_child())
        finally:
            self._planned = None

    async def resize(self, size: int) -> Any:
        """Grow with new members, or shrink by removing the oldest; the others are kept (on the
        workers: the id to poll is returned, as ``apply_stage``)."""
        return await self.apply_stage(scaling.next_members(self.members(), self.member_definition(), size, 0,
                                                           new_member_name))

    def _rolling_stages(self) -> list[staged.Stage]:
        """Every member given the new definition, batch by batch, as Heat does."""
        policy = self.rolling_policy()
        if policy is None:
            return []
        members = self.members()
        current = len(members)
        target = min(self._desired() or current, current)
        batches = list(scaling.rolling_batches(target, current, policy["max_batch_size"],
                                               policy["min_in_service"]))
        timeout = self.stack.record.timeout_mins
        if timeout and policy["pause_time"] * (len(batches) - 1) >= timeout * 60:
            raise ValueError("The current update policy will result in stack update timeout.")
        stages = []
        for number, (size, changes) in enumerate(batches):
            members = scaling.next_members(members, self.member_definition(), size, changes, new_member_name)
            stages.append((policy["pause_time"] if number else 0, members))
        return stages

    # -- life cycle ---------------------------------------------------------------------------
    async def handle_create(self) -> None:
        size = self._desired()
        size = self.size_bounds()[0] if size is None else size
        definition = self.member_definition()
        await self.apply_stage([(new_member_name(), definition) for _ in range(size)], create=True)
        self._finished_scaling(scaling.EXACT_CAPACITY_REASON.format(size=size))

    async def handle_update(self, json_snippet: Any, tmpl_diff: dict, prop_diff: dict) -> Any:
        """The rolling replace's batches (when the member definition changed), then the resize."""
        if self.child() is None:
            return await self.handle_create()
        stages = self._rolling_stages() if self.DEFINITION in prop_diff else []
        members = stages[-1][1] if stages else self.members()
        size = self._size_after_update(len(members) if stages else len(self.live_members()))
        stages.append((0, scaling.next_members(members, self.member_definition(), size, 0, new_member_name)))
        return await self.run_stages(stages)

    async def stages_ended(self) -> None:
        self._finished_scaling(scaling.EXACT_CAPACITY_REASON.format(size=len(self.members())))

    async def adjust(self, adjustment: float, adjustment_type: str, min_step: int | None,
                     cooldown: float | None) -> Any:
        """Resize by a policy's adjustment; ``NoActionRequired`` when nothing is to be done now.
        Here the resize runs to its end; acting for a signal on a worker (``signal_id``), it starts
        on the workers and the id ``scaling_ended`` polls is returned."""
        reason = f"{adjustment_type} : {adjustment}"
        if self.signal_id is not None:
            return await self._scale_apart(adjustment, adjustment_type, min_step, cooldown, reason)
        size, cooldown = self._target(adjustment, adjustment_type, min_step, cooldown)
        self.metadata_set({**self.metadata_get(), "scaling_in_progress": True})
        resized = False
        try:
            await self.resize(size)
            resized = True
        finally:
            self._finished_scaling(reason, cooldown, resized)
        return None

    def _target(self, adjustment: float, adjustment_type: str, min_step: int | None,
                cooldown: float | None) -> tuple[int, float | None]:
        """(the size to scale to, the cooldown after it), or ``NoActionRequired``: the group is busy
        or failed, the size would not change, or it still cools down."""
        if self.status != self.COMPLETE:
            raise NoActionRequired(self.name, f"the group is {self.action}_{self.status}")
        current = len(self.live_members())
        size = scaling.new_capacity(current, adjustment, adjustment_type, min_step, *self.size_bounds())
        if size == current:
            raise NoActionRequired(self.name, "there is no change in capacity")
        cooldown = self._cooldown() if cooldown is None else cooldown
        refusal = scaling.cooldown_refusal(self.metadata_get(), cooldown)
        if refusal:
            raise NoActionRequired(self.name, refusal)
        return size, cooldown

    async def _scale_apart(self, adjustment: float, adjustment_type: str, min_step: int | None,
                           cooldown: float | None, reason: str) -> Any:
        """The signal's resize started on the workers: its target size kept in the group's data,
        committed with the nested update's intent, so that a worker lost before the signal's poll
        was kept leaves its successor this scaling (to the same size, never one step more) and
        the nested update it started (polled, or started again under the same id)."""
        planned = self._data.get(SCALING_KEY)
        if not (isinstance(planned, dict) and planned.get("signal") == self.signal_id):
            size, cooldown = self._target(adjustment, adjustment_type, min_step, cooldown)
            planned = {"signal": self.signal_id, "size": size, "reason": reason, "cooldown": cooldown}
            self.edit_data(SCALING_KEY, planned)
            self.metadata_set({**self.metadata_get(), "scaling_in_progress": True})
        else:
            starting = self._starting(self.UPDATE)
            begun, child_id = self.poll_begun(starting) if starting is not None else (False, None)
            if begun:
                return child_id
        return await self.resize(planned["size"])

    async def scaling_ended(self, child_id: str) -> bool:
        """Whether the signal's resize on the workers (the nested update of ``child_id``) ended; once
        it has: Heat's cooldown metadata, the scaling forgotten (a failure raised once that is done)."""
        planned = self._data.get(SCALING_KEY) or {}
        try:
            if not self._child_action_ended(child_id):
                return False
        except Exception:
            self._end_scaling(planned, resized=False)
            raise
        self._cache_outputs()
        self._end_scaling(planned, resized=True)
        return True

    def _end_scaling(self, planned: dict, resized: bool) -> None:
        self._finished_scaling(planned.get("reason", ""), planned.get("cooldown"), resized)
        self.data_delete(SCALING_KEY)
        self.forget_poll()

    def _finished_scaling(self, reason: str, cooldown: float | None = None, size_changed: bool = True) -> None:
        cooldown = self._cooldown() if cooldown is None else cooldown
        self.metadata_set(scaling.cooldown_metadata(self.metadata_get() or {}, cooldown, reason, size_changed))

    # -- attributes ---------------------------------------------------------------------------
    def FnGetAtt(self, key: str, *path: Any) -> Any:  # noqa: N802 - Heat's name
        if not self.has_attribute(key):
            raise InvalidTemplateAttribute(resource=self.name, key=key)
        if self.action == self.INIT or (self.action == self.CREATE and self.resource_id is None):
            return None  # not created yet, as any resource
        members = self.live_members()
        if key == "current_size":
            return len(members)
        if key in ("outputs", "outputs_list"):
            if not path:
                raise InvalidTemplateAttribute(resource=self.name, key=key)
            values = {m.name: m.FnGetAtt(path[0], *path[1:]) for m in members}
            return values if key == "outputs" else list(values.values())
        if key.startswith("resource."):
            return self._member_attribute(members, key, path)
        if key == "refs":
            value: Any = [m.FnGetRefId() for m in members]
        elif key == "refs_map":
            value = {m.name: m.FnGetRefId() for m in members}
        else:  # show
            value = {"refs": [m.FnGetRefId() for m in members], "current_size": len(members)}
        return select_path(value, list(path)) if path else value

    def _member_attribute(self, members: list, key: str, path: tuple) -> Any:
        """``resource.N(.attr)``: the N-th member (oldest first), its reference or attribute."""
        parts = key.split(".", 2)
        try:
            member = members[int(parts[1])]
        except (ValueError, IndexError):
            raise InvalidTemplateAttribute(resource=self.name, key=key) from None
        names = parts[2:] + list(path)
        return member.FnGetAtt(names[0], *names[1:]) if names else member.FnGetRefId()


def resource_mapping() -> dict:
    return {"OS::Heat::AutoScalingGroup": AutoScalingGroup}
