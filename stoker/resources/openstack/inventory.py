"""The cloud a user describes (``cloud.yaml``): what Heat's service constraints check against.

Heat asks Nova whether a flavor exists; Stoker has no Nova, so the user lists what their cloud
has::

    flavors: [m1.small, {name: m1.large, id: 5}]
    images: [cirros-0.6]
    networks: [{name: public, id: 8d3f...}]
    subnets: [{name: public-subnet, cidr: 172.24.4.0/24, network: public}]
    keypairs: [ops]
    volume_types: [lvmdriver-1]
    availability_zones: [nova]
    services: [nova, glance, neutron, cinder]       # optional: the other services' types are unavailable
    faults: [{resource: server, action: create, fail: "No valid host"}]   # see faults.py

The file comes from ``--inventory`` (which sets ``STOKER_INVENTORY``), ``STOKER_INVENTORY``, or
``inventory`` in ``$STOKER_HOME/stoker.conf``.  A value is valid when the inventory names it (by
name or id), when a simulated resource of the stack being checked has it as its id or name, or
when a resource of that type in another live stack of the project has it as its id (simulated
resources join the cloud while they exist); a key pair also when the project made it through the
API's compute routes.  A constraint whose kind the inventory
does not list (or with no inventory at all) accepts any value, and ``template validate`` warns.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Iterator

from stoker.constraints import custom
from stoker.constraints.services import SERVICE_CONSTRAINTS, Unchecked
from stoker.errors import StokerError, ValidationFailed
from stoker.functions.base import SCALAR_TYPES, Function
from stoker.home import config, stoker_home
from stoker.resources.properties import AnyIndexDict
from stoker.store.keypairs import KeypairStore

ENVIRONMENT_VARIABLE = "STOKER_INVENTORY"

#: constraint name -> (inventory key, the Heat type whose simulated resources join it, Heat's message)
KINDS: dict[str, tuple[str, str | None, str]] = {
    "nova.flavor": ("flavors", "OS::Nova::Flavor", "The Flavor ID ({value}) could not be found."),
    "glance.image": ("images", "OS::Glance::WebImage", "The Image ({value}) could not be found."),
    "nova.keypair": ("keypairs", "OS::Nova::KeyPair", "The Key ({value}) could not be found."),
    "nova.server": ("servers", "OS::Nova::Server", "The server ({value}) could not be found."),
    "neutron.network": ("networks", "OS::Neutron::Net", "Unable to find network with name or id '{value}'"),
    "neutron.subnet": ("subnets", "OS::Neutron::Subnet", "Unable to find subnet with name or id '{value}'"),
    "neutron.port": ("ports", "OS::Neutron::Port", "Unable to find port with name or id '{value}'"),
    "neutron.router": ("routers", "OS::Neutron::Router", "Unable to find router with name or id '{value}'"),
    "neutron.security_group": ("security_groups", "OS::Neutron::SecurityGroup",
                               "Unable to find security_group with name or id '{value}'"),
    "cinder.volume": ("volumes", "OS::Cinder::Volume", "The Volume ({value}) could not be found."),
    "cinder.vtype": ("volume_types", "OS::Cinder::VolumeType", "The VolumeType ({value}) could not be found."),
    "cinder.snapshot": ("volume_snapshots", "OS::Cinder::VolumeSnapshot",
                        "The VolumeSnapshot ({value}) could not be found."),
}
#: the sections a cloud.yaml may have
SECTIONS = tuple(sorted({key for key, _, _ in KINDS.values()} | {"availability_zones", "faults", "services"}))
#: the problem code of a type whose service the inventory's ``services`` leaves out (Heat's ResourceTypeUnavailable)
UNAVAILABLE = "resource-type-unavailable"


class InventoryError(StokerError):
    code = "invalid-inventory"


def inventory_path() -> Path | None:
    """The inventory file in force: ``STOKER_INVENTORY``, else ``inventory`` in stoker.conf."""
    chosen = os.environ.get(ENVIRONMENT_VARIABLE)
    if chosen:
        return _path(chosen, os.environ.get("STOKER_HOME"))
    return _configured(os.environ.get("STOKER_HOME"))


@functools.lru_cache(maxsize=8)
def _configured(home: str | None) -> Path | None:
    """``inventory`` in stoker.conf, read once per process and home, as plug-in folders are (every
    check of a service constraint asks)."""
    return _path(config().defaults().get("inventory", ""), home)


@functools.lru_cache(maxsize=8)
def _path(chosen: str, home: str | None) -> Path | None:
    if not chosen.strip():
        return None
    path = Path(chosen.strip()).expanduser()
    return path if path.is_absolute() else stoker_home() / path


#: the inventory a whole pass of checks reads (``pinned``): an Inventory, None, or the error finding it gave
_PINNED: contextvars.ContextVar = contextvars.ContextVar("stoker_pinned_inventory")


@contextlib.contextmanager
def pinned() -> Iterator[None]:
    """Within: ``current()`` answers what it found on entry.  A template's validation checks
    thousands of values; one look at the file serves them all (the file is not expected to
    change in the middle of one check)."""
    try:
        found: Any = _looked_up()
    except InventoryError as exc:
        found = exc
    token = _PINNED.set(found)
    try:
        yield
    finally:
        _PINNED.reset(token)


def current() -> "Inventory | None":
    """The inventory in force (read again only when the file changes), None when there is none."""
    found = _PINNED.get(_looked_up)
    if found is _looked_up:
        return _looked_up()
    if isinstance(found, InventoryError):
        raise found
    return found


def _looked_up() -> "Inventory | None":
    path = inventory_path()
    if path is None:
        return None
    try:
        stat = path.stat()
    except OSError as exc:
        raise InventoryError(f"inventory {path}: cannot be read ({exc.strerror})") from None
    return _read(str(path), stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=4)
def _read(path: str, mtime: int, size: int) -> "Inventory":
    """The file parsed as templates are: size, depth and alias limits, no traceback on bad YAML."""
    from stoker.template.loader import load, read_file

    try:
        data = load(read_file(path), name=path)
    except ValidationFailed as exc:
        raise InventoryError(f"inventory {path}: {exc.problems[0].message if exc.problems else exc}") from None
    return Inventory(data or {}, path)


class Inventory:
    """What a cloud has: per section, the names and ids it knows, and each item as written."""

    def __init__(self, data: Any, where: str = "<inventory>"):
        if not isinstance(data, Mapping):
            raise InventoryError(f"inventory {where}: must be a map of sections ({', '.join(SECTIONS)})")
        unknown = sorted(set(map(str, data)) - set(SECTIONS))
        if unknown:
            raise InventoryError(f"inventory {where}: unknown section {unknown[0]!r}; valid: {', '.join(SECTIONS)}")
        self.where = where
        self.sections: dict[str, list[dict]] = {}
        for section, items in data.items():
            if section == "faults":
                continue
            if not isinstance(items, list):
                raise InventoryError(f"inventory {where}: {section} must be a list")
            self.sections[section] = [_item(section, i, item, where) for i, item in enumerate(items)]
        self.faults = data.get("faults") or []
        if not isinstance(self.faults, list):
            raise InventoryError(f"inventory {where}: faults must be a list")

    def knows(self, section: str) -> bool:
        return section in self.sections

    def find(self, section: str, value: Any) -> dict | None:
        """The item named ``value`` (or with that id) in ``section``."""
        if value is None:
            return None
        text = str(value)
        return next((item for item in self.sections.get(section, ())
                     if text in (str(item.get("name", "")), str(item.get("id", "")))), None)


def unavailable(cls: type | None, type_name: str) -> str | None:
    """Why a simulated type cannot be used: the inventory lists the cloud's ``services`` (as
    Keystone's catalogue does) and not the one the type needs; None when it can."""
    service = getattr(cls, "default_client_name", None) if getattr(cls, "simulated", False) else None
    found = current() if service else None
    if found is None or not found.knows("services") or found.find("services", service) is not None:
        return None
    return (f"HEAT-E99001 Service {service} is not available for resource type {type_name}, "
            "reason: Service endpoint not in service catalog.")


