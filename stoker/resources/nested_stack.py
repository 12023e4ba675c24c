"""The base of resources that own a nested stack (``OS::Heat::Stack``, groups, provider templates).

A nested stack is a real stack (its own row, resources and events, with
``parent_id`` set) that runs inside its parent's action, on the same event
loop and the same writer, so a tree of 11,000 resources costs about what a
flat stack of 11,000 does.  The owning resource's life cycle *is* the
nested stack's: create creates it, update updates it in place, delete
deletes it, and a failure inside names the failing nested resource.
"""

from __future__ import annotations

import json
import uuid
from datetime import datetime, timezone
from functools import partialmethod
from abc import abstractmethod
from typing import Any

from stoker.errors import FunctionError, Problem, ResourcePending, StokerError, ValidationFailed
from stoker.functions.base import resolve
from stoker.resources.exceptions import InvalidTemplateAttribute, ResourceFailure, UnknownResourceType
from stoker.resources.policy import NOT_ALLOWED
from stoker.resources.properties import Properties
from stoker.resources.resource import Resource, UpdatePlan
from stoker.resources.stepper import POLL_FIRST
from stoker.template.environment import Environment, child_registry
from stoker.template.template import Template

IN_PROGRESS, COMPLETE, FAILED = "IN_PROGRESS", "COMPLETE", "FAILED"
#: resource data key holding the nested stack's outputs as of the last action
OUTPUTS_KEY = "stoker:outputs"
OUTPUT_ERRORS_KEY = "stoker:output_errors"
#: in a poll's token: the traversal a nested stack's action on the workers is about to start (``_intend``)
STARTING = "starting"


#: the code of a problem found inside a nested stack when a request is checked
NESTED_INVALID = "invalid-nested-stack"


class NestedStackFailed(StokerError):
    code = "nested-stack-failed"


