"""The resource class of an OpenStack type no plug-in implements: Heat's schema, simulated life.

``simulated_class(name)`` builds (once per type) a subclass of ``SimulatedResource`` carrying the
type's property and attribute schemas from the catalogue, so validation is the same as for any
plug-in.  A create makes nothing anywhere: the resource gets a physical id derived from its
stack, name and row (stable for the same stack, new for a replacement), and its attributes are
computed at create (and again at an update) from its properties and the simulated resources it
refers to (``shapes``), then kept in its data: they read the same in every process and after a restart.
"""

from __future__ import annotations

import functools
import json
import uuid
from typing import Any

from stoker.functions.base import resolve
from stoker.resources import attributes as attributes_mod
from stoker.resources.builtin.none import NoneResource
from stoker.resources.exceptions import NotSupported, UnknownResourceType
from stoker.resources import properties
from stoker.resources.openstack import catalogue, faults, inventory, one_pass, renames, schemas, shapes
from stoker.resources.properties import Properties
from stoker.resources.resource import Resource, UpdatePlan

ATTRIBUTES_KEY = shapes.ATTRIBUTES_KEY
_ID_NAMESPACE = uuid.UUID("6f1c9a52-3c53-4f0e-9a8e-51b0c1d0c10d")
#: properties a type updates in place unless a policy property of it says REPLACE (as Heat's server)
_REPLACED_BY_POLICY = {"OS::Nova::Server": {"flavor": "flavor_update_policy", "image": "image_update_policy",
                                            "user_data": "user_data_update_policy"}}
#: types whose reference, as in Heat, is their physical resource name (``<stack>-<name>-<suffix>``), not an id
_REFERENCED_BY_NAME = frozenset({"AWS::AutoScaling::LaunchConfiguration", "AWS::EC2::EIPAssociation"})
#: types whose reference, as in Heat, is the address they hold (their id is an attribute)
_REFERENCED_BY_ADDRESS = frozenset({"AWS::EC2::EIP"})
#: what a simulated resource's ``status`` attribute reads after each action
_STATUS_AFTER = {"SUSPEND": "SUSPENDED", "RESUME": "ACTIVE"}


class SimulatedResource(Resource):
    """An OpenStack resource that exists only in Stoker's state (``simulated`` in listings)."""

    simulated = True
    run_in_thread = False
    acts_outside = False
    heat_type = ""
    #: the properties whose value (or a value inside) a service constraint checks
    service_properties: frozenset = frozenset()
    #: Heat's renames of deprecated properties (old path, new path), applied before reading
    renames: tuple = ()

    def build_properties(self, data: Any, resolved: bool = False) -> Properties:
        """Properties under their new names (as Heat translates them; stored values, resolved,
        are so already), whose service constraints see this resource (its stack's simulated ones
        join the cloud inventory)."""
        path = ("resources", self.name, "properties")
        if self.renames and not resolved:
            data = self._renamed(data, path)
        return Properties(self.properties_schema, data, path=path,
                          resolver=None if resolved else resolve, context=self)

    def _renamed(self, data: Any, path: tuple) -> Any:
        """``data`` under the new names; the last answer is kept, as the same data is read again
        (a create after its checks, the shapes of the resources referring to this one)."""
        last = getattr(self, "_last_renamed", None)
        if last is not None and last[0] is data:
            return last[1]
        moved = renames.renamed(self.renames, data, path)
        self._last_renamed = data, moved
        return moved

    @classmethod
    def attribute_schemata(cls) -> dict:
        """Built once per type (its schema comes from the catalogue and never changes): every
        ``get_attr`` of a template being checked asks for it."""
        built = cls.__dict__.get("_attribute_schemata")
        if built is None:
            built = super().attribute_schemata()
            cls._attribute_schemata = built
        return built

    def unchecked_constraints(self, verdicts: dict | None = None) -> list[tuple[tuple, str]]:
        """The places of the values no service constraint could check (no inventory of their kind);
        ``verdicts``: the walk's answers, shared by a pass over many resources."""
        data = self.t.properties
        if not isinstance(data, dict):
            return []
        return inventory.unchecked_places(self.properties_schema, data, ("resources", self.name, "properties"),
                                          verdicts, None, self.service_properties)

    def checked_at_once(self, verdicts: dict) -> list | None:
        """The places of the values no service constraint could check (``unchecked_constraints``),
        when one generated pass (``one_pass``) finds nothing wrong with this resource; None when
        it cannot tell, and the generic checks (``validate_shape``, ``validate_template``) run."""
        definition = self.t
        data = definition.properties
        policy = definition.deletion_policy
        if type(data) is not dict or definition.update_policy or (policy != "Delete" and policy != "Retain"):
            return None
        cls = type(self)
        kept = cls.__dict__.get("_one_pass")
        if kept is None:
            kept = cls._one_pass = {} if _checked_as_written(cls) else None
            if kept is None:
                return None
        keys = tuple(data)
        check = kept.get(keys) or one_pass.checker(cls.properties_schema, keys, cls.service_properties, kept,
                                                   cls.renames)
        try:
            return check(data, ("resources", self.name, "properties"), self, verdicts)
        except Exception:  # noqa: BLE001 -- whatever the generated code does not expect: the generic checks report it
            return None

    def physical_id(self) -> str:
        """The id this resource has (or will have, once created): fixed by its stack, name and row."""
        key = (self.stack.id, self.id)
        if getattr(self, "_physical_id", (None, None))[0] != key:
            self._physical_id = key, str(uuid.uuid5(_ID_NAMESPACE, f"{self.stack.id}/{self.name}/{self.id}"))
        return self._physical_id[1]

    def get_reference_id(self) -> Any:
        if self.heat_type in _REFERENCED_BY_NAME and self.resource_id is not None:
            return self.physical_resource_name()
        if self.heat_type in _REFERENCED_BY_ADDRESS and self.resource_id is not None:
            return shapes.public_address(self)
        return super().get_reference_id()

    def handle_create(self) -> Any:
        token = faults.begin(self, "create")
        self.resource_id_set(self.physical_id())
        self.data_set(ATTRIBUTES_KEY, shapes.attribute_values(self))
        return token

    def check_create_complete(self, token: Any) -> bool:
        return faults.done(token)

    def poll_delay(self, token: Any) -> float | None:
        return faults.remaining(token)

    def plan_update(self, definition: Any, new_props: Any) -> UpdatePlan | None:
        """As Heat: a change to an immutable property is refused (by the update itself), one to a
        property not updatable replaces, the others are updated in place."""
        plan = super().plan_update(definition, new_props)
        if plan is None:
            return None
        if any(self._immutable(k) for k in plan.prop_diff):
            plan.forcing = []
            return plan
        policies = _REPLACED_BY_POLICY.get(self.heat_type, {})
        after = new_props.resolved()
        plan.forcing += [k for k in plan.prop_diff if k in policies and after.get(policies[k]) == "REPLACE"]
        return plan

    def _immutable(self, key: str) -> bool:
        schema = self.properties_schema.get(key)
        return bool(schema is not None and schema.immutable)

    def handle_update(self, json_snippet: Any, tmpl_diff: dict, prop_diff: dict) -> Any:
        refused = sorted(k for k in prop_diff if self._immutable(k))
        if refused:
            raise NotSupported(feature=f"Update to properties {', '.join(refused)} of {self.name} "
                                       f"({self.heat_type})")
        token = faults.begin(self, "update")
        self.data_set(ATTRIBUTES_KEY, shapes.attribute_values(self))
        return token

    def check_update_complete(self, token: Any) -> bool:
        return faults.done(token)

    def handle_delete(self) -> Any:
        return faults.begin(self, "delete")

    def check_delete_complete(self, token: Any) -> bool:
        return faults.done(token)

    def handle_suspend(self) -> None:
        self._set_status("SUSPEND")

    def handle_resume(self) -> None:
        self._set_status("RESUME")

    def _set_status(self, action: str) -> None:
        values = dict(self.data().get(ATTRIBUTES_KEY) or {})
        values["status"] = _STATUS_AFTER[action]
        self.data_set(ATTRIBUTES_KEY, values)

    def _resolve_attribute(self, name: str) -> Any:
        stored = self.data().get(ATTRIBUTES_KEY) or {}
        return shapes.current_values(self, stored, name).get(name)  # only names of the schema get here

    def _show_resource(self) -> Any:
        return shapes.show(self, shapes.current_values(self, self.data().get(ATTRIBUTES_KEY) or {}))


