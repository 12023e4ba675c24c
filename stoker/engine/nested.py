"""Resources that own a nested stack: provider templates, ``OS::Heat::Stack``, groups.

A nested stack is a real stack (its own row, resources and events, with
``parent_id`` set) that runs inside its parent's action, on the same event
loop and the same writer, so a tree of 11,000 resources costs about what a
flat stack of 11,000 does.  The owning resource's life cycle *is* the
nested stack's: create creates it, update updates it in place, delete
deletes it, and a failure inside names the failing nested resource.
"""

from __future__ import annotations

import copy
import json
import uuid
from datetime import datetime, timezone
from abc import abstractmethod
from contextlib import contextmanager
from typing import Any

from stoker.errors import (FunctionError, NotFound, Problem, Problems, ResourcePending, StokerError,
                           ValidationFailed)
from stoker.functions.base import resolve
from stoker.resources import attributes
from stoker.resources.exceptions import InvalidTemplateAttribute, ResourceFailure, UnknownResourceType
from stoker.resources.policy import NOT_ALLOWED
from stoker.resources.properties import Properties, schemata
from stoker.resources.resource import Resource, UpdatePlan
from stoker.resources.stepper import POLL_FIRST
from stoker.template.environment import (Environment, RegistryLoop, child_registry, is_template_type,
                                          resolve_type)
from stoker.template.parameters import parse_parameters
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
        return await self.create_child(apart=not self.stack.engine.dispatch.runs_here)

    async def create_child(self, apart: bool) -> Any:
        """Store the nested stack and create it: here, to its end; or, ``apart`` (this resource runs
        on a worker), on the workers, returning the id ``check_create_complete`` polls, so that
        this resource holds no worker slot its nested resources need."""
        engine = self.stack.engine
        starting = self._starting(self.CREATE) if apart else None
        if starting is not None:  # stored by a worker lost before the create began: that one goes on
            child = self.child()
            child.adopted_data = self._adopted_inside()
        else:
            child = await self._new_child()
        if apart:
            if starting is None:
                self.resource_id = child.id  # written with the start's intent: one without the other is never seen
                starting = await self._intend(self.CREATE, child.id)
            await engine.dispatch.create_nested(engine, child, starting[STARTING])
            return child.id
        self.resource_id_set(child.id)
        await engine.run_create(child, timeout_mins=None, disable_rollback=True)
        self._raise_if_failed(child)
        self._cache_outputs()
        return None

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
        if token is None and self.stack.engine.dispatch.runs_here:
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
        return await self.update_child(apart=not self.stack.engine.dispatch.runs_here)

    async def update_child(self, apart: bool) -> Any:
        """Update the nested stack to this resource's definition: here, to its end; or, ``apart``,
        on the workers, returning the id ``check_update_complete`` polls (as ``create_child``).
        A group's batches, each waiting for the one before, are updated here."""
        child = self.child()
        engine = self.stack.engine
        starting = self._starting(self.UPDATE) if apart else None
        if apart and starting is None:  # (else a lost worker's: its inputs before are the ones to go back to)
            before = engine.store.get_stack(child.id, self.stack.project_id, show_deleted=True)
            starting = await self._intend(self.UPDATE, child.id, previous=before.inputs())
        updated, old = engine.prepare_child_update(child, self.child_template(),
                                                   self.child_environment(), self.child_parameters())
        updated.facade = self.facade_data()
        self._child = updated
        if apart:
            await engine.dispatch.update_nested(engine, updated, starting["previous"], starting[STARTING])
            return child.id
        await engine.run_update(updated, old, rollback=False)
        self._raise_if_failed(updated)
        self._cache_outputs()
        return None

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
        """Here, to its end; on a worker, on the workers, returning the id ``check_delete_complete``
        polls (as ``create_child``)."""
        child = self.child()
        if child is None or child.record.deleted_at is not None:
            return None
        engine = self.stack.engine
        if not engine.dispatch.runs_here:
            await engine.dispatch.delete_nested(engine, child, await self._traversal_for(self.DELETE, child.id))
            return child.id
        if not await engine.run_delete(child, "DELETE"):
            raise NestedStackFailed(f"nested stack {child.name} failed to delete: {child.status_reason}")
        return None

    def check_delete_complete(self, token: Any) -> bool:
        if token is None and (self.stack.engine.dispatch.runs_here or self.resource_id is None):
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

    async def handle_suspend(self) -> Any:
        return await self._simple("SUSPEND")

    async def handle_resume(self) -> Any:
        return await self._simple("RESUME")

    async def handle_check(self) -> Any:
        return await self._simple("CHECK")

    def check_suspend_complete(self, token: Any) -> bool:
        return self._child_action_ended(token)

    def check_resume_complete(self, token: Any) -> bool:
        return self._child_action_ended(token)

    def check_check_complete(self, token: Any) -> bool:
        return self._child_action_ended(token)

    async def _simple(self, action: str) -> Any:
        """Here, to its end; on a worker, on the workers, returning the id the check polls."""
        child = self.child()
        if child is None:
            return None
        engine = self.stack.engine
        if not engine.dispatch.runs_here:
            await engine.dispatch.simple_nested(engine, child, action, await self._traversal_for(action, child.id))
            return child.id
        await engine.run_simple(child, action)
        self._raise_if_failed(child)
        return None

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


