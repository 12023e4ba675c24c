"""A stack while an action runs: its definition, its live resources, its writer.

``Stack`` is rebuilt from the store for every action (another process may
have acted since), so nothing here outlives one action.
"""

from __future__ import annotations

from datetime import datetime, timezone
from functools import partial
from typing import TYPE_CHECKING, Any, Iterable
from weakref import WeakSet

from stoker.engine.live_context import EngineContext
from stoker.engine.host import StackHost
from stoker.engine.recorder import SMALL_BATCH, Recorder, resource_fields
from stoker.engine.sealing import stored_resource_fields
from stoker.engine.unchanged import same_definitions
from stoker.errors import GivenUp, Problems, ValidationFailed
from stoker.lease import Cancel
from stoker.resources.resource import Resource
from stoker.resources.stepper import RUN_TO_END, Driver
from stoker.template.definition import ResourceDefinition, StackDefinition, build_definition
from stoker.template.environment import Environment, is_template_type, resolve_type
from stoker.template.loader import paused_gc
from stoker.template.parameters import redact
from stoker.template.template import Template
from stoker.uuids import new_uuid

if TYPE_CHECKING:  # pragma: no cover
    from stoker.store.models import Stack as StackRecord

STACK_RESOURCE_TYPE = "OS::Heat::Stack"


