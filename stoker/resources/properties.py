"""The property schema of a resource plug-in, and the properties it reads.

A plug-in declares ``properties_schema`` (name -> ``Schema``).  ``Properties``
puts a resource's template data against that schema: ``props['port']`` is
the resolved value converted to the declared type (the default, or the
type's empty value, when the template gives none), and ``validate()`` reports
every problem at once, each at its full path
(``resources.web.properties.rules.1.port``).

Values may still hold intrinsic functions.  ``resolver`` turns them into
plain data; a value needing a resource that does not exist yet raises
``ResourcePending``, which validation takes as "cannot check yet".  Functions
nested in a list or map with a schema are resolved one by one, so one pending
item does not hide the problems of its siblings.
"""

from __future__ import annotations

import copy
import difflib
import json
from collections.abc import Mapping, Sequence
from typing import Any, Callable, Iterator

from stoker.constraints import (
    AllowedPattern,
    AllowedValues,
    ConstraintViolation,
    CustomConstraint,
    Length,
    Modulo,
    Range,
)
from stoker.errors import FunctionError, Problem, Problems, ResourcePending
from stoker.functions.base import SCALAR_TYPES, Function, resolve, resolve_call, waits_for_resources
from stoker.functions.sizes import remembering
from stoker.resources.exceptions import InvalidSchemaError
from stoker.resources.support import SupportStatus


class AnyIndexDict(Mapping):
    """The schema of a list whose items all share one schema (shown as ``'*'``)."""

    ANYTHING = "*"

    def __init__(self, value: "Schema"):
        self.value = value

    def __getitem__(self, key: Any) -> "Schema":
        if key != self.ANYTHING and not (isinstance(key, int) and not isinstance(key, bool)):
            raise KeyError(key)
        return self.value

    def __iter__(self) -> Iterator[str]:
        yield self.ANYTHING

    def __len__(self) -> int:
        return 1

    def __contains__(self, key: object) -> bool:  # no KeyError raised and caught per lookup
        return key == self.ANYTHING or (isinstance(key, int) and not isinstance(key, bool))

    def get(self, key: Any, default: Any = None) -> Any:
        return self.value if key in self else default