class TemplateResource(NestedStackResource):
    """A resource whose type is a template (``type: server.yaml`` or a registry mapping).

    Its properties are the template's parameters; its attributes, the
    template's outputs (plus ``OS::stack_id``).
    """

    def __init__(self, name: str, definition: Any, stack: Any, template_name: str):
        super().__init__(name, definition, stack)
        self.template_name = template_name
        self._template: Template | None = None
        self._template_problem: str | None = None
        self._load_schemas()

    def _load_schemas(self) -> None:
        """Properties from the template's parameters, attributes from its outputs."""
        template = self._load_template()
        if template is None:
            return
        self.properties_schema, self.attributes_schema = self._interface(template, self.template_name)

    def _interface(self, template: Template, name: str) -> tuple[dict, dict]:
        """(properties, attributes) schemas of a provider template: its parameters, its outputs."""
        schemas = parse_parameters(template.section("parameters"), template.version or _any_version(),
                                   Problems())
        # as Heat: a parameter the environment's parameter_defaults set is not required
        for key, value in self.stack.environment.parameter_defaults.items():
            if key in schemas and schemas[key].default is None:
                schemas[key].default = value
        outputs = template.section("outputs")
        return (Properties.schema_from_params(schemas),
                {key: attributes.Schema(f"output {key} of {name}") for key in (outputs if isinstance(outputs, dict) else {})})

    def _facade(self) -> tuple[dict, set] | None:
        """(properties schema, attribute names) of the type this template stands in for, as
        Heat's facade: what the type resolves to apart from the mapping this resource took
        (the global one under a per-resource mapping; else the built-in type itself)."""
        registry = self.stack.environment.resource_registry
        common = {key: value for key, value in registry.items() if key != "resources"}
        try:
            facade = resolve_type(common, self.name, self.t.type, inside=self.stack.provider_template)
        except RegistryLoop:
            return None
        if facade == self.template_name:
            facade = self.t.type
        if facade == self.template_name:
            return None
        if is_template_type(facade):
            text = _files_of(self.stack).get(facade)
            if text is None:
                return None
            try:
                properties, attrs = self._interface(Template.from_text(text, facade), facade)
            except ValidationFailed:
                return None
            return schemata(properties), set(attrs) | {attributes.SHOW}
        try:
            cls = self.stack.engine.resource_class(facade)
        except StokerError:
            return None  # not a type Stoker knows: nothing to compare with
        return schemata(cls.properties_schema), set(cls.attributes_schema) | {attributes.SHOW}

    def _check_facade(self) -> None:
        """The template must offer what its facade promises (Heat's own messages)."""
        facade = self._facade()
        if facade is None:
            return
        properties, attrs = facade
        kind = self.t.type
        for name, schema in properties.items():
            if schema.required and name not in self.properties_schema:
                _facade_error(f"Required property {name} for facade {kind} missing in provider")
        for name, schema in self.properties_schema.items():
            if schema.required and name not in properties:
                _facade_error(f"Provider requires property {name} unknown in facade {kind}")
        for name in sorted(attrs):
            if not self._provides(name):
                _facade_error(f"Attribute {name} for facade {kind} missing in provider")

    def build_properties(self, data: Any, resolved: bool = False) -> Properties:
        # an update may bring a new version of the template (the files map changed):
        # the new properties are read against the parameters it declares now
        if not resolved and self._template is not None:
            text = _files_of(self.stack).get(self.template_name)
            if text is not None and self._template.source is not None and text != self._template.source.text:
                self._load_schemas()
        return super().build_properties(data, resolved)

    def stored_properties(self) -> Properties:
        """As last applied, read against the parameters the template declares now: those it
        dropped are left out, those it added since (required or not) are simply absent."""
        kept = {k: v for k, v in (self.properties_data or {}).items() if k in self.properties_schema}
        schema = dict(self.properties_schema)
        for name in schema.keys() - kept.keys():
            schema[name] = copy.copy(schema[name])
            schema[name].required = False
        return Properties(schema, kept, path=("resources", self.name, "properties"), resolver=None)

    def type(self) -> str:
        return self.t.type

    def implementation(self) -> Any:
        return self.template_name

    def made_from(self) -> str | None:
        return self.template_name

    def _load_template(self) -> Template | None:
        files = _files_of(self.stack)
        text = files.get(self.template_name)
        if text is None:
            text = self._template_of_existing_child()
        if text is None:
            self._template_problem = (f'the provider template "{self.template_name}" is not in the files map '
                                      "(give its path relative to the template or environment that names it)")
            return None
        try:
            self._template = Template.from_text(text, self.template_name, files=files)
        except ValidationFailed as exc:
            self._template_problem = f'the provider template "{self.template_name}" is invalid: {exc}'
            return None
        return self._template

    def _template_of_existing_child(self) -> str | None:
        """As Heat: a provider template gone from the files map is read from the nested stack
        this resource already has (a group member a rolling update has not reached yet)."""
        store = self.stack.store
        try:
            rows = [row for row in store.get_resources(self.stack.id)
                    if row.name == self.name and row.physical_resource_id and row.replaced_by is None]
            if not rows:
                return None
            child = store.get_stack(rows[-1].physical_resource_id, self.stack.project_id, show_deleted=True)
        except NotFound:
            return None
        return json.dumps(store.get_template(child.template_id).content)

    def validate_shape(self) -> None:
        self._check_template_usable()
        with self._naming_template():
            super().validate_shape()

    def validate_template(self) -> None:
        self._check_template_usable()
        self._check_facade()
        with self._naming_template():
            super().validate_template()

    def nested_label(self) -> str:
        return self.template_name

    @contextmanager
    def _naming_template(self):
        """Problems with the properties say they are the template's parameters."""
        try:
            yield
        except ValidationFailed as exc:
            for problem in exc.problems:
                if problem.code == NESTED_INVALID:
                    continue  # inside the template: placed in Heat's words already
                problem.message += f' (the parameters of provider template "{self.template_name}")'
            raise

    def _check_template_usable(self) -> None:
        """The template loads, and nests no deeper than the limit."""
        if self._template_problem:
            raise ValidationFailed.single(("resources", self.name, "type"), "invalid-provider-template",
                                          self._template_problem)
        depth = self.stack.depth + 1 + _template_depth(self.template_name, _files_of(self.stack),
                                                       self.stack.environment.resource_registry,
                                                       self.stack.engine.max_nested_depth)
        if depth > self.stack.engine.max_nested_depth:
            raise ValidationFailed.single(("resources", self.name, "type"), "nesting-too-deep",
                                          f"Recursion depth exceeds {self.stack.engine.max_nested_depth} "
                                          f'(max_nested_stack_depth) through "{self.template_name}"')

    def _provides(self, name: str) -> bool:
        return name in self.attributes_schema or name in ("OS::stack_id", attributes.SHOW)

    def has_attribute(self, name: str) -> bool:
        """What the template's outputs give; or, as Heat, what its facade promises or what the
        nested stack it has now gives (an update is checked against the existing resource;
        an attribute gone by then becomes its output's error)."""
        if self._provides(name) or name.startswith("resource."):
            return True
        facade = self._facade()
        if facade is not None and name in facade[1]:
            return True
        existing = self._template_of_existing_child()
        if existing is None:
            return False
        outputs = Template.from_text(existing, self.template_name).section("outputs")
        return isinstance(outputs, dict) and name in outputs

    def FnGetAtt(self, key: str, *path: Any) -> Any:  # noqa: N802 - Heat's name
        if key.startswith("resource.") and key not in self.attributes_schema:
            return nested_resource_attribute(self, key, path)
        return super().FnGetAtt(key, *path)

    def get_reference_id(self) -> Any:
        """The nested stack's ARN, as Heat (unless the template has an ``OS::stack_id`` output)."""
        override = self.child_outputs().get("OS::stack_id") if self.overrides_stack_id() else None
        if override is not None or self.resource_id is None:
            return override if override is not None else self.name
        return (f"arn:openstack:heat::{self.stack.project_id}:stacks/"
                f"{self.child_stack_name()}/{self.resource_id}")

    def overrides_stack_id(self) -> bool:
        return "OS::stack_id" in self.attributes_schema

    def child_template(self) -> Template:
        if self._template is None:
            raise NestedStackFailed(self._template_problem or "no provider template")
        return Template(self._template.data, self._template.files, self._template.source)

    def child_parameters(self) -> dict:
        """The properties the template gives (typed; a null one as its type's empty value, as
        Heat passes it); the rest keep the nested defaults."""
        given = resolve(self.t.properties) if self.t.properties else {}
        values = self.properties.resolved()
        return {k: values[k] for k in given if k in values}

    def _resolve_attribute(self, name: str) -> Any:
        if name == "OS::stack_id":
            return self.resource_id
        error = self.child_output_errors().get(name)
        if error is not None:  # as Heat's TemplateOutputError
            raise StokerError(f"Error in {self.name} output {name}: {error}")
        return self.child_outputs().get(name)

    def _show_resource(self) -> Any:
        return self.child_outputs()


