"""Template parameters: their schemas, their values, and the groups that order them.

``parse_parameters`` reads the ``parameters`` section into ``ParameterSchema``
objects, reporting every mistake with its place; ``resolve_values`` turns the
user's values (strings from ``-P key=value``, any YAML type from environment
files) and the defaults into typed values, following Heat's conversion rules.
No message ever shows the value of a hidden parameter.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any, Callable

from stoker.constraints import custom
from stoker.constraints.base import (
    AllowedPattern,
    AllowedValues,
    Constraint,
    ConstraintViolation,
    CustomConstraint,
    Length,
    Modulo,
    Range,
    is_number,
    show,
)
from stoker.errors import Problems
from stoker.limits import limit
from stoker.patterns import PatternTimeout
from stoker.template.loader import nested_deeper_than
from stoker.template.versions import VERSIONS, Version

HIDDEN_MASK = "******"

_TRUE = ("t", "true", "on", "y", "yes", "1")
_FALSE = ("f", "false", "off", "n", "no", "0")


# -- conversions ---------------------------------------------------------------------

def _to_string(value: Any) -> str:
    """Strings as they are; numbers and booleans as Python prints them (as Heat)."""
    if isinstance(value, str):
        return value
    if isinstance(value, (bool, int, float)):
        return str(value)
    raise ValueError(f"{show(value)} is not a string")


def _to_number(value: Any) -> int | float:
    """An int when the value is integral text or an int, else a float."""
    if isinstance(value, str):
        try:
            number = int(value)
        except ValueError:
            try:
                number = float(value)
            except ValueError:
                raise ValueError(f"{show(value)} is not a number") from None
    elif is_number(value):
        number = value
    else:
        raise ValueError(f"{show(value)} is not a number")
    if not math.isfinite(number):
        raise ValueError(f"{show(value)} is not a finite number")
    return number


def _to_boolean(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower() if isinstance(value, (str, int)) else None
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ValueError(f"{show(value)} is not a boolean; use one of {', '.join(_TRUE)} "
                     f"(true) or {', '.join(_FALSE)} (false)")


def _to_list(value: Any) -> list[str]:
    """A string is split on every comma (spaces kept; "" is []); a list's items become strings."""
    if isinstance(value, str):
        return value.split(",") if value else []
    if isinstance(value, (list, tuple)):
        items = []
        for index, item in enumerate(value):
            try:
                items.append(_to_string(item))
            except ValueError as exc:
                raise ValueError(f"item {index} of the list: {exc}") from None
        return items
    raise ValueError(f"{show(value)} is neither a comma-delimited string nor a list")


def _to_json(value: Any) -> dict | list | str:
    """A map or list, given as such or as JSON text; maps get JSON's string keys.
    The empty text stays itself, as in Heat (``get_param`` gives ``''``)."""
    if value == "":
        return value
    most = limit("max_nesting")
    if not isinstance(value, str) and nested_deeper_than(value, most):
        raise _too_deep(most)
    try:
        data = json.loads(value if isinstance(value, str) else json.dumps(value))
    except RecursionError:
        raise _too_deep(most) from None
    except (TypeError, ValueError) as exc:
        raise ValueError(f"the value is not valid JSON: {exc}") from None
    if nested_deeper_than(data, most):
        raise _too_deep(most)
    if not isinstance(data, (dict, list)):
        raise ValueError(f"{show(data)} is not a JSON map or list")
    return data


def _too_deep(most: int) -> ValueError:
    return ValueError(f"the value is nested more than {most} levels deep (max_nesting)")


_CONVERTERS: dict[str, Callable[[Any], Any]] = {
    "string": _to_string,
    "number": _to_number,
    "comma_delimited_list": _to_list,
    "json": _to_json,
    "boolean": _to_boolean,
}
TYPES = tuple(_CONVERTERS)

#: how ``allowed_values`` entries are read for each type (a list's are its items')
_ITEM_CONVERTERS = {**_CONVERTERS, "comma_delimited_list": _to_string}

_API_TYPES = {
    "string": "String",
    "number": "Number",
    "comma_delimited_list": "CommaDelimitedList",
    "json": "Json",
    "boolean": "Boolean",
}


# -- constraints as written in HOT ---------------------------------------------------

def _arguments(definition: Any, kind: str, keys: tuple[str, ...]) -> dict:
    if not isinstance(definition, dict):
        raise ValueError(f"a {kind} constraint must be a map with {' and/or '.join(keys)}")
    for key in definition:
        if key not in keys:
            raise ValueError(f'"{key}" is not valid in a {kind} constraint; use {", ".join(keys)}')
    return definition