def _item(section: str, index: int, item: Any, where: str) -> dict:
    if isinstance(item, (str, int)):
        return {"name": str(item)}
    if isinstance(item, Mapping) and ("name" in item or "id" in item):
        return dict(item)
    raise InventoryError(f"inventory {where}: {section}[{index}] must be a name or a map with a name or an id")


class ServiceCheck:
    """A service constraint (``nova.flavor``...) checked against the inventory and the stack's
    simulated resources; with nothing to check against it accepts any value (``unchecked``)."""

    def __init__(self, name: str):
        self.name = name
        self.section, self.joins, self.template = KINDS[name]
        self.message = f"The value must be a valid {name} (checked against the cloud inventory)."

    @property
    def unchecked(self) -> bool:
        try:
            found = current()
        except InventoryError:
            return False  # checked, and the check says what is wrong with the inventory
        return found is None or not found.knows(self.section)

    def validate(self, value: Any, context: Any = None) -> bool:
        found = current()
        if found is None or not found.knows(self.section) or _previewed(context):
            return True
        return (found.find(self.section, value) is not None or _simulated(context, self.joins, value)
                or (self.section == "keypairs" and _made_through_api(context, value)))

    def error(self, value: Any) -> str:
        return f"Error validating value '{value}': {self.template.format(value=value)}"


def _previewed(resource: Any) -> bool:
    """Is ``resource`` in a stack a create preview lists?  Its values may be names standing for
    resources not made yet (``create_preview``), which no cloud knows."""
    return bool(getattr(getattr(resource, "stack", None), "previewing", False))