class NestedStackResource(Resource):
    """Base class: subclasses say which template and parameters the child gets."""

    run_in_thread = False
    leaves_unchanged_alone = False

    def __init__(self, name: str, definition: Any, stack: Any):
        super().__init__(name, definition, stack)
        self._child = None
        #: the nested stack's action ran to its end here, in this process: its check polls nothing
        self._ended_here = False

    # -- what subclasses provide ----------------------------------------------------------
    @abstractmethod
    def child_template(self) -> Template:
        """The template of the nested stack."""

    def child_parameters(self) -> dict:
        return {}

    def validation_template(self) -> Template:
        """The nested template whose parameters validate shows (``show_nested``)."""
        return self.child_template()

    def nested_validation_template(self) -> Template | None:
        """The nested template a create or update request checks first; None: nothing to check."""
        return self.child_template()

    def nested_label(self) -> str:
        """How Heat names the nested stack in a problem's place (``name<label>``)."""
        return "nested_stack"

    def validate_template(self) -> None:
        super().validate_template()
        if self.stack.validates_nested:
            self.validate_nested_stack()

    def validate_nested_stack(self) -> None:
        """As Heat, at a create or update request: the nested stack's own checks (recursively),
        before anything starts.  Values not known yet (another resource's) skip the check."""
        try:
            template = self.nested_validation_template()
            parameters = self.child_parameters() if template is not None else {}
        except ResourcePending:
            return
        if template is None:
            return
        try:
            self.define_probe(template, parameters)
        except ResourcePending:
            return
        except ValidationFailed as exc:
            # a refused type is the top stack's to report: its walk over the tree names them all
            found = [self._placed_inside(p) for p in exc.problems if p.code != NOT_ALLOWED]
            if found:
                raise ValidationFailed(found) from None

    def validate_member_type(self, prop: str) -> None:
        """A group's member type (its ``prop``'s ``type``), checked on its own while the
        member's other values wait for resources: Heat resolves it whatever they hold."""
        raw = self.t.properties.get(prop) if isinstance(self.t.properties, dict) else None
        try:
            kind = resolve(raw.get("type")) if isinstance(raw, dict) else None
        except ResourcePending:
            return
        if not isinstance(kind, str):
            return
        data = {"heat_template_version": "2015-04-30", "resources": {"member": {"type": kind}}}
        try:
            self.define_probe(template_from_data(data, self.stack.definition.template.files, self.name), {})
        except ResourcePending:
            return
        except ValidationFailed as exc:
            unknown = [p for p in exc.problems if p.code == UnknownResourceType.code]
            for problem in unknown:
                problem.path = ("resources", self.name, "properties", prop, "type")
            if unknown:
                raise ValidationFailed(unknown) from None

    def define_probe(self, template: Template, parameters: dict, name: str | None = None) -> Any:
        """Check ``template`` as this resource's nested stack would be checked, storing nothing;
        raises ``ValidationFailed``.  At a request, the probe checks its own nested stacks in turn.
        Returns the probe (a stack named ``name``, else as the nested stack will be)."""
        probe = self.stack.engine.new_stack(name or self.child_stack_name(), parent=self.stack)
        probe.validates_nested = self.stack.validates_nested
        probe.previewing = self.stack.previewing
        probe.owner_name = self.name
        probe.provider_template = self.made_from()
        probe.facade = self.facade_data()
        probe.define(template, self.child_environment(), parameters, missing_parameters_ok=True)
        return probe

    def _placed_inside(self, problem: Problem) -> Problem:
        """Heat's words: ``resources.NAME<label>.resources.INNER: : message``."""
        inner = tuple(problem.path or ())
        message = problem.message
        if problem.code != NESTED_INVALID:
            inner, message = inner[:2], f": {message}"
        placed = Problem(("resources", f"{self.name}<{self.nested_label()}>") + inner, NESTED_INVALID, message)
        source = self.stack.definition.template.source if self.stack.definition is not None else None
        found = source.locate(("resources", self.name)) if source is not None else None
        if found:
            placed.file, (placed.line, placed.column) = source.name, found
        return placed

    def child_environment(self) -> Environment:
        """The parent's environment, less its own parameters and the per-resource entries
        of other resources (as Heat passes it down)."""
        parent = self.stack.environment
        env = Environment.from_dict({
            "parameter_defaults": parent.parameter_defaults,
            "resource_registry": child_registry(parent.resource_registry, self.name),
            "parameter_merge_strategies": parent.parameter_merge_strategies,
        })
        return env

    def facade_data(self) -> dict:
        return {
            "metadata": self.metadata_get(),
            "deletion_policy": self.t.deletion_policy,
            "update_policy": self._resolve(self.t.update_policy),
        }

    # -- the child stack ------------------------------------------------------------------------
    def child(self):
        """The nested stack's runtime (loaded from the store when this process has none)."""
        if self._child is None and self.resource_id is not None:
            engine = self.stack.engine
            record = engine.store.get_stack(str(self.resource_id), self.stack.project_id, show_deleted=True)
            # the template it was made from: the parent's registry may map the type elsewhere now
            self._child = engine.runtime(record, parent=self.stack, facade=self.facade_data(),
                                         provider_template=self.made_from())
        return self._child

    def made_from(self) -> str | None:
        """The provider template of the nested stack, if it has one."""
        return None

    def child_outputs(self) -> dict:
        """The nested stack's outputs (null where one fails): live when loaded, else as
        cached at the last action."""
        if self._child is None and OUTPUTS_KEY in self._data:
            return self._data[OUTPUTS_KEY]
        return self._evaluated_outputs()[0]

    def child_output_errors(self) -> dict:
        """Output name -> the error that output shows (its ``output_error``)."""
        if self._child is None and OUTPUTS_KEY in self._data:
            return self._data.get(OUTPUT_ERRORS_KEY) or {}
        return self._evaluated_outputs()[1]

    def _evaluated_outputs(self) -> tuple[dict, dict]:
        child = self.child()
        values: dict = {}
        errors: dict = {}
        if child is None or child.definition is None:
            return values, errors
        for name, output in child.definition.outputs.items():
            values[name] = None
            try:
                if child.definition.enabled(output.condition):
                    values[name] = resolve(output.value)
            except ResourcePending:
                pass  # a resource never created reads as null
            except StokerError as exc:
                errors[name] = exc.message if isinstance(exc, FunctionError) else str(exc)
        return values, errors

    async def handle_create(self) -> Any:
        return await self.create_child()

    async def create_child(self) -> Any:
        """Store the nested stack and create it, as the dispatcher runs it (``nested_action``): here,
        to its end; or on the workers, returning the id ``check_create_complete`` polls."""
        engine = self.stack.engine
        starting = self._starting(self.CREATE)
        if starting is not None:  # stored by a worker lost before the create began: that one goes on
            child = self.child()
            child.adopted_data = self._adopted_inside()
        else:
            child = await self._new_child()

        async def here() -> None:
            self.resource_id_set(child.id)
            await engine.run_create(child, timeout_mins=None, disable_rollback=True)
            self._ended_with(child)

        async def apart() -> Any:
            intent = starting
            if intent is None:
                self.resource_id = child.id  # written with the start's intent: one without the other is never seen
                intent = await self._intend(self.CREATE, child.id)
            await engine.dispatch.start_nested(engine, child, self.CREATE, intent[STARTING])
            return child.id

        return await engine.dispatch.nested_action(here, apart)

    def _ended_with(self, child: Any) -> None:
        """The nested stack's action ended here: its failure is this resource's, its outputs kept."""
        self._raise_if_failed(child)
        self._cache_outputs()
        self._ended_here = True

    async def _new_child(self) -> Any:
        """The nested stack, defined from this resource and stored (no resources yet)."""
        engine = self.stack.engine
        child = engine.new_stack(self.child_stack_name(), parent=self.stack)
        child.owner_name = self.name
        child.facade = self.facade_data()
        child.adopted_data = self._adopted_inside()
        child.define(self.child_template(), self.child_environment(), self.child_parameters())
        engine.check_tree_size(child)
        await engine.save_nested_stack(child)
        self._child = child
        return child

    def _adopted_inside(self) -> dict:
        """An adopted stack's nested stacks adopt their own resources: those given for this one."""
        return (self.stack.adopted_data.get(self.name) or {}).get("nested", {})

    async def _intend(self, action: str, child_id: str, **given: Any) -> dict:
        """Before a nested stack's ``action`` starts on the workers: its traversal's id (and what
        else its start needs again, ``given``), committed as this action's poll.  A worker lost
        after the start and before its poll was kept leaves its successor this intent, not
        nothing: it polls that traversal if it was stored (``poll_begun``), else starts it again
        under the same id (its stack lock's owner), so the nested action runs once."""
        intent = {"stack": child_id, STARTING: str(uuid.uuid4()), **given}
        self.keep_poll(action, intent, POLL_FIRST)
        await self.stack.persist(self, event=False, durable=True)
        return intent

    def _starting(self, action: str) -> dict | None:
        """The intent (``_intend``) of ``action``'s start a lost worker left, if the action is at that."""
        polling = self.stored_poll(action)
        token = polling.get("token") if polling else None
        return token if isinstance(token, dict) and STARTING in token else None

    def poll_begun(self, token: Any) -> tuple[bool, Any]:
        """An intent's traversal stored: polled (the nested stack's id is the token); else the
        action starts again.  (Anything else: a poll as any resource keeps.)"""
        if not (isinstance(token, dict) and STARTING in token):
            return True, token
        engine = self.stack.engine
        return engine.dispatch.nested_begun(engine, token[STARTING]), token["stack"]

    async def _traversal_for(self, action: str, child_id: str) -> str:
        """The id of the traversal that runs the nested stack's ``action`` on the workers: a lost
        worker's, if it left one; else a new one, its intent committed first."""
        starting = self._starting(action) or await self._intend(action, child_id)
        return starting[STARTING]

    def check_create_complete(self, token: Any) -> bool:
        """Created here: done.  On the workers (or picked up by another worker, with no token):
        done when the nested stack's create has ended."""
        if token is None and self._ended_here:
            return True
        record = self.stack.engine.store.get_stack(str(self.resource_id), self.stack.project_id,
                                                   show_deleted=True)
        if record.status == IN_PROGRESS:
            return False
        self._child = None  # its resources as they ended
        self._raise_if_failed(self.child())
        self._cache_outputs()
        return True

    async def pick_up(self, action: str) -> bool:
        """A nested stack's interrupted create goes on in the nested stack, where it stood."""
        child = self.child() if action == self.CREATE else None
        if child is None or child.definition is None or (child.action, child.status) != (self.CREATE, self.IN_PROGRESS):
            return await super().pick_up(action)
        async with self.acting(self.CREATE):
            await self.stack.engine.run_create(child, None, disable_rollback=True, resume=True)
            self._raise_if_failed(child)
            self._cache_outputs()
        return True

    async def handle_update(self, json_snippet: Any, tmpl_diff: dict, prop_diff: dict) -> Any:
        child = self.child()
        if child is None:
            return await self.handle_create()
        return await self.update_child()

    async def update_child(self) -> Any:
        """Update the nested stack to this resource's definition: here, to its end; or on the
        workers, returning the id ``check_update_complete`` polls (as ``create_child``).
        A group's batches, each waiting for the one before, are updated here."""
        child = self.child()
        engine = self.stack.engine

        async def here() -> None:
            updated, old = self._updated_child(child)
            await engine.run_update(updated, old, rollback=False)
            self._ended_with(updated)

        async def apart() -> Any:
            starting = self._starting(self.UPDATE)
            if starting is None:  # (else a lost worker's: its inputs before are the ones to go back to)
                before = engine.store.get_stack(child.id, self.stack.project_id, show_deleted=True)
                starting = await self._intend(self.UPDATE, child.id, previous=before.inputs())
            updated, _old = self._updated_child(child)
            await engine.dispatch.start_nested(engine, updated, self.UPDATE, starting[STARTING], starting["previous"])
            return child.id

        return await engine.dispatch.nested_action(here, apart)

    def _updated_child(self, child: Any) -> tuple[Any, Any]:
        """(the nested stack with this resource's new definition stored, the one it replaces)."""
        updated, old = self.stack.engine.prepare_child_update(child, self.child_template(),
                                                              self.child_environment(), self.child_parameters())
        updated.facade = self.facade_data()
        self._child = updated
        return updated, old

    def check_update_complete(self, token: Any) -> bool:
        """Updated here: done.  On the workers: done when the nested stack's action has ended."""
        if not self._child_action_ended(token):
            return False
        if token is not None:
            self._cache_outputs()
        return True

    def _child_action_ended(self, token: Any) -> bool:
        """Whether the nested stack's action that ``token`` (its id) stands for, started apart on
        the workers, has ended (raising when it failed); no token: it ran here, to its end."""
        if token is None:
            return True
        record = self.stack.engine.store.get_stack(str(token), self.stack.project_id, show_deleted=True)
        if record.status == IN_PROGRESS:
            return False
        self._child = None  # its resources as they ended
        self._raise_if_failed(self.child())
        return True

    async def handle_delete(self) -> Any:
        """Here, to its end; or on the workers, returning the id ``check_delete_complete`` polls
        (as ``create_child``)."""
        child = self.child()
        if child is None or child.record.deleted_at is not None:
            return None
        engine = self.stack.engine

        async def here() -> None:
            if not await engine.run_delete(child, "DELETE"):
                raise NestedStackFailed(f"nested stack {child.name} failed to delete: {child.status_reason}")
            self._ended_here = True

        async def apart() -> Any:
            await engine.dispatch.start_nested(engine, child, self.DELETE,
                                              await self._traversal_for(self.DELETE, child.id))
            return child.id

        return await engine.dispatch.nested_action(here, apart)

    def check_delete_complete(self, token: Any) -> bool:
        if token is None and (self._ended_here or self.resource_id is None):
            return True
        record = self.stack.engine.store.get_stack(str(self.resource_id), self.stack.project_id,
                                                   show_deleted=True)
        if record.deleted_at is not None or (record.action, record.status) == ("DELETE", COMPLETE):
            return True  # (its row is marked deleted just after its state is set)
        if record.status == IN_PROGRESS:
            return False
        raise NestedStackFailed(f"nested stack {record.name} failed to delete: {record.status_reason}")

    def winding_down(self) -> bool:
        """The nested stack's action on the workers holds its lock until its last resource ends."""
        if self.resource_id is None:
            return False
        record = self.stack.engine.store.get_stack(str(self.resource_id), self.stack.project_id, show_deleted=True)
        return record.lock_owner is not None and record.lock_time is not None and (
            datetime.now(timezone.utc) - record.lock_time).total_seconds() < self.stack.engine.store.lock_timeout

    async def _simple(self, action: str) -> Any:
        """SUSPEND, RESUME or CHECK the nested stack: here, to its end; or on the workers,
        returning the id the check (``_child_action_ended``) polls."""
        child = self.child()
        if child is None:
            return None
        engine = self.stack.engine

        async def here() -> None:
            await engine.run_simple(child, action)
            self._raise_if_failed(child)

        async def apart() -> Any:
            await engine.dispatch.start_nested(engine, child, action, await self._traversal_for(action, child.id))
            return child.id

        return await engine.dispatch.nested_action(here, apart)

    handle_suspend = partialmethod(_simple, "SUSPEND")
    handle_resume = partialmethod(_simple, "RESUME")
    handle_check = partialmethod(_simple, "CHECK")
    check_suspend_complete = check_resume_complete = check_check_complete = _child_action_ended

    def _cache_outputs(self) -> None:
        """Keep the outputs with the resource, so reading them later loads no nested stack."""
        values, errors = self._evaluated_outputs()
        self.data_set(OUTPUTS_KEY, values)
        if errors:
            self.data_set(OUTPUT_ERRORS_KEY, errors)
        elif OUTPUT_ERRORS_KEY in self._data:
            self.data_delete(OUTPUT_ERRORS_KEY)

    def _raise_if_failed(self, child) -> None:
        """As Heat: the failure reads as the nested resource's, its path under this one
        (``ValueError: resources.victim.resources.oops: ...``)."""
        if child.status == FAILED:
            raise ResourceFailure(child.status_reason, self, self.action)

    def child_stack_name(self) -> str:
        return f"{self.stack.name}-{self.name}-{self.physical_resource_name()[-12:]}"

    def get_reference_id(self) -> Any:
        if self.overrides_stack_id():
            override = self.child_outputs().get("OS::stack_id")
            if override is not None:
                return override
        return self.resource_id if self.resource_id is not None else self.name

    def overrides_stack_id(self) -> bool:
        """Does the nested template have an ``OS::stack_id`` output (its own reference id)?"""
        return False

    def needs_replace_failed(self) -> bool:
        """A failed nested stack is updated, its own resources deciding what to replace
        (as Heat); only a failed check replaces it."""
        return self.action == self.CHECK

    def plan_update(self, definition: Any, new_props: Properties):
        """A nested stack is always updated, in place (as Heat): what changed inside it,
        its template in the files map included, is for its own update to find."""
        plan = super().plan_update(definition, new_props)
        if plan is None:
            return UpdatePlan({}, {}, [])
        plan.forcing = []
        return plan


def nested_resource_attribute(owner: NestedStackResource, key: str, path: tuple) -> Any:
    """``get_attr: [owner, resource.NAME(.attr), ...]``: a resource of the nested stack,
    its reference id, or its attribute followed along the rest of the path (as Heat; a nested
    stack with no resources, such as a group of none, gives nothing for any name)."""
    child = owner.child()
    if child is None or not child.resources:
        return None
    parts = key.split(".", 2)
    member = child.resources.get(parts[1]) if len(parts) > 1 else None
    if member is None:
        raise InvalidTemplateAttribute(resource=owner.name, key=key)
    names = parts[2:] + list(path)
    return member.FnGetAtt(names[0], *names[1:]) if names else member.FnGetRefId()


def template_from_data(data: dict, files: dict, name: str) -> Template:
    """A generated template (a group's members) with the files of its parent."""
    return Template(json.loads(json.dumps(data)), files)