def _numbers(definition: Any, kind: str, keys: tuple[str, ...]) -> list:
    """The constraint's numeric arguments (None when absent); as in Heat they may
    be written as strings."""
    args = _arguments(definition, kind, keys)
    numbers = []
    for key in keys:
        value = args.get(key)
        try:
            numbers.append(None if value is None else _to_number(value))
        except ValueError:
            raise ValueError(f"the {key} of a {kind} constraint must be a number, "
                             f"not {show(value)}") from None
    return numbers


def _bounds(cls: type) -> Callable[..., Constraint]:
    def build(definition: Any, description: str | None, _type: str) -> Constraint:
        return cls(*_numbers(definition, cls.key, ("min", "max")), description)
    return build


def _modulo(definition: Any, description: str | None, _type: str) -> Constraint:
    return Modulo(*_numbers(definition, "modulo", ("step", "offset")), description)


def _custom(definition: Any, description: str | None, _type: str) -> Constraint:
    constraint = CustomConstraint(definition, description)
    if custom.get(definition) is None:
        raise ValueError(f'"{definition}" is not a known custom constraint')
    return constraint


_BUILDERS: dict[str, Callable[[Any, str | None, str], Constraint]] = {
    "length": _bounds(Length),
    "range": _bounds(Range),
    "modulo": _modulo,
    "allowed_values": lambda d, desc, t: AllowedValues(d, desc, coerce=_ITEM_CONVERTERS[t]),
    "allowed_pattern": lambda d, desc, t: AllowedPattern(d, desc),
    "custom_constraint": _custom,
}

#: the parameter types each constraint applies to (as in Heat)
_APPLIES_TO = {
    "length": ("string", "comma_delimited_list", "json"),
    "range": ("number",),
    "modulo": ("number",),
    "allowed_values": ("string", "number", "comma_delimited_list", "boolean"),
    "allowed_pattern": ("string",),
    "custom_constraint": ("string", "number", "comma_delimited_list", "boolean"),
}
_MODULO_SINCE = "2017-02-24"

#: how ``template validate`` names constraint arguments (Heat's validate API)
_VALIDATE_NAMES = {
    "length": {"min": "MinLength", "max": "MaxLength"},
    "range": {"min": "MinValue", "max": "MaxValue"},
    "modulo": {"step": "Step", "offset": "Offset"},
    "allowed_values": "AllowedValues",
    "allowed_pattern": "AllowedPattern",
    "custom_constraint": "CustomConstraint",
}


def _build_constraint(entry: Any, param_type: str, version: Version, path: tuple,
                      problems: Problems) -> Constraint | None:
    """One entry of ``constraints``, or None after reporting what is wrong with it."""
    if not isinstance(entry, dict):
        problems.add(path, "invalid-constraint",
                     "a constraint must be a map such as {range: {min: 1}}")
        return None
    unknown = [k for k in entry if k not in _BUILDERS and k != "description"]
    for key in unknown:
        problems.add(path + (key,), "invalid-constraint",
                     f'"{key}" is not a constraint type; use one of {", ".join(_BUILDERS)}')
    if unknown:
        return None
    kinds = [k for k in entry if k in _BUILDERS]
    if len(kinds) != 1:
        found = f" (found {', '.join(kinds)})" if kinds else ""
        problems.add(path, "invalid-constraint",
                     f"a constraint must have exactly one constraint type{found}")
        return None
    kind = kinds[0]
    where = path + (kind,)
    description = entry.get("description")
    if kind == "modulo" and version.date < _MODULO_SINCE:
        problems.add(where, "invalid-constraint",
                     f"modulo constraints need heat_template_version {_MODULO_SINCE} or later")
    elif param_type not in _APPLIES_TO[kind]:
        problems.add(where, "invalid-constraint",
                     f"{kind} constraints do not apply to {param_type} parameters "
                     f"(only to: {', '.join(_APPLIES_TO[kind])})")
    elif description is not None and not isinstance(description, str):
        problems.add(path + ("description",), "invalid-constraint",
                     "a constraint description must be a string")
    else:
        try:
            built = _BUILDERS[kind](entry[kind], description, param_type)
        except ValueError as exc:
            problems.add(where, "invalid-constraint", str(exc))
            return None
        if kind == "custom_constraint" and custom.is_unchecked(entry[kind]):
            problems.warn(where, "unchecked-constraint",
                          f'"{entry[kind]}" needs a service Stoker does not have and no cloud inventory '
                          "(--inventory) lists its values: any value is accepted")
        return built
    return None


# -- the schema ----------------------------------------------------------------------