def _simulated(resource: Any, type_name: str | None, value: Any) -> bool:
    """Is ``value`` the id or name of a simulated resource of ``type_name`` in the stack of
    ``resource``, or the id of one in another live stack of its project?"""
    stack = getattr(resource, "stack", None)
    if stack is None or type_name is None:
        return False
    for other in list(stack.resources.values()):
        if other.type() == type_name and getattr(other, "simulated", False) and other.resource_id is not None:
            if str(value) in (str(other.resource_id), str(other.FnGetAtt("name") if other.has_attribute("name") else "")):
                return True
    engine = getattr(stack, "engine", None)  # a template check that opened no database does not open one
    return bool(getattr(engine, "store_open", False)) and engine.store.has_live_resource(
        stack.project_id, type_name, str(value))


def _made_through_api(resource: Any, name: Any) -> bool:
    """Is ``name`` a key pair the project of ``resource`` made through the compute API
    (``stoker/api/routes/compute.py``)?"""
    stack = getattr(resource, "stack", None)
    engine = getattr(stack, "engine", None)
    if not getattr(engine, "store_open", False):
        return False  # a template check that opened no database does not open one
    return KeypairStore(engine.store.engine).exists(stack.project_id, str(name))


def unchecked_places(schemas: Mapping, data: Any, path: tuple, verdicts: dict | None = None,
                     found: list | None = None, among: frozenset | None = None) -> list[tuple[tuple, str]]:
    """(place, constraint name) of each value given in ``data`` (a resource's properties, as
    written; only the keys ``among`` when given) that a service constraint would check, had the
    inventory listed its kind.  ``verdicts`` keeps each constraint's answer (asking reads the
    inventory) and the walk's plan for each schema and set of keys given: one dict may serve every
    resource of a pass of checks, the inventory being pinned for it.  The places are appended to
    ``found`` (a list, not a generator: this walk runs for every resource checked)."""
    verdicts = {} if verdicts is None else verdicts
    found = [] if found is None else found
    kind = type(data)
    listed = kind is list or (kind is not dict and isinstance(data, list))
    if listed and isinstance(schemas, AnyIndexDict):
        keys: Any = (id(schemas), among, len(data))
    elif not listed and (kind is dict or isinstance(data, Mapping)):
        keys = (id(schemas), among, *data)
    else:
        return found
    plan = verdicts.get(keys)
    if plan is None:  # the schema is kept with its plan: its id is not taken by another while the pass runs
        plan = verdicts[keys] = schemas, _plan(schemas, range(len(data)) if listed else data, among, verdicts)
    for key, names, nested in plan[1]:
        value = data[key]
        kind = type(value)  # exact types first, and no ABC check of ``Function`` (slow)
        if kind not in SCALAR_TYPES and kind is not dict and kind is not list and Function in kind.__mro__:
            continue  # a function's value is checked (or not) when it is known
        for name in names:
            found.append((path + (key,), name))
        if nested is not None and kind not in SCALAR_TYPES:
            unchecked_places(nested, value, path + (key,), verdicts, found)
    return found


def _plan(schemas: Mapping, keys: Any, among: frozenset | None, verdicts: dict) -> tuple:
    """(key, unchecked constraint names, nested schemas or None) for each of ``keys`` (in their
    order) where the walk may find something."""
    plan = []
    for key in keys:
        schema = schemas.get(key) if among is None or key in among else None
        if schema is None:
            continue
        names = tuple(n for n in schema.custom_names if _unchecked(n, verdicts))
        nested = schema.schema if schema.schema is not None and _may_hold_unchecked(schema.schema, verdicts) else None
        if names or nested is not None:
            plan.append((key, names, nested))
    return tuple(plan)


def _unchecked(name: str, verdicts: dict) -> int:
    unchecked = verdicts.get(name)
    if unchecked is None:
        unchecked = verdicts[name] = verdict(name)
    return unchecked


#: what a pass of checks (the inventory pinned) knows of a custom constraint: it checks; it checks
#: nothing (the places of its values are noted) but is asked; it checks nothing and accepts any value
CHECKED, UNCHECKED, SKIPPED = 0, 1, 2


def verdict(name: str) -> int:
    """``name``'s verdict for this pass: SKIPPED only for the accept-all forms known here."""
    if not custom.is_unchecked(name):
        return CHECKED
    return SKIPPED if type(custom.get(name).check) in (ServiceCheck, Unchecked) else UNCHECKED


class Verdicts(dict):
    """Constraint name -> its verdict (found on first use), and the unchecked-constraint walk's
    plans: one for a pass of checks over many resources."""

    def __missing__(self, name: str) -> int:
        found = self[name] = verdict(name)
        return found


def _may_hold_unchecked(schemas: Mapping, verdicts: dict) -> bool:
    """Does a schema of ``schemas``, or one nested in it, name an unchecked service constraint?"""
    return any(any(_unchecked(n, verdicts) for n in schema.custom_names)
               or (schema.schema is not None and _may_hold_unchecked(schema.schema, verdicts))
               for schema in schemas.values())


def register_checks() -> None:
    """Put the inventory's checks in place of the accept-all service constraints it can check."""
    for name in KINDS:
        if name in SERVICE_CONSTRAINTS:
            custom.register(name, ServiceCheck(name))