class SimulatedDynamic(SimulatedResource):
    """A type whose attributes are not all declared (a nested stack's ``Outputs.x``, a group's
    ``resource.0``, a deployment's config outputs): ``get_attr`` of any name, null when unknown."""

    @classmethod
    def has_attribute(cls, name: str) -> bool:
        return True


def _checked_as_written(cls: type) -> bool:
    """Does ``cls`` validate as ``SimulatedResource`` does (no check of its own, an update policy
    that finds nothing to check when none is given)?  Only then may ``one_pass`` stand for it."""
    return (cls.validate is Resource.validate and cls.validate_shape is Resource.validate_shape
            and cls.validate_template is Resource.validate_template
            and cls.build_properties is SimulatedResource.build_properties
            and cls.unchecked_constraints is SimulatedResource.unchecked_constraints
            and isinstance(cls.properties_schema, properties.Schemata)
            and not properties._checked_when_absent(cls.update_policy_schema))


def _snapshot_delete(self: SimulatedResource, state: Any) -> None:
    """``deletion_policy: Snapshot`` of a type that can snapshot: the snapshot is simulated too."""
    return self.handle_delete()


@functools.cache
def simulated_class(type_name: str) -> type:
    """The class of ``type_name``, built from the catalogue (``UnknownResourceType`` if absent)."""
    entry = catalogue.entry(type_name)
    if entry is None:
        raise UnknownResourceType(type_name, "")
    if entry.get("placeholder"):  # a type Heat removed and keeps as OS::Heat::None
        return type("Removed" + _class_name(type_name), (NoneResource,), {
            "__doc__": f"{type_name}, removed from Heat: a placeholder that does nothing (as OS::Heat::None).",
            "support_status": schemas.support_status(entry.get("support_status"))})
    namespace: dict[str, Any] = {
        "__doc__": f"{type_name}, simulated offline from Heat's schema (no {entry.get('service') or 'cloud'} "
                   "service is called).",
        "heat_type": type_name,
        "properties_schema": schemas.properties_schema(entry),
        "update_policy_schema": schemas.properties_schema(entry, "update_policy"),
        "attributes_schema": {k: v for k, v in schemas.attributes_schema(entry).items()
                              if k != attributes_mod.SHOW},
        "support_status": schemas.support_status(entry.get("support_status")),
        "default_client_name": entry.get("service"),
        "service_properties": frozenset(name for name, data in entry.get("properties", {}).items()
                                        if '"custom_constraint"' in json.dumps(data)),
        "renames": renames.from_entries(entry.get("renames", ())),
    }
    if entry.get("snapshot"):
        namespace["handle_snapshot_delete"] = _snapshot_delete
    base = SimulatedDynamic if entry.get("dynamic_attributes") else SimulatedResource
    return type("Simulated" + _class_name(type_name), (base,), namespace)


def _class_name(type_name: str) -> str:
    return "".join(part for part in type_name.split("::")[1:])