class Stack:
    """Runtime view of one stack for one action."""

    def __init__(self, engine: "StackHost[Stack]", record: "StackRecord", parent: "Stack | None" = None):
        self.engine = engine
        self.record = record
        #: the stack whose resource owns this one (nested stacks), and how deep it is
        self.parent = parent
        self.depth = parent.depth + 1 if parent is not None else 0
        self.environment = Environment()
        #: set on nested stacks: the parent resource's metadata and policies
        self.facade: dict = {}
        self.owner_name: str | None = getattr(record, "owner_resource", None)
        #: for a stack made from a provider template, that template's name (see resolve_type)
        self.provider_template: str | None = None
        self.user_parameters: dict = {}
        #: per action, on the root: templates already stored, resources in the tree
        self.template_ids: dict[str, int] = {}
        self.tree_size = 0
        #: True while ``template validate`` checks it: what Heat checks only at create is a warning
        self.at_validate = False
        #: True while a create or update request checks it: nested stacks are checked too, as Heat
        self.validates_nested = False
        #: True while a create preview lists it (and its nested stacks): a resource not made yet stands
        #: as its name, so values the cloud would check are not checked in its nested stacks (as Heat)
        self.previewing = False
        self._secrets: list[str] | None = None
        #: effective types already resolved, for the registry they were resolved in
        self._types_registry: dict | None = None
        self._types: dict[tuple, str] = {}
        self.id = record.id
        self.name = record.name
        self.project_id = record.project_id
        self.definition: StackDefinition | None = None
        self.resources: dict[str, Resource] = {}
        #: replaced or removed resources waiting to be deleted
        self.retired: list[Resource] = []
        #: on an update: resources written and fed as in the stored stack (``engine/unchanged.py``),
        #: and those the update has left alone so far
        self.unchanged: frozenset[str] = frozenset()
        self.left_alone: set[str] = set()
        # one writer per tree of stacks: nested stacks share the root's
        self.recorder = parent.recorder if parent is not None else Recorder(engine, self.id)
        #: the stacks made under the root in this action (nested stacks, their updates' old and
        #: new, probes), one set for the tree, dropped with the root (``drop``); weak references,
        #: so that one nothing holds goes as before
        self.nested_stacks: WeakSet[Stack] = parent.nested_stacks if parent is not None else WeakSet()
        if parent is not None:
            self.nested_stacks.add(self)
        self.cancel_reason: str | None = None
        #: the user's cancel request that stopped the action (with rollback or without), if one did
        self.cancel: Cancel | None = None
        #: set on the top stack when its server stops: running resources stay in progress
        self.handing_back = False
        #: what takes the steps of its resources' actions (a worker's takes one per task)
        self.driver: Driver = RUN_TO_END
        #: for an adopt: resource name -> {"data", "metadata"} they had before
        self.adopted_data: dict = {}
        #: for a signal a worker acts on: (its traversal's id, what the signal carried)
        self.signalled: tuple[str, Any] | None = None
        self.action = record.action
        self.status = record.status
        self.status_reason = record.status_reason
        #: (action, status, reason) its row was stored with (``save_new_stack``), until it changes:
        #: setting that state only adds its event, which rides with the next commit
        self.stored_state: tuple[str, str, str] | None = None
        #: the outputs as the action's end left them (``drop``): what the caller's summary shows
        self.ended_outputs: list[dict] | None = None

    @property
    def store(self):
        return self.engine.store

    def redact(self, text: str) -> str:
        """``text`` fit to store and show: no hidden parameter value in it."""
        if self._secrets is None:
            self._secrets = self.definition.secrets() if self.definition is not None else []
            if self.parent is not None:
                self._secrets += self.parent.root.redact_list()
        return redact(text, self._secrets) if self._secrets and text else text

    def redact_list(self) -> list[str]:
        self.redact("")
        return list(self._secrets or [])

    # -- definition -----------------------------------------------------------------
    def define(self, template: Template, environment: Environment, parameters: dict,
               check_resources: bool = True, missing_parameters_ok: bool = False,
               previous: "Stack | None" = None, stored: bool = False) -> StackDefinition:
        """Check ``template`` with these inputs; raise ``ValidationFailed`` with every problem.

        ``check_resources=False`` skips the plug-in checks: for stacks read back
        from the store, which were checked when they were stored.  On an update,
        ``previous`` is the stored stack: resources unchanged since skip the plug-in
        checks too (they passed them with the same definition and inputs).
        ``stored``: its resources are parsed when first asked for (``build_definition``).
        """
        if self.engine.given_up.is_set():
            raise GivenUp("the request gave up waiting for this action to start")
        self.environment = environment
        self.user_parameters = dict(parameters)
        problems = Problems(list(environment.warnings) + list(environment.errors))
        declared = set(template.section("parameters") or {}) if isinstance(template.section("parameters"), dict) else set()
        values = environment.parameter_values(declared)
        values.update(parameters)
        definition = build_definition(
            template, values, problems=problems, missing_parameters_ok=missing_parameters_ok,
            context_factory=partial(EngineContext, self),
            stack_name=self.name, stack_id=self.id, project_id=self.project_id,
            stored=stored,
            facade=self.facade if self.parent is not None or self.owner_name is not None else None,
        )
        if definition is not None:
            self.definition = definition
            # the environment's encrypted_param_names are secrets: shown and logged as hidden
            for name in environment.encrypted_param_names:
                if name in definition.parameter_schemas:
                    definition.parameter_schemas[name].hidden = True
            self.tree_size += len(definition.resources)
            if previous is not None:
                self.unchanged = same_definitions(previous, self, definition)
            if check_resources:
                with paused_gc():  # thousands of plug-in objects that all live on
                    self.engine.validate_resources(self, definition, problems)
        errors = problems.errors
        if definition is None or errors:
            for problem in problems.items:
                if template.source is not None:
                    template.source.place(problem)
                problem.message = self.redact(problem.message)
            raise ValidationFailed(problems.items)
        return definition

    def effective_type(self, name: str, type_name: str) -> str:
        """The plug-in type or template a resource's type resolves to in this stack.

        An update asks it several times per resource (loading, validating, comparing
        implementations): each answer is kept while the registry stays the same one.
        """
        registry = self.environment.resource_registry
        if not registry:  # the usual case: nothing is mapped
            return type_name
        source = self.definition.template.source if self.definition is not None else None
        inside = self.provider_template or (source.name if source is not None else None)
        if registry is not self._types_registry:
            self._types_registry, self._types = registry, {}
        key = (name, type_name, inside)
        found = self._types.get(key)
        if found is None:
            found = self._types[key] = resolve_type(registry, name, type_name, inside=inside)
        return found

    def implementation(self, name: str, definition: ResourceDefinition) -> Any:
        """What would run the resource: its provider template, or its plug-in class."""
        effective = self.effective_type(name, definition.type)
        return effective if is_template_type(effective) else self.engine.resource_class(effective)

    def instantiate(self, name: str, definition: ResourceDefinition) -> Resource:
        """The plug-in object for a resource, after the environment's registry mappings."""
        effective = self.effective_type(name, definition.type)
        if is_template_type(effective):
            from stoker.resources.template_resource import TemplateResource

            return TemplateResource(name, definition, self, effective)
        return self.engine.resource_class(effective)(name, definition, self)

    def adopt_resources(self, other: "Stack") -> None:
        """Take over ``other``'s live resources (an update continues from the old stack)."""
        self.resources, self.retired = other.resources, other.retired
        for resource in list(self.resources.values()) + self.retired:
            resource.stack = self
        other.nested_stacks.update(self.nested_stacks)
        self.nested_stacks = other.nested_stacks

    def drop(self) -> None:
        """The end of this stack's life (``running.ended``): the cycles it is made of are cut, so
        reference counting frees it and its resources at once, instead of the collector's next
        full collection (~23 objects per resource; 0.1 s of CPU per 10,000 resources).

        Each resource points back at its stack, and the definition's context at the stack too
        (its live resources answer ``get_resource``).  The resource maps are emptied in place,
        and the context let go whichever stack it answers for: an update's old stack shares both
        with the new one and with its rollback's.  A resource still held elsewhere keeps its
        stack, which then reads as having no resources.  The nested stacks made under it
        (``nested_stacks``, shared with the stacks it took its resources from) go the same way.
        """
        nested = list(self.nested_stacks)
        self.nested_stacks.clear()
        for stack in (self, *nested):
            stack.resources.clear()
            stack.retired.clear()
            if stack.definition is not None:
                stack.definition.drop()
                stack.definition.context.runtime = None  # an ``EngineContext`` (``define``)

    @property
    def root(self) -> "Stack":
        return self if self.parent is None else self.parent.root

    def __getitem__(self, name: str) -> Resource:
        return self.resources[name]

    # -- loading what the store knows -------------------------------------------------
    def load_resources(self, rows: Iterable[Any] | None = None) -> None:
        """Rebuild resource objects from their rows (current ones and retired ones);
        ``rows``: only these (a worker acting on one resource), default all of the stack's."""
        rows = list(self.store.get_resources(self.id) if rows is None else rows)
        replaced = {row.id for row in rows if row.replaced_by is not None}
        for row in rows:
            definition = (self.definition.resources.get(row.name) if self.definition else None)
            if definition is None or definition.type != row.type:
                definition = ResourceDefinition(name=row.name, type=row.type)
            try:
                resource = self.instantiate(row.name, definition)
            except Exception:  # the type is gone (plug-in removed): keep the row manageable
                resource = Resource(row.name, definition, self)
            resource.id = row.id
            resource.action, resource.status, resource.status_reason = row.action, row.status, row.status_reason
            resource.resource_id = row.physical_resource_id
            resource.properties_data = row.properties_data or {}
            resource._data = dict(row.data or {})
            resource._metadata = row.rsrc_metadata or None
            resource.replaces, resource.replaced_by = row.replaces, row.replaced_by
            resource.requires = list(row.requires or [])
            if row.id in replaced or (self.definition is not None and row.name not in self.definition.resources):
                self.retired.append(resource)
            elif row.name in self.resources:
                self.retired.append(self.resources[row.name])
                self.resources[row.name] = resource
            else:
                self.resources[row.name] = resource

    # -- persistence -------------------------------------------------------------------
    async def insert(self, resources: Iterable[Resource]) -> None:
        """Give new resources their rows (one bulk insert, on the writer thread)."""
        resources = list(resources)
        if not resources:
            return
        rows = self.new_rows(resources)
        ids = await self.recorder.call(self.store.add_resources_bulk, rows, small=len(rows) <= SMALL_BATCH)
        for resource, new_id in zip(resources, ids):
            resource.id = new_id

    def new_rows(self, resources: Iterable[Resource]) -> list[dict]:
        """The rows new resources are stored with (each resource's ``requires`` set meanwhile)."""
        rows = []
        known = set(self.definition.resources)
        for resource in resources:
            resource.requires = sorted(resource.t.dependencies() & known)
            rows.append({
                "stack_id": self.id, "name": resource.name, "type": resource.type(),
                "requires": resource.requires, "replaces": resource.replaces,
                "action": resource.action, "status": resource.status,
            })
        return rows

    async def persist(self, resource: Resource, event: bool = True, durable: bool = False) -> None:
        """Queue the resource's row (and event); with ``durable``, wait until it is committed."""
        fields, record = self._fields(resource), self._event(resource) if event else None
        if durable:
            await self.recorder.write(resource.id, fields, record)
        else:
            self.recorder.queue(resource.id, fields, record)

    def record_event(self, resource: Resource, action: str, reason: str) -> None:
        """An event that is no state change of the resource (a signal's), queued with its row."""
        event = {**self._event(resource), "action": action, "reason": self.redact(reason)}
        self.recorder.queue(resource.id, self._fields(resource), event)

    def persist_soon(self, resource: Resource) -> None:
        if resource.id is not None:
            self.recorder.queue(resource.id, self._fields(resource))

    def _fields(self, resource: Resource) -> dict:
        fields = resource_fields(resource)
        fields["status_reason"] = self.redact(fields["status_reason"])
        return stored_resource_fields(self, fields)

    def _event(self, resource: Resource) -> dict:
        return {
            "uuid": new_uuid(),
            "stack_id": self.id,
            "resource_name": resource.name,
            "physical_resource_id": None if resource.resource_id is None else str(resource.resource_id),
            "resource_type": resource.type(),
            "action": resource.action,
            "status": resource.status,
            "reason": self.redact(resource.status_reason),
            "created_at": datetime.now(timezone.utc),
        }

    async def set_state(self, action: str, status: str, reason: str, release: str | None = None,
                        **fields: Any) -> None:
        """The stack's own state: persisted with an event, after its resources' changes
        (a state already set, as by a cancel before the action ends, is not set twice);
        ``release``: the owner whose lock on the stack is given up in the same commit."""
        reason = self.redact(reason)
        if not fields and (self.action, self.status, self.status_reason) == (action, status, reason):
            return
        self.action, self.status, self.status_reason = action, status, reason
        change = ({"action": action, "status": status, "status_reason": reason, **fields},
                  {"uuid": new_uuid(), "stack_id": self.id, "resource_name": self.name,
                   "physical_resource_id": self.id, "resource_type": STACK_RESOURCE_TYPE,
                   "action": action, "status": status, "reason": reason,
                   "created_at": datetime.now(timezone.utc)})
        if not fields and self.stored_state == (action, status, reason):  # on disk with the row already
            self.recorder.queue_stack(self.id, *change)
            return
        self.stored_state = None
        if release is None:
            await self.recorder.write_stack(self.id, *change)
        else:
            await self.recorder.write_stack(self.id, *change, release=release)

    def delete_rows(self, resources: Iterable[Resource]) -> None:
        self.store.delete_resources_bulk(r.id for r in resources if r.id is not None)