class Schema:
    """What one property may hold.

    The positional order of the arguments is Heat's, so plug-ins that pass
    them positionally keep working.  A schema that contradicts itself (a
    ``Range`` on a string, an invalid default ...) raises
    ``InvalidSchemaError`` when the plug-in module is imported.
    """

    TYPES = (INTEGER, STRING, NUMBER, BOOLEAN, MAP, LIST, ANY) = (
        "Integer",
        "String",
        "Number",
        "Boolean",
        "Map",
        "List",
        "Any",
    )

    def __init__(
        self,
        data_type: str,
        description: str | None = None,
        default: Any = None,
        schema: "Schema | Mapping[Any, Schema] | None" = None,
        required: bool = False,
        constraints: list | None = None,
        implemented: bool = True,
        update_allowed: bool = False,
        immutable: bool = False,
        support_status: SupportStatus | None = None,
        allow_conversion: bool = False,
    ):
        if data_type not in self.TYPES:
            raise InvalidSchemaError(f"Invalid type ({data_type})")
        if update_allowed and immutable:
            raise InvalidSchemaError("Options update_allowed and immutable cannot both be True")
        self.type = data_type
        self.description = description
        self.default = default
        self.required = required
        self.constraints = list(constraints or [])
        self.implemented = implemented
        self.update_allowed = update_allowed
        self.immutable = immutable
        self.support_status = support_status if support_status is not None else SupportStatus()
        #: provider-template facades: a MAP may carry JSON text, a LIST a comma-separated string
        self.allow_conversion = allow_conversion
        self.schema = self._nested(schema)
        self._check_constraints()
        self._check_default()
        #: the default needs no check per resource: its constraints were all checked here
        #: the names of its custom constraints (the inventory walk asks which of them went unchecked)
        self.custom_names = tuple(c.name for c in self.constraints if isinstance(c, CustomConstraint))
        #: the default needs no check per resource: its constraints were all checked here
        self.default_checked = default is not None and not self.custom_names

    def _nested(self, schema: Any) -> Mapping | None:
        if schema is None:
            return None
        if self.type not in (self.LIST, self.MAP):
            raise InvalidSchemaError(f"Schema valid only for {self.LIST} or {self.MAP}, not {self.type}")
        if isinstance(schema, Schema):
            if self.type != self.LIST:
                raise InvalidSchemaError(f"Single schema valid only for {self.LIST}, not {self.type}")
            return AnyIndexDict(schema)
        if not isinstance(schema, Mapping):
            raise InvalidSchemaError(f"Invalid nested schema {schema!r}")
        if self.type == self.LIST and AnyIndexDict.ANYTHING in schema:
            return AnyIndexDict(Schema.from_legacy(schema[AnyIndexDict.ANYTHING]))
        return schemata(schema)

    def _check_constraints(self) -> None:
        for constraint in self.constraints:
            for kind, types in _CONSTRAINT_TYPES.items():
                if isinstance(constraint, kind) and self.type not in types:
                    raise InvalidSchemaError(f"{type(constraint).__name__} constraint invalid for {self.type}")

    def _check_default(self) -> None:
        """The default must have the type and meet the constraints (custom ones aside:
        they may need the world, e.g. a key that exists, which import time cannot see)."""
        if self.default is None:
            return
        try:
            value = _CONVERTERS[self.type](self, self.default)
            for constraint in self.constraints:
                if not isinstance(constraint, CustomConstraint):
                    constraint.validate(value)
        except (TypeError, ValueError, ConstraintViolation) as exc:
            raise InvalidSchemaError(f"Invalid default {self.default!r} ({exc})") from None

    def empty(self) -> Any:
        """The value of a property the template leaves out, when it has no default."""
        return copy.copy(_EMPTY[self.type])

    @classmethod
    def from_legacy(cls, schema: "Schema | Mapping") -> "Schema":
        """A ``Schema`` from the dictionary form older plug-ins use
        (``{'Type': 'String', 'Required': True, 'MaxLength': 8}``)."""
        if isinstance(schema, Schema):
            return schema
        if not isinstance(schema, Mapping):
            raise InvalidSchemaError(f"Invalid property schema {schema!r}")
        unknown = sorted(set(schema) - set(_LEGACY_KEYS))
        if unknown:
            raise InvalidSchemaError(f"Unknown key(s) {unknown}")
        if "Type" not in schema:
            raise InvalidSchemaError("No Type specified")
        constraints = []
        for (low, high), kind in ((("MinValue", "MaxValue"), Range), (("MinLength", "MaxLength"), Length)):
            if low in schema or high in schema:
                constraints.append(kind(_legacy_number(schema.get(low)), _legacy_number(schema.get(high))))
        if "AllowedValues" in schema:
            constraints.append(AllowedValues(schema["AllowedValues"]))
        if "AllowedPattern" in schema:
            constraints.append(AllowedPattern(schema["AllowedPattern"]))
        nested = schema.get("Schema")
        if nested is not None and schema["Type"] == cls.LIST:
            nested = cls.from_legacy(nested)
        return cls(
            schema["Type"],
            description=schema.get("Description"),
            default=schema.get("Default"),
            schema=nested,
            required=schema.get("Required", False),
            constraints=constraints,
            implemented=schema.get("Implemented", True),
            update_allowed=schema.get("UpdateAllowed", False),
            immutable=schema.get("Immutable", False),
        )

    @classmethod
    def from_parameter(cls, param: Any) -> "Schema":
        """The property facade of one parameter of a provider template.

        ``param`` is a ``stoker.template.parameters.ParameterSchema`` (or has
        its ``type``, ``description``, ``default`` and ``constraints``).  A
        parameter without a default is required.  Every facade property may
        be updated in place: the provider template decides what an update
        does to its own resources.
        """
        data_type = _PARAMETER_TYPES.get(str(param.type).lower().replace("_", ""), cls.MAP)
        return cls(
            data_type,
            description=param.description,
            required=param.default is None,
            constraints=list(param.constraints or []),
            update_allowed=True,
            allow_conversion=data_type in (cls.MAP, cls.LIST),
        )

    def __repr__(self) -> str:
        return f"properties.Schema({self.type!r}, {self.description!r})"