@dataclass
class ParameterSchema:
    """One declared parameter."""

    name: str
    type: str
    label: str | None = None
    description: str | None = None
    default: Any = None  # as written in the template; None means the parameter is required
    hidden: bool = False
    immutable: bool = False
    tags: list[str] = field(default_factory=list)
    constraints: list[Constraint] = field(default_factory=list)
    #: False when the default failed its checks: that was reported, so it is never used
    default_valid: bool = True

    @classmethod
    def from_dict(cls, name: str, data: Any, version: Version, problems: Problems,
                  path: tuple) -> "ParameterSchema | None":
        """Read one entry of ``parameters``; None when it has no usable type."""
        path = tuple(path)
        if not isinstance(data, dict):
            problems.add(path, "invalid-parameter",
                         f'parameter "{name}" must be a map with at least a type')
            return None
        _check_keys(data, version, path, problems)
        param_type = data.get("type")
        if param_type not in TYPES:
            where, what = ((path + ("type",), f"{show(param_type)} is not a parameter type")
                           if "type" in data else (path, "the parameter has no type"))
            problems.add(where, "invalid-parameter-type", f"{what}; use one of {', '.join(TYPES)}")
            return None
        schema = cls(
            name=name,
            type=param_type,
            label=data.get("label"),
            description=data.get("description"),
            default=data.get("default"),
            # a parameter meant to be hidden but badly flagged stays hidden
            hidden=_flag(data, "hidden", path, problems, fallback=True),
            immutable=_flag(data, "immutable", path, problems, fallback=False),
            tags=_tags(data.get("tags"), path + ("tags",), problems),
            constraints=_constraints(data.get("constraints"), param_type, version,
                                     path + ("constraints",), problems),
        )
        schema._check_default(path + ("default",), problems)
        return schema

    def _check_default(self, path: tuple, problems: Problems) -> None:
        """As Heat, a default must convert and meet every constraint but the custom ones
        (those are checked when the default is used)."""
        if self.default is None:
            return
        try:
            value = self.convert(self.default)
            for constraint in self.constraints:
                if not isinstance(constraint, CustomConstraint):
                    self._apply(constraint, value, None)
        except (ValueError, ConstraintViolation, PatternTimeout) as exc:
            self.default_valid = False
            problems.add(path, "invalid-default", f"the default value is invalid: {exc}")

    @property
    def required(self) -> bool:
        return self.default is None

    def convert(self, value: Any) -> Any:
        """``value`` in this parameter's type; ``ValueError`` says why it cannot be."""
        try:
            return _CONVERTERS[self.type](value)
        except ValueError:
            if self.hidden:
                raise ValueError(f"the value (hidden) is not a valid {self.type}") from None
            raise

    def validate(self, value: Any, context: Any = None) -> None:
        """Check a converted value; ``ConstraintViolation`` for the first broken constraint."""
        for constraint in self.constraints:
            self._apply(constraint, value, context)

    def _apply(self, constraint: Constraint, value: Any, context: Any) -> None:
        try:
            constraint.validate(value, context)
        except ConstraintViolation:
            if self.hidden:
                raise ConstraintViolation(constraint.description or constraint.summary()) from None
            raise

    def as_validate_output(self, mask_hidden: bool = True) -> dict:
        """The parameter as validate shows it; Heat's API shows a hidden default as the
        template gives it (``mask_hidden=False``), the command masks it."""
        out: dict[str, Any] = {
            "Type": _API_TYPES[self.type],
            "Description": self.description or "",
            "NoEcho": "true" if self.hidden else "false",
            "Label": self.label or self.name,
        }
        if self.default is not None:
            out["Default"] = HIDDEN_MASK if self.hidden and mask_hidden else self.default
        if self.tags:
            out["Tags"] = list(self.tags)
        for constraint in self.constraints:
            names, definition = _VALIDATE_NAMES[constraint.key], constraint.definition()
            if isinstance(names, dict):
                out.update({names[k]: v for k, v in definition.items()})
            else:
                out[names] = definition
        descriptions = [c.description for c in self.constraints if c.description]
        if descriptions:
            out["ConstraintDescription"] = " ".join(descriptions)
        return out


def _check_keys(data: dict, version: Version, path: tuple, problems: Problems) -> None:
    for key in data:
        if key in version.parameter_keys:
            continue
        later = next((v.date for v in VERSIONS if key in v.parameter_keys), None)
        hint = (f"it needs heat_template_version {later} or later" if later
                else f"valid keys: {', '.join(version.parameter_keys)}")
        problems.add(path + (key,), "unknown-key", f'"{key}" is not a valid parameter key; {hint}')


def _flag(data: dict, key: str, path: tuple, problems: Problems, fallback: bool) -> bool:
    value = data.get(key, False)
    if isinstance(value, bool):
        return value
    problems.add(path + (key,), "invalid-parameter-attribute",
                 f"{key} must be true or false, not {show(value)}")
    return fallback


def _tags(tags: Any, path: tuple, problems: Problems) -> list[str]:
    if tags is None:
        return []
    if isinstance(tags, list) and all(isinstance(t, str) for t in tags):
        return list(tags)
    problems.add(path, "invalid-parameter-attribute", "tags must be a list of strings")
    return []