def _facade_error(message: str) -> None:
    """Heat's words exactly: the message names the facade and what is missing; it is about two
    templates at once, so no file place is added (``file=""`` keeps the loader from placing it)."""
    raise ValidationFailed([Problem((), "facade-mismatch", message, file="")])


def _template_depth(name: str, files: dict, registry: dict, limit: int, seen: int = 0) -> int:
    """How deep the provider templates under template ``name`` nest (stops past ``limit``)."""
    if seen > limit:
        return seen
    try:
        data = json.loads(files[name]) if files.get(name, "").startswith("{") else None
    except ValueError:
        data = None
    if data is None:
        from stoker.template.loader import load

        try:
            data = load(files.get(name, ""), name)
        except ValidationFailed:
            return 0
    deepest = 0
    resources = data.get("resources") if isinstance(data, dict) else None
    for rname, rdef in (resources or {}).items():
        rtype = rdef.get("type") if isinstance(rdef, dict) else None
        if not isinstance(rtype, str):
            continue
        try:
            effective = resolve_type(registry, rname, rtype, inside=name)
        except RegistryLoop:
            continue
        if is_template_type(effective) and effective in files:
            deepest = max(deepest, 1 + _template_depth(effective, files, registry, limit, seen + 1))
    return deepest


def _files_of(stack) -> dict:
    return stack.definition.template.files if stack.definition is not None else {}


def _any_version():
    from stoker.template.versions import VERSIONS

    return VERSIONS[-1]


def template_from_data(data: dict, files: dict, name: str) -> Template:
    """A generated template (a group's members) with the files of its parent."""
    return Template(json.loads(json.dumps(data)), files)