class Schemata(dict):
    """Name -> ``Schema``, every value a ``Schema`` already: read as it is, not converted again
    for each resource (a schema built once per type, as the simulated OpenStack types are)."""

    checked_when_absent: tuple | None = None
    #: the names of the properties that are implemented (a shape check: is every key given one?)
    implemented: frozenset | None = None
    #: name -> its place (validation reads properties in the schema's order)
    order: dict | None = None
    #: the keys a resource gives -> (key, checker) for each key validation reads (see ``_plan``)
    plans: dict | None = None


#: how many sets of given keys one schema remembers (a template cannot grow it without bound)
_KEY_SETS_KEPT = 256


def _checked_when_absent(schemas: Mapping) -> tuple:
    """The keys validation reads even when the data leaves them out: the required ones, and those
    whose default still needs a check (kept with a ``Schemata``: computed once per schema)."""
    found = getattr(schemas, "checked_when_absent", None)
    if found is None:
        found = tuple(k for k, s in schemas.items()  # in the schema's order: problems come in a stable one
                      if s.required or (s.default is not None and not s.default_checked))
        if isinstance(schemas, Schemata):
            schemas.checked_when_absent = found
    return found


def _all_implemented(schemas: Mapping, data: Mapping) -> bool:
    """Is every key of ``data`` a property of ``schemas`` that is implemented?  (A ``Schemata``
    keeps the set of those names: the check is then one set operation.)"""
    known = getattr(schemas, "implemented", None)
    if known is None:
        known = frozenset(key for key, schema in schemas.items() if schema.implemented)
        if isinstance(schemas, Schemata):
            schemas.implemented = known
    return known.issuperset(data)


def _validated_keys(schemas: Mapping, data: Mapping) -> list:
    """The keys validation reads, in the schema's order: those given and those checked when absent
    (a type has dozens of properties, a resource gives a few)."""
    keys = [key for key in data if key in schemas]
    keys.extend(key for key in _checked_when_absent(schemas) if key not in data)
    if len(keys) > 1 and isinstance(schemas, Schemata):
        order = schemas.order
        if order is None:
            order = schemas.order = {key: i for i, key in enumerate(schemas)}
        keys.sort(key=order.__getitem__)
    return keys


def _plan(schemas: Mapping, data: Mapping) -> tuple:
    """(key, schema, checker) for each key validation reads (``_validated_keys``).  A ``Schemata`` keeps
    the plan for each set of keys given (resources of one type mostly give the same few), up to a
    bound; a checker is built once per schema (``_checker``)."""
    known = getattr(schemas, "plans", None)
    given = tuple(data)
    if known is not None:
        found = known.get(given)
        if found is not None:
            return found
    plan = tuple((key, schemas[key], _checker(schemas[key])) for key in _validated_keys(schemas, data))
    if isinstance(schemas, Schemata):
        if known is None:
            known = schemas.plans = {}
        if len(known) < _KEY_SETS_KEPT:
            known[given] = plan
    return plan


def schemata(schema: Mapping[Any, "Schema | Mapping"]) -> dict[Any, Schema]:
    """Name -> ``Schema`` for a ``properties_schema``, legacy dictionaries converted."""
    if isinstance(schema, Schemata):
        return schema
    return Schemata((name, Schema.from_legacy(s)) for name, s in schema.items())


# -- types --------------------------------------------------------------------------------
def _to_integer(schema: Schema, value: Any) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            pass
    raise ValueError(f"Value '{value}' is not an integer")


def _to_number(schema: Schema | None, value: Any) -> int | float:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    if isinstance(value, str):
        for kind in (int, float):
            try:
                return kind(value)
            except ValueError:
                pass
    raise ValueError(f"Value '{value}' is not a number")


def _to_string(schema: Schema, value: Any) -> str:
    # As in Heat: YAML gives ``port: 80`` and ``flag: true`` as int and bool.
    if isinstance(value, (str, int)):
        return str(value)
    raise TypeError(f"Value must be a string; got {value!r}")