def _constraints(entries: Any, param_type: str, version: Version, path: tuple,
                 problems: Problems) -> list[Constraint]:
    if entries is None:
        return []
    if not isinstance(entries, list):
        problems.add(path, "invalid-constraint", "constraints must be a list")
        return []
    built = (_build_constraint(e, param_type, version, path + (i,), problems)
             for i, e in enumerate(entries))
    return [c for c in built if c is not None]


# -- the whole section, values, groups ------------------------------------------------

def parse_parameters(section: Any, version: Version,
                     problems: Problems) -> dict[str, ParameterSchema]:
    """Every usable parameter of the ``parameters`` section, by name."""
    if not section:
        return {}
    if not isinstance(section, dict):
        problems.add(("parameters",), "invalid-section", 'the "parameters" section must be a map')
        return {}
    schemas = {}
    for name, data in section.items():
        schema = ParameterSchema.from_dict(name, data, version, problems, ("parameters", name))
        if schema is not None:
            schemas[name] = schema
    return schemas


def resolve_values(schemas: dict[str, ParameterSchema], user_values: dict[str, Any],
                   problems: Problems, *, missing_ok: bool = False) -> dict[str, Any]:
    """Typed values: the user's, else the default.  A user value of None counts as
    not given (as in Heat); with ``missing_ok`` a missing one is left out silently.

    A value for a parameter whose declaration was already reported unusable is
    not reported again as a value for an undefined parameter."""
    reported = {p.path[1] for p in problems.errors if len(p.path) > 1 and p.path[0] == "parameters"}
    for name in user_values:
        if name not in schemas and name not in reported:
            problems.add(("parameters", name), "unknown-parameter",
                         f"The Parameter ({name}) was not defined in template.")
    values = {}
    for name, schema in schemas.items():
        path = ("parameters", name)
        raw = user_values.get(name)
        if raw is None:
            if schema.default is None:
                if not missing_ok:
                    problems.add(path, "missing-parameter",
                                 f"The Parameter ({name}) was not provided.")
                continue
            if not schema.default_valid:
                continue
            raw = schema.default
        try:
            value = schema.convert(raw)
        except ValueError as exc:
            problems.add(path, "invalid-parameter-value", str(exc))
            continue
        try:
            schema.validate(value)
        except ConstraintViolation as exc:
            problems.add(path, "constraint-violation", exc.message)
            continue
        except PatternTimeout as exc:
            problems.add(path, exc.code, str(exc))
            continue
        values[name] = value
    return values


def masked(schemas: dict[str, ParameterSchema], values: dict[str, Any]) -> dict[str, Any]:
    """``values`` fit to show: hidden parameters' values replaced by the mask."""
    return {name: HIDDEN_MASK if name in schemas and schemas[name].hidden else value
            for name, value in values.items()}


def secrets(schemas: dict[str, ParameterSchema], values: dict[str, Any]) -> list[str]:
    """The texts of hidden values, longest first: what ``redact`` takes out of messages."""
    found = set()
    for name, value in values.items():
        schema = schemas.get(name)
        if schema is not None and schema.hidden and value not in (None, "", [], {}):
            found.add(value if isinstance(value, str) else json.dumps(value))
            if not isinstance(value, str):
                found.add(str(value))
    return sorted(found, key=len, reverse=True)


def redact(text: str, hidden: list[str]) -> str:
    """``text`` with every hidden value replaced by the mask."""
    for secret in hidden:
        if secret in text:
            text = text.replace(secret, HIDDEN_MASK)
    return text


def check_parameter_groups(section: Any, schemas: dict[str, ParameterSchema],
                           problems: Problems) -> None:
    """Each group lists defined parameters, and each parameter is in one group at most."""
    if not section:
        return
    if not isinstance(section, list):
        problems.add(("parameter_groups",), "invalid-parameter-groups",
                     "parameter_groups must be a list of groups")
        return
    grouped: set = set()
    for index, group in enumerate(section):
        path = ("parameter_groups", index)
        if not isinstance(group, dict):
            problems.add(path, "invalid-parameter-groups",
                         "a parameter group must be a map with a list of parameters")
            continue
        names = group.get("parameters")
        if names is None:
            problems.add(path, "invalid-parameter-groups",
                         "each parameter group must have a list of parameters")
            continue
        if not isinstance(names, list):
            problems.add(path + ("parameters",), "invalid-parameter-groups",
                         "the parameters of a parameter group must be a list")
            continue
        for position, name in enumerate(names):
            where = path + ("parameters", position)
            if isinstance(name, str) and name in grouped:
                problems.add(where, "invalid-parameter-groups",
                             f'the parameter "{name}" must be in one parameter group only')
            elif not isinstance(name, str) or name not in schemas:
                problems.add(where, "invalid-parameter-groups",
                             f"{show(name)} does not reference a parameter of the template")
            else:
                grouped.add(name)
