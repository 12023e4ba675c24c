"""The ``Resource`` base class: the life cycle a plug-in plugs into.

A plug-in overrides ``handle_<action>`` (start the work, return a token) and
optionally ``check_<action>_complete(token)`` (is it done yet?).  The base
class drives them: it records ``(action, status, reason)``, persists every
change through the stack it belongs to, and polls ``check_*`` without
blocking other resources, as the steps of one ``ActionStepper``
(``resources/stepper.py``: how a resource polls, here and on the workers).

Plug-in methods are plain synchronous methods, as in Heat.  Built-in types
whose handlers never block run on the event loop; other plug-ins run their
handlers in a small thread pool, so a plug-in doing blocking I/O cannot
stall the whole stack.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, AsyncIterator, Callable

from stoker.errors import StokerError, ValidationFailed
from stoker.functions.base import resolve
from stoker.functions.sizes import check_stored
from stoker.secretbox import seal, unseal
from stoker.store.edits import DELETED, DataEdits
from stoker.resources import attributes as attributes_mod
from stoker.resources.exceptions import (
    InvalidTemplateAttribute,
    ResourceFailure,
    UpdateReplace,
)
from stoker.resources.properties import Properties
from stoker.resources.stepper import ActionStepper

if TYPE_CHECKING:  # pragma: no cover
    from stoker.template.definition import ResourceDefinition

#: where a resource's data keeps the action being polled, its token and the next delay,
#: so that another process picks the action up instead of starting it again
POLL_KEY = "stoker:polling"
#: where a resource's data keeps the poll of what a signal's handler started on the workers (a
#: signal leaves the resource's state alone), tagged with the signal's traversal
SIGNAL_POLL_KEY = "stoker:signal-polling"


class Resource:
    """Base class of every resource type."""

    ACTIONS = (INIT, CREATE, DELETE, UPDATE, ROLLBACK, SUSPEND, RESUME, ADOPT, SNAPSHOT, CHECK) = (
        "INIT", "CREATE", "DELETE", "UPDATE", "ROLLBACK", "SUSPEND", "RESUME", "ADOPT",
        "SNAPSHOT", "CHECK",
    )
    STATUSES = (IN_PROGRESS, FAILED, COMPLETE) = ("IN_PROGRESS", "FAILED", "COMPLETE")
    #: actions during which a signal is refused (Heat's ``no_signal_actions``); a plug-in whose
    #: action waits on a signal (a software deployment's delete or suspend) leaves them out
    NO_SIGNAL_ACTIONS: tuple[str, ...] = (SUSPEND, DELETE)

    properties_schema: dict = {}
    attributes_schema: dict = {}
    #: the keys ``update_policy`` may have (Heat refuses any other)
    update_policy_schema: dict = {}
    support_status = None
    default_client_name = None
    entity = None
    #: True for plug-ins whose handlers may block (the default for plug-ins)
    run_in_thread = True
    #: False for types whose actions change nothing outside Stoker's own state
    #: (``OS::Heat::None``, ``Value``, ``RandomString``): a crash mid-action
    #: can leave nothing behind to find, so their start need not be on disk
    #: before they act, and a chain of them runs without a commit per step
    acts_outside = True
    #: True for types that act on the machine Stoker runs on (files, commands): the
    #: API refuses them unless the operator allows local resources (resources/policy.py)
    acts_on_host = False
    #: resource types whose property changes never force a replacement
    update_allowed_properties: tuple = ()
    #: (definition, its properties), kept for the second validation pass: see ``_as_written``
    _written: tuple | None = None
    #: may an update leave the resource alone when its definition and inputs are
    #: unchanged (``engine/unchanged.py``)?  Not a nested stack: what changed inside
    #: it is for its own update to find
    leaves_unchanged_alone = True
    #: the signal (its traversal's id) this resource acts for on a worker: its polls are that signal's
    signal_id: str | None = None
    #: ``checked_at_once(verdicts)``: a type's check of a resource in one pass while a template is
    #: validated (the places of its values no service constraint checked, or None: the generic
    #: checks run); simulated OpenStack types have one (``openstack/one_pass.py``)
    checked_at_once: Any = None

    def __init__(self, name: str, definition: "ResourceDefinition", stack: Any):
        self.name = name
        self.t = definition
        self.stack = stack
        self.action = self.INIT
        self.status = self.COMPLETE
        self.status_reason = ""
        self.resource_id: Any = None
        self.id: int | None = None  # the database row
        self._data: dict = {}
        #: the data's keys changed (in order; those up to ``_data_written`` are written already): a
        #: plug-in's thread may add one while the stack's loop takes the others (``data_edits``)
        self._data_keys: list[str] = []
        self._data_written = 0
        self._metadata: Any = None
        self.properties_data: dict | None = None
        self.replaces: int | None = None
        self.replaced_by: int | None = None
        #: names of the resources this one needed when it was last created/updated
        self.requires: list[str] = []
        #: stored fields changed since the last write (the big JSON ones are
        #: written only when they change)
        self.dirty: set[str] = set()
        self._properties: Properties | None = None
        #: the event loop running this resource's actions (plug-in threads report to it)
        self._loop: asyncio.AbstractEventLoop | None = None

    # -- what the plug-in sees ----------------------------------------------------
    def type(self) -> str:
        return self.t.type

    def implementation(self) -> Any:
        """What runs this resource (see Stack.implementation): an update that changes it replaces."""
        return type(self)

    @property
    def state(self) -> tuple[str, str]:
        return self.action, self.status

    @property
    def properties(self) -> Properties:
        """Resolved, validated, typed property values."""
        if self._properties is None:
            self._properties = self.build_properties(self.t.properties)
        return self._properties

    def build_properties(self, data: Any, resolved: bool = False) -> Properties:
        """Properties over ``data``; functions in it are resolved on reading."""
        return Properties(
            self.properties_schema,
            data,
            path=("resources", self.name, "properties"),
            resolver=None if resolved else resolve,
        )

    def prepare_properties(self) -> Properties:
        """Resolve and check properties (and metadata) before the create uses them."""
        props = self.build_properties(self.t.properties)
        props.validate()
        self._properties = props
        self.properties_data = check_stored(props.resolved(), f"The properties of {self.name}")
        self.dirty.add("properties_data")
        if self.t.metadata:
            self._metadata = self._resolve(self.t.metadata)
            self.dirty.add("rsrc_metadata")
        return props

    def stored_properties(self) -> Properties:
        """The properties as last applied (from the store)."""
        return self.build_properties(self.properties_data or {}, resolved=True)

    def plan_update(self, definition: "ResourceDefinition", new_props: Properties) -> "UpdatePlan | None":
        """What changes between the applied state and ``definition``; None if nothing."""
        before = self.stored_properties().resolved()
        after = new_props.resolved()
        prop_diff = {k: after.get(k) for k in sorted(set(before) | set(after)) if before.get(k) != after.get(k)}
        tmpl_diff = {}
        metadata = self._resolve(definition.metadata)
        if metadata != (self._metadata or {}):
            tmpl_diff["Metadata"] = metadata
        if definition.update_policy != self.t.update_policy:
            tmpl_diff["UpdatePolicy"] = self._resolve(definition.update_policy)
        if definition.deletion_policy != self.t.deletion_policy:
            tmpl_diff["DeletionPolicy"] = definition.deletion_policy
        if not prop_diff and not tmpl_diff:
            return None
        if prop_diff:
            tmpl_diff["Properties"] = new_props.data
        forcing = [k for k in prop_diff if not self._update_allowed(k)]
        return UpdatePlan(prop_diff, tmpl_diff, forcing)

    def _update_allowed(self, key: str) -> bool:
        if key in self.update_allowed_properties:
            return True
        schema = self.properties_schema.get(key)
        return bool(schema is not None and schema.update_allowed)

    def matches(self, definition: "ResourceDefinition") -> bool:
        """Does ``definition`` describe exactly what this resource has applied?"""
        try:
            props = self.build_properties(definition.properties)
        except Exception:  # unresolvable now: certainly not the same
            return False
        return props.resolved() == (self.properties_data or {})

    def _resolve(self, data: Any) -> Any:
        return resolve(data) if data else {}

    def metadata_get(self) -> Any:
        if self._metadata is None:
            self._metadata = self._resolve(self.t.metadata)
        return self._metadata

    def metadata_set(self, metadata: Any) -> None:
        self._metadata = metadata
        self.dirty.add("rsrc_metadata")
        self._persist_soon()

    def data(self) -> dict:
        """Small key/value store a plug-in keeps with its resource (persisted)."""
        return {key: unseal(value) for key, value in self._data.items()}

    def data_set(self, key: str, value: Any, redact: bool = False) -> None:
        """``redact``: a secret (a generated password), kept encrypted, as Heat does."""
        value = check_stored(value, f"The data {key!r} of {self.name}")
        self.edit_data(key, seal(value) if redact else value)
        self._persist_soon()

    def data_delete(self, key: str) -> bool:
        found = self._data.get(key) is not None
        self.edit_data(key, DELETED)
        self._persist_soon()
        return found

    def edit_data(self, key: str, value: Any) -> None:
        """Set ``key`` of the data (``DELETED``: remove it), to be written as an edit of that key
        alone: other keys, written meanwhile by another process (a signal), stay as stored."""
        if value is DELETED:
            self._data.pop(key, None)
        else:
            self._data[key] = value
        self._data_keys.append(key)
        self.dirty.add("data")

    def data_edits(self) -> DataEdits:
        """The data's keys changed since the last call, as they are now (``DELETED``: gone)."""
        keys = self._data_keys[self._data_written:]
        self._data_written += len(keys)
        return DataEdits({key: self._data.get(key, DELETED) for key in keys})

    def resource_id_set(self, resource_id: Any) -> None:
        self.resource_id = resource_id
        self._persist_soon()

    def _persist_soon(self) -> None:
        """Have the stack store this resource soon.  A plug-in running in a
        worker thread calls the setters there; the stack must hear on its loop."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:  # a worker thread, or no action running at all (a signal)
            if self._loop is not None:
                self._loop.call_soon_threadsafe(self.stack.persist_soon, self)
            return  # with no loop the caller writes the dirty fields itself
        self.stack.persist_soon(self)

    def physical_resource_name(self) -> str:
        """A name unique to this resource (and to this replacement of it)."""
        digest = hashlib.sha1(f"{self.stack.id}/{self.name}/{self.id}".encode()).hexdigest()[:12]
        return f"{self.stack.name}-{self.name}-{digest}"[:255]

    # -- handlers a plug-in overrides ---------------------------------------------
    def handle_create(self) -> Any:
        return None

    def check_create_complete(self, token: Any) -> bool:
        return True

    def handle_update(self, json_snippet: Any, tmpl_diff: dict, prop_diff: dict) -> Any:
        if prop_diff:
            raise UpdateReplace(self.name)
        return None

    def check_update_complete(self, token: Any) -> bool:
        return True

    def handle_delete(self) -> Any:
        return None

    def check_delete_complete(self, token: Any) -> bool:
        return True

    def handle_suspend(self) -> Any:
        return None

    def check_suspend_complete(self, token: Any) -> bool:
        return True

    def handle_resume(self) -> Any:
        return None

    def check_resume_complete(self, token: Any) -> bool:
        return True

    def handle_snapshot(self) -> Any:
        """Keep what a restore needs (``data_set``): the resource data goes into the snapshot."""
        return None

    def check_snapshot_complete(self, token: Any) -> bool:
        return True

    def needs_replace_failed(self) -> bool:
        """Is this resource, its last action failed, replaced by the next update?  As in
        Heat: yes, unless the type knows its failed resource can still be updated."""
        return True

    def handle_check(self) -> Any:
        return None

    def check_check_complete(self, token: Any) -> bool:
        return True

    def validate(self) -> None:
        """Extra checks a plug-in wants beyond its schema (raise to reject)."""

    def poll_delay(self, token: Any) -> float | None:
        """Seconds until ``check_*_complete`` is worth calling again, if the plug-in knows.

        A Stoker extension of Heat's API: a plug-in waiting for a known moment
        says so and is polled exactly then, instead of on the backoff schedule.
        """
        return None

    def _resolve_attribute(self, name: str) -> Any:
        return None

    def get_live_state(self, resource_properties: dict) -> dict | None:
        """What the physical resource's properties are now, for ``stack update --converge``
        (Heat's name and argument: the properties as last applied).  None: this type cannot
        tell, and the resource is taken to be as applied."""
        return None

    def _show_resource(self) -> Any:
        return {}

    def get_reference_id(self) -> Any:
        return self.resource_id if self.resource_id is not None else self.name

    # -- attributes -------------------------------------------------------------------
    @classmethod
    def attribute_schemata(cls) -> dict:
        return attributes_mod.schemata(cls.attributes_schema)

    @classmethod
    def has_attribute(cls, name: str) -> bool:
        """May ``get_attr`` ask for ``name``?  Types with dynamic attributes override."""
        return name in cls.attribute_schemata()

    def FnGetRefId(self) -> Any:  # noqa: N802 - Heat's name, plug-ins call it
        return self.get_reference_id()

    def FnGetAtt(self, key: str, *path: Any) -> Any:  # noqa: N802
        if not self.has_attribute(key):
            raise InvalidTemplateAttribute(resource=self.name, key=key)
        if self.action == self.INIT or (self.action == self.CREATE and self.status != self.COMPLETE
                                        and self.resource_id is None):
            return None
        value = self._show_resource() if key == attributes_mod.SHOW else self._resolve_attribute(key)
        from stoker.functions.references import select_path

        return select_path(value, list(path)) if path else value

    def all_attributes(self) -> dict:
        """Heat's rule for ``get_attr: [name]``: every attribute of the schema and every one
        the stack's template reads whole elsewhere (types with dynamic attributes), but ``show``."""
        names = set(self.attribute_schemata())
        definition = self.stack.definition if self.stack is not None else None
        if definition is not None:
            from stoker.functions.references import attributes_read_whole

            template = definition.template
            read = attributes_read_whole([template.section("resources"), template.section("outputs")], self.name)
            names |= {name for name in read if self.has_attribute(name)}
        return {name: self.FnGetAtt(name) for name in sorted(names) if name != attributes_mod.SHOW}

    # -- the life cycle (driven by the engine) ---------------------------------------
    async def create(self) -> None:
        await self.run_action(self.CREATE, self.handle_create, self.check_create_complete)

    async def delete(self) -> None:
        await self.run_action(self.DELETE, self.handle_delete, self.check_delete_complete)

    async def suspend(self) -> None:
        await self.run_action(self.SUSPEND, self.handle_suspend, self.check_suspend_complete)

    async def resume(self) -> None:
        await self.run_action(self.RESUME, self.handle_resume, self.check_resume_complete)

    async def snapshot(self) -> None:
        await self.run_action(self.SNAPSHOT, self.handle_snapshot, self.check_snapshot_complete)

    async def check(self) -> None:
        await self.run_action(self.CHECK, self.handle_check, self.check_check_complete)

    async def update(self, definition: "ResourceDefinition", new_properties: Properties,
                     tmpl_diff: dict, prop_diff: dict) -> None:
        """Update in place; ``UpdateReplace`` propagates (the planner replaces)."""
        old = self.t, self._properties, self.properties_data, self._metadata
        self.t, self._properties = definition, new_properties
        self.properties_data = new_properties.resolved()
        self._metadata = self._resolve(definition.metadata)
        self.dirty.update(("properties_data", "rsrc_metadata"))

        try:
            await self.run_action(self.UPDATE, lambda: self.handle_update(definition, tmpl_diff, prop_diff),
                                  self.check_update_complete, pass_through=(UpdateReplace,))
        except UpdateReplace:
            self.t, self._properties, self.properties_data, self._metadata = old
            raise
        # what the next update is planned against
        self.properties_data = new_properties.resolved()
        await self.stack.persist(self, event=False)

    async def adopt(self, resource_id: Any) -> None:
        """Take over an existing physical resource (``external_id``); an empty id fails
        the adopt, as Heat's ``handle_adopt``."""
        if not resource_id:
            failure = ResourceFailure(StokerError("Resource ID was not provided."), self, self.ADOPT)
            await self.set_state(self.ADOPT, self.FAILED, str(failure))
            raise failure
        self.resource_id = resource_id
        await self.set_state(self.ADOPT, self.COMPLETE, "adopted external resource")
        await self.check()

    async def set_state(self, action: str, status: str, reason: str = "") -> None:
        """Record a state change, with its event.

        Only the start of an action that acts outside waits for the disk (so a
        crash never hides a physical resource).  Every other change goes out
        with the next batch, ahead of anything queued after it: before any
        dependent's own start is durable, and before the stack's end is.
        """
        self.action, self.status, self.status_reason = action, status, reason
        await self.stack.persist(self, event=True, durable=status == self.IN_PROGRESS and self.acts_outside)

    async def run_action(self, action: str, handler: Callable, checker: Callable,
                         pass_through: tuple = ()) -> None:
        """Record IN_PROGRESS, call ``handler``, poll ``checker``, record the end: one stepper's
        steps, as the stack's driver takes them (``resources/stepper.py``).  An action a stopped
        server handed back (its poll stored) is polled again where it stood, without calling
        ``handler`` a second time."""
        await ActionStepper(self, action, handler, checker, pass_through).run()

    async def pick_up(self, action: str) -> bool:
        """Go on with ``action``, interrupted in progress when a server stopped; False when
        there is nothing to pick it up from (no poll was kept)."""
        if self.stored_poll(action) is None:
            return False
        self._properties = self.stored_properties()  # as the interrupted action had them
        await getattr(self, action.lower())()  # run_action picks the kept poll up
        return True

    def winding_down(self) -> bool:
        """Whether something this resource started elsewhere still runs after its action was
        stopped (a nested stack's action on the workers), so that its failure waits for that end."""
        return False

    def poll_begun(self, token: Any) -> tuple[bool, Any]:
        """For a poll another process kept: whether what it polls was begun, and the token to poll
        it with.  A type that keeps its poll before it begins (a nested stack's action on the
        workers) says no when that process was lost in between: the action starts again."""
        return True, token

    def handler_cut_short(self) -> bool:
        """Did the process running this resource's handler die before the handler returned?  A type
        that knows (a command it was running is still recorded) says so: its create then starts
        again rather than going on as if its handler had ended (``ActionStepper``)."""
        return False

    def stored_poll(self, action: str) -> dict | None:
        """The poll of ``action`` kept when it was interrupted in progress, if any (acting for a
        signal: that signal's poll, whatever the resource's state)."""
        polling = self._data.get(self._poll_key()) or {}
        if polling.get("action") != action:
            return None
        if self.signal_id is not None:
            return polling if polling.get("signal") == self.signal_id else None
        return polling if self.state == (action, self.IN_PROGRESS) else None

    def keep_poll(self, action: str, token: Any, delay: float) -> bool:
        """Keep the poll of ``action`` in the resource's data; False if the token cannot be stored."""
        try:
            json.dumps(token, allow_nan=False)
        except (TypeError, ValueError):
            return False
        polling = {"action": action, "token": token, "delay": delay}
        self.edit_data(self._poll_key(), polling if self.signal_id is None else {**polling, "signal": self.signal_id})
        return True

    def forget_poll(self) -> None:
        if self._poll_key() in self._data:
            self.edit_data(self._poll_key(), DELETED)

    def _poll_key(self) -> str:
        """A signal's polls go apart from the resource's own action's, which they must not disturb."""
        return POLL_KEY if self.signal_id is None else SIGNAL_POLL_KEY

    async def wait_a_while(self, seconds: float) -> None:
        """Wait before looking again at what this resource waits for (a paused hook): here, a sleep;
        on a worker, the step parks with a countdown instead (the stack's driver)."""
        await self.stack.driver.pause(seconds)

    @asynccontextmanager
    async def acting(self, action: str, pass_through: tuple = ()) -> AsyncIterator[None]:
        """Around one action: its failure (or cancel) recorded as FAILED, its end as COMPLETE.

        Exceptions that are not ``Exception`` (a dispatch worker parking an
        action until its next poll) leave the state as it is.
        """
        try:
            yield
        except pass_through:
            await self.set_state(action, self.COMPLETE, "replacement needed")
            raise
        except asyncio.CancelledError:
            if self.stack.root.handing_back:  # left in progress, for the next server to resume
                await asyncio.shield(self.stack.persist(self, event=False))
            else:
                await self._record_failure(action, self.stack.cancel_reason or "cancelled")
            raise
        except Exception as exc:  # a plug-in may raise anything: it becomes the reason
            failure = ResourceFailure(exc, self, action)
            await self._record_failure(action, str(failure))
            raise failure from exc
        await self.set_state(action, self.COMPLETE, "state changed")

    async def _record_failure(self, action: str, reason: str) -> None:
        await asyncio.shield(self.set_state(action, self.FAILED, reason))

    # -- validation ---------------------------------------------------------------------
    def validate_shape(self) -> None:
        """What Heat's ``template validate`` checks of a resource: which properties are
        given (not their values), its deletion and update policies."""
        if str(self.t.deletion_policy).lower() == "snapshot" and not callable(getattr(self, "handle_snapshot_delete", None)):
            raise ValidationFailed.single(("resources", self.name, "deletion_policy"), "invalid-deletion-policy",
                                          '"Snapshot" deletion policy not supported')
        self._as_written().validate(with_value=False)
        if self.t.update_policy or self.update_policy_schema:  # most resources have neither
            Properties(self.update_policy_schema, self.t.update_policy or {},
                       path=("resources", self.name, "update_policy")).validate()

    def validate_template(self) -> None:
        """Static checks: the schema on what is known now, then the plug-in's own."""
        properties = self._as_written()
        properties.validate(with_value=True)
        if self._properties is None:
            self._properties = properties  # the plug-in's validate() reads the same ones
        self.validate()

    def _as_written(self) -> Properties:
        """The properties of this definition, built once for both validation passes (shape, values)."""
        kept = self._written
        if kept is None or kept[0] is not self.t:
            kept = self._written = self.t, self.build_properties(self.t.properties)
        return kept[1]


class UpdatePlan:
    """The difference an update makes to one resource."""

    def __init__(self, prop_diff: dict, tmpl_diff: dict, forcing: list[str]):
        self.prop_diff = prop_diff
        self.tmpl_diff = tmpl_diff
        #: changed properties that cannot be updated in place
        self.forcing = forcing

    @property
    def replace(self) -> bool:
        return bool(self.forcing)