def _to_boolean(schema: Schema, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise ValueError(f'"{value}" is not a valid boolean')


def _to_map(schema: Schema, value: Any) -> dict | str:
    if type(value) is dict or isinstance(value, Mapping):  # an ABC's check costs several plain ones
        return dict(value)
    if schema.allow_conversion and isinstance(value, str):
        return value
    if schema.allow_conversion and isinstance(value, Sequence):
        return json.dumps(value)
    raise TypeError(f'"{value}" is not a map')


def _to_list(schema: Schema, value: Any) -> list:
    if type(value) is list:
        return list(value)
    if schema.allow_conversion and isinstance(value, str):
        return value.split(",") if value else []
    if isinstance(value, Sequence) and not isinstance(value, str):
        return list(value)
    raise TypeError(f'"{value!r}" is not a list')


_CONVERTERS: dict[str, Callable[[Schema, Any], Any]] = {
    Schema.INTEGER: _to_integer,
    Schema.NUMBER: _to_number,
    Schema.STRING: _to_string,
    Schema.BOOLEAN: _to_boolean,
    Schema.MAP: _to_map,
    Schema.LIST: _to_list,
    Schema.ANY: lambda schema, value: value,
}

#: the value of an absent property without a default (the plug-in guide's table)
_EMPTY = {
    Schema.INTEGER: 0,
    Schema.NUMBER: 0,
    Schema.STRING: "",
    Schema.BOOLEAN: False,
    Schema.MAP: {},
    Schema.LIST: [],
    Schema.ANY: None,
}

#: the property types each kind of constraint applies to
_CONSTRAINT_TYPES = {
    Range: (Schema.INTEGER, Schema.NUMBER),
    Modulo: (Schema.INTEGER, Schema.NUMBER),
    Length: (Schema.STRING, Schema.LIST, Schema.MAP),
    AllowedPattern: (Schema.STRING,),
    AllowedValues: (Schema.STRING, Schema.INTEGER, Schema.NUMBER, Schema.BOOLEAN, Schema.LIST),
    CustomConstraint: (Schema.STRING, Schema.INTEGER, Schema.NUMBER, Schema.BOOLEAN, Schema.LIST),
}

_PARAMETER_TYPES = {
    "string": Schema.STRING,
    "number": Schema.NUMBER,
    "commadelimitedlist": Schema.LIST,
    "json": Schema.MAP,
    "boolean": Schema.BOOLEAN,
}

_LEGACY_KEYS = (
    "Type", "Description", "Default", "Schema", "Required", "Implemented", "UpdateAllowed",
    "Immutable", "MinValue", "MaxValue", "MinLength", "MaxLength", "AllowedValues", "AllowedPattern",
)


def _legacy_number(value: Any) -> Any:
    return None if value is None else _to_number(None, value)


# -- reading values -------------------------------------------------------------------------
_SKIP = object()  # no value to go on: still pending, or its problem is already recorded


class _Reader:
    """One pass over property data: resolves, converts, checks, collects problems.

    ``validating`` checks constraints and takes a pending value as "skip";
    otherwise (reading values for a plug-in) pending propagates.
    ``with_value=False`` checks only what the template's shape shows (unknown and
    unimplemented properties), as Heat's validate does: a required property
    without a value is a create-time error there.
    """

    def __init__(self, resolver: Callable[[Any], Any], context: Any, validating: bool, with_value: bool = True):
        self.resolver = resolver
        self.context = context
        self.validating = validating
        self.with_value = with_value
        self.problems = Problems()

    def as_map(self, data: Any, path: tuple) -> Any:
        """``data`` (a map, or a function giving one) as a map whose values are
        still to be resolved; ``_SKIP`` when pending or not a map."""
        data = self.resolve(data, path, children_later=True)
        if data is _SKIP or type(data) is dict or isinstance(data, Mapping):
            return data
        self.problems.add(path, "invalid-property-value", f'"{data}" is not a map')
        return _SKIP

    def read_all(self, schemas: Mapping, data: Any, path: tuple) -> dict:
        """Every property of ``schemas`` from the map ``data``."""
        data = self.as_map(data, path)
        if data is _SKIP:
            return {}
        if type(schemas) is not Schemata or not _all_implemented(schemas, data):  # a type's own: one set check
            self._unknown_keys(schemas, data, path)
        if not self.with_value:
            return {}
        if self.validating:  # only what is given, and what must be checked even when left out
            return {key: check(self, schema, data, key, path) for key, schema, check in _plan(schemas, data)}
        # a property not implemented is never given: left out, so that these values read back cleanly
        return {key: self.read(key, schema, data, path) for key, schema in schemas.items() if schema.implemented}

    def _unknown_keys(self, schemas: Mapping, data: Mapping, path: tuple) -> None:
        for key in data:
            if key not in schemas:
                self.problems.add(path + (key,), "unknown-property", f"Unknown Property {key}{_suggestion(key, schemas)}")
            elif not schemas[key].implemented:
                self.problems.add(path, "unimplemented-property", f"Property {key} not implemented yet")

    def read(self, key: Any, schema: Schema, data: Mapping, path: tuple) -> Any:
        """One property (or list item) ``key`` of ``data``, typed."""
        if key not in data:
            return self._absent(key, schema, path)
        place = path + (key,)
        value = self.resolve(data[key], place, children_later=schema.schema is not None)
        if value is _SKIP:
            return _SKIP
        if value is None:  # an explicit null (or a function giving one): the default, else the type's empty value
            value = copy.deepcopy(schema.default) if schema.default is not None else schema.empty()
        return self.convert(schema, value, place)

    def _absent(self, key: Any, schema: Schema, path: tuple) -> Any:
        """The value of property ``key`` that ``data`` leaves out: its default, checked, or nothing."""
        if schema.default is not None:
            if self.validating and schema.default_checked and not schema.required:
                return schema.default  # checked once, when the schema was made
            return self.convert(schema, copy.deepcopy(schema.default), path + (key,))
        if schema.required:
            self.problems.add(path, "required-property", f"Property {key} not assigned")
            return _SKIP
        if self.validating:
            return None  # as Heat's validation: nothing to check of a property left out
        if schema.type == Schema.MAP and schema.schema is not None \
                and not any(item.required for item in schema.schema.values()):
            # an absent map reads as an empty one, nested defaults filled in
            # (not one with required keys: absent, it is no error, as in Heat)
            return self.convert(schema, {}, path + (key,))
        return schema.empty()

    def resolve(self, raw: Any, path: tuple, children_later: bool) -> Any:
        kind = type(raw)
        if kind in SCALAR_TYPES:  # most values: no function to look for
            return raw
        if children_later and (kind is dict or kind is list or isinstance(raw, Mapping)):
            return raw
        if self.validating and waits_for_resources(raw):
            return _SKIP  # checked when the resource it needs exists, as Heat does
        return self.resolved(self.resolver, raw, path)

    def resolved(self, how: Callable[[Any], Any], raw: Any, path: tuple) -> Any:
        """``how(raw)``: the value of ``raw`` (``_SKIP`` when it fails, its problem recorded)."""
        try:
            return how(raw)
        except ResourcePending:
            if self.validating:
                return _SKIP
            raise
        except FunctionError as exc:
            self.problems.extend([Problem(exc.path or path, exc.code, exc.message)])
            return _SKIP

    def convert(self, schema: Schema, value: Any, path: tuple) -> Any:
        try:
            value = _CONVERTERS[schema.type](schema, value)
        except (TypeError, ValueError) as exc:
            self.problems.add(path, "invalid-property-value", str(exc))
            return _SKIP
        if schema.schema is not None and isinstance(value, (dict, list)):
            value = self._children(schema.schema, value, path)
            if value is _SKIP:
                return _SKIP
        if self.validating and not self._meets_constraints(schema, value, path):
            return _SKIP
        return value

    def _meets_constraints(self, schema: Schema, value: Any, path: tuple) -> bool:
        """Record every constraint ``value`` breaks; True when it breaks none."""
        if not schema.constraints:
            return True
        before = len(self.problems.items)
        for constraint in schema.constraints:
            try:
                constraint.validate(value, self.context)
            except ConstraintViolation as exc:
                self.problems.add(path, exc.code, exc.message)
        return len(self.problems.items) == before

    def _children(self, schemas: Mapping, value: dict | list, path: tuple) -> Any:
        if isinstance(value, dict):
            items = self.read_all(schemas, value, path)
        elif isinstance(schemas, AnyIndexDict) and schemas.value.implemented:  # every item has one schema
            indexed = dict(enumerate(value))
            items = {i: self.read(i, schemas.value, indexed, path) for i in indexed}
        else:
            indexed = dict(enumerate(value))
            items = self.read_all({i: schemas[i] for i in indexed if i in schemas}, indexed, path)
        if any(item is _SKIP for item in items.values()):
            return _SKIP
        return items if isinstance(value, dict) else list(items.values())


#: property type -> the exact types of value it takes as they are (no conversion, none that can fail)
_TAKEN_AS_IS = {
    Schema.STRING: frozenset((str,)),
    Schema.INTEGER: frozenset((int,)),
    Schema.NUMBER: frozenset((int, float)),
    Schema.BOOLEAN: frozenset((bool,)),
    Schema.ANY: frozenset((str, int, float, bool)),
    Schema.MAP: frozenset(),
    Schema.LIST: frozenset(),
}
#: a map or list of plain values, given to a property of that type without a nested schema: a copy
_COPIED = {Schema.MAP: dict, Schema.LIST: list}


def _checker(schema: Schema) -> Callable[["_Reader", Schema, Mapping, Any, tuple], Any]:
    """How validation reads one property of ``schema`` (built on first use, kept on the schema;
    called with the schema, which it does not hold: a schema made for one resource, a template
    resource's, is then freed by reference counting, not left in a cycle to the collector)."""
    check = schema.__dict__.get("_check")
    if check is None:
        check = schema._check = _compile(schema)
    return check


def _compile(schema: Schema) -> Callable[["_Reader", Schema, Mapping, Any, tuple], Any]:
    """A checker of ``schema``'s values: a value given as a literal of a type the property takes
    as it is (most are) is checked directly; anything else (a function, a null, a value to
    convert, a nested schema) goes through ``_Reader.read``, which gives the same answer slower."""
    read, meets = _Reader.read, _Reader._meets_constraints
    if schema.schema is not None:
        return _compile_nested(schema)
    as_is = _TAKEN_AS_IS[schema.type]
    as_text = schema.type == Schema.STRING  # as ``_to_string``: a number or boolean gives its text
    copied = _COPIED.get(schema.type)
    constrained = bool(schema.constraints)

    def check(reader: _Reader, schema: Schema, data: Mapping, key: Any, path: tuple) -> Any:
        if key not in data:
            return reader._absent(key, schema, path)
        value = data[key]
        kind = type(value)
        if kind in SCALAR_TYPES or kind is dict or kind is list:
            called = False
        elif Function in kind.__mro__ and reader.resolver is resolve:  # (no ABC check)
            if value.has_refs:  # checked once the resource it names exists, as Heat does
                return _SKIP if value.waits() else read(reader, key, schema, data, path)
            value = reader.resolved(resolve_call, value, path + (key,))  # it names no resource: nothing to wait for
            if value is _SKIP:
                return _SKIP
            kind, called = type(value), True
        else:
            return read(reader, key, schema, data, path)
        if kind not in as_is:  # (taken as it is: most values)
            if as_text and (kind is int or kind is bool):
                value = str(value)
            elif called:  # a result: plain data, to convert (a null: the default)
                if value is None:
                    value = copy.deepcopy(schema.default) if schema.default is not None else schema.empty()
                return reader.convert(schema, value, path + (key,))
            elif kind is copied:
                for item in (value.values() if kind is dict else value):
                    if type(item) not in SCALAR_TYPES:
                        return read(reader, key, schema, data, path)  # it may hold a function
                value = kind(value)
            else:
                return read(reader, key, schema, data, path)
        if constrained and not meets(reader, schema, value, path + (key,)):
            return _SKIP
        return value

    return check


def _compile_nested(schema: Schema) -> Callable[["_Reader", Schema, Mapping, Any, tuple], Any]:
    """A checker of a list whose items share one schema, or of a map with a schema of its keys,
    given as a literal list or map: its items are checked each by its own checker, without the
    generic walk; anything else goes through ``_Reader.read``."""
    read, meets = _Reader.read, _Reader._meets_constraints
    nested = schema.schema
    items_alike = isinstance(nested, AnyIndexDict) and nested.value.implemented
    kind = list if schema.type == Schema.LIST and items_alike else dict if schema.type == Schema.MAP else None
    constrained = bool(schema.constraints)

    def check(reader: _Reader, schema: Schema, data: Mapping, key: Any, path: tuple) -> Any:
        value = data.get(key, _SKIP) if type(data) is dict else _SKIP
        if type(value) is not kind:
            return read(reader, key, schema, data, path)
        place = path + (key,)
        if kind is list:
            item = _checker(nested.value)
            indexed = dict(enumerate(value))
            value = [item(reader, nested.value, indexed, i, place) for i in indexed]
            skipped = any(v is _SKIP for v in value)
        else:
            value = reader.read_all(nested, value, place)
            skipped = any(v is _SKIP for v in value.values())
        if skipped or (constrained and not meets(reader, schema, value, place)):
            return _SKIP
        return value

    return check


def _suggestion(key: Any, names: Any) -> str:
    """``; did you mean "name"?`` for a misspelt key close to one of ``names``, else nothing."""
    close = difflib.get_close_matches(str(key), [str(n) for n in names if n != AnyIndexDict.ANYTHING], n=1)
    return f'; did you mean "{close[0]}"?' if close else ""


def _identity(data: Any) -> Any:
    return data


class Properties(Mapping):
    """A resource's properties: template data read through its plug-in's schema.

    ``data`` is the raw ``properties`` section (it may hold functions, or be
    one); ``path`` is where it sits, for messages; ``resolver=None`` means the
    data is plain already.  Iterating gives every
    property of the schema; ``props[name]`` raises ``ValidationFailed`` when
    the value is wrong and ``ResourcePending`` when it cannot be known yet.
    """

    def __init__(
        self,
        schema: Mapping[str, Schema | Mapping],
        data: Any,
        path: tuple = (),
        resolver: Callable[[Any], Any] | None = resolve,
        context: Any = None,
    ):
        self.schema = schemata(schema)
        self.data = data if data is not None else {}
        self.path = tuple(path)
        self.resolver = resolver or _identity
        self.context = context
        #: every key of ``data`` is a property implemented (the shape pass found; data is not changed after)
        self._keys_known = False

    def _reader(self, validating: bool, with_value: bool = True) -> _Reader:
        return _Reader(self.resolver, self.context, validating, with_value)

    def __getitem__(self, key: str) -> Any:
        if key not in self.schema:
            raise KeyError(f"Invalid Property {key}")
        reader = self._reader(validating=False)
        data = reader.as_map(self.data, self.path)
        value = _SKIP if data is _SKIP else reader.read(key, self.schema[key], data, self.path)
        reader.problems.raise_if_errors()
        return value

    def __iter__(self) -> Iterator[str]:
        return iter(self.schema)

    def __len__(self) -> int:
        return len(self.schema)

    def __contains__(self, key: object) -> bool:
        return key in self.schema

    def validate(self, with_value: bool = True) -> None:
        """Raise ``ValidationFailed`` with every problem of the data.

        Values not known yet (``ResourcePending``) are not checked; with
        ``with_value=False`` no value is, only which properties are given.
        """
        if not with_value and type(self.data) is dict and _all_implemented(self.schema, self.data):
            self._keys_known = True  # the value pass need not ask again
            return  # the shape check finds nothing (the common case): no reader needed
        reader = self._reader(validating=True, with_value=with_value)
        with remembering():  # one scope for every value: sizes and the limit are read once
            data, schema = self.data, self.schema
            if with_value and type(data) is dict and type(schema) is Schemata \
                    and (self._keys_known or _all_implemented(schema, data)):
                for key, each, check in _plan(schema, data):  # a type's own schema, every key known: straight on
                    check(reader, each, data, key, self.path)
            else:
                reader.read_all(schema, data, self.path)
        if reader.problems.items:
            reader.problems.raise_if_errors()

    def resolved(self) -> dict:
        """Every property's typed value as plain data (what the engine stores and diffs)."""
        reader = self._reader(validating=False)
        values = reader.read_all(self.schema, self.data, self.path)
        reader.problems.raise_if_errors()
        return values

    @staticmethod
    def schema_from_params(params_schema: Mapping[str, Any] | None) -> dict[str, Schema]:
        """The properties schema of a provider template's facade, from its parameters."""
        return {name: Schema.from_parameter(p) for name, p in (params_schema or {}).items()}
