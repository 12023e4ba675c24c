"""From a template and parameter values to a checked ``StackDefinition``.

``build_definition`` runs every static check there is and collects all the
problems it finds (it never stops at the first).  The result is what the
engine runs: typed parameters, conditions, parsed resource and output
definitions, and the dependency edges between resources.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping as MappingABC
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from stoker.cycles import find_cycles
from stoker.errors import FunctionError, Problems, StokerError
from stoker.functions.base import Function, dependencies, resolve
from stoker.template.conditions import Conditions
from stoker.template.stack_context import StackContext
from stoker.template.loader import paused_gc
from stoker.template.parameters import (
    ParameterSchema,
    check_parameter_groups,
    parse_parameters,
    resolve_values,
    secrets,
)
from stoker.template.parse import Parser
from stoker.template.template import Template
from stoker.template.versions import Version


@dataclass
class ResourceDefinition:
    """One entry of the ``resources`` section, parsed."""

    name: str
    type: str
    properties: Any = field(default_factory=dict)
    metadata: Any = field(default_factory=dict)
    depends_on: list[str] = field(default_factory=list)
    deletion_policy: str = "Delete"
    update_policy: Any = field(default_factory=dict)
    external_id: Any = None
    condition: Any = None
    description: str = ""
    _dependencies: set | None = field(default=None, repr=False, compare=False)

    def dependencies(self) -> set[str]:
        """Resources that must exist before this one: explicit and through functions.

        Computed once: the definition does not change after parsing.
        """
        if self._dependencies is None:
            found = set(self.depends_on)
            found.update(dependencies(self.properties))
            found.update(dependencies(self.metadata))
            self._dependencies = found
        return set(self._dependencies)


@dataclass
class OutputDefinition:
    name: str
    value: Any
    description: str = ""
    condition: Any = None


@dataclass
class StackDefinition:
    """Everything the engine needs to run one template with one set of inputs."""

    template: Template
    version: Version
    context: StackContext
    parameter_schemas: dict[str, ParameterSchema]
    parameters: dict[str, Any]
    conditions: Conditions
    resources: Mapping[str, ResourceDefinition]  # a dict, or ``StoredResources``
    outputs: dict[str, OutputDefinition]
    problems: Problems
    #: every well-formed call that names a resource (get_resource, get_attr, ...)
    resource_calls: list[Function] = field(default_factory=list)

    def enabled(self, condition: Any) -> bool:
        """Evaluate a resource's or output's ``condition`` (None means always)."""
        if condition is None:
            return True
        if isinstance(condition, bool):
            return condition
        if isinstance(condition, str):
            return self.conditions.is_enabled(condition)
        value = resolve(condition)
        if not isinstance(value, bool):
            raise FunctionError(f"condition evaluates to {value!r}, not a boolean",
                                code="invalid-condition")
        return value

    def secrets(self) -> list[str]:
        """Hidden parameter values as text, to keep them out of messages."""
        return secrets(self.parameter_schemas, self.parameters)

    def switched_off(self, resource: "ResourceDefinition") -> bool:
        """Is the resource's condition known to be false?  (Not known yet, for want of a
        value: no.)  Heat never builds such a resource, nor looks its type up."""
        if resource.condition is None:
            return False
        try:
            return not self.enabled(resource.condition)
        except (StokerError, ValueError, TypeError):
            return False

    def enabled_resources(self) -> dict[str, ResourceDefinition]:
        return {n: r for n, r in self.resources.items() if self.enabled(r.condition)}

    def drop(self) -> None:
        """The end of its stack's life (``Stack.drop``): the calls naming a resource and their
        parser refer to each other (its lists of them), a cycle of one object or more per call
        that only the cyclic collector would free; the lists are emptied."""
        if self.resource_calls:
            parser = self.resource_calls[0].parser
            if parser is not None:
                parser.reference_roots.clear()
            self.resource_calls.clear()


class StoredResources(MappingABC):
    """The ``resources`` of a stored template, each parsed the first time it is asked for.

    A worker acts on a few of a big stack's resources per process: parsing
    all of them in every worker process cost more than acting on its share.
    The template was checked when it was stored, so nothing here reports a
    problem the eager parse would have stopped at (``build_definition``'s
    ``stored``).
    """

    def __init__(self, section: dict, version: Version, parser: Parser, problems: Problems):
        self._section, self._version, self._parser, self._problems = section, version, parser, problems
        self._parsed: dict[str, ResourceDefinition] = {}

    def __getitem__(self, name: str) -> ResourceDefinition:
        found = self._parsed.get(name)
        if found is None:
            if name not in self:
                raise KeyError(name)
            found = self._parsed[name] = _resource(name, self._section[name], self._version, self._parser,
                                                   self._problems)
        return found

    def __contains__(self, name: object) -> bool:
        return isinstance(self._section.get(name), dict)  # as the eager parse keeps them

    def __iter__(self) -> Iterator[str]:
        return (name for name, data in self._section.items() if isinstance(data, dict))

    def __len__(self) -> int:
        return sum(1 for _ in self)


def build_definition(template: Template, user_parameters: Mapping[str, Any] | None = None,
                     **kwargs: Any) -> "StackDefinition | None":
    """Check ``template`` with ``user_parameters``; ``None`` if it is beyond checking.

    ``stored=True``: a template checked when it was stored, read back; its
    resources are parsed when asked for (``StoredResources``), and their
    dependency cycles not looked for again.
    """
    with paused_gc():
        return _build_definition(template, user_parameters, **kwargs)


def _build_definition(
    template: Template,
    user_parameters: Mapping[str, Any] | None = None,
    *,
    problems: Problems | None = None,
    missing_parameters_ok: bool = False,
    context_factory: Callable[..., StackContext] = StackContext,
    stored: bool = False,
    **context_args: Any,
) -> StackDefinition | None:
    problems = problems if problems is not None else Problems()
    version = template.check_structure(problems)
    if version is None:
        return None

    schemas = parse_parameters(template.section("parameters"), version, problems)
    parameters_section = template.section("parameters")
    # a parameter whose declaration is broken is still declared: no knock-on errors
    declared = set(parameters_section) if isinstance(parameters_section, dict) else set(schemas)
    check_parameter_groups(template.section("parameter_groups"),
                           {name: schemas.get(name) for name in declared}, problems)
    values = resolve_values(schemas, dict(user_parameters or {}), problems,
                            missing_ok=missing_parameters_ok)

    resources_section = template.section("resources")
    conditions_section = template.section("conditions") if version.has_conditions else {}
    reported = {p.path[1] for p in problems.errors if len(p.path) > 1 and p.path[0] == "parameters"}
    context = context_factory(
        parameters=values,
        parameter_names=declared,
        rejected_parameters={name for name in declared - set(values) if name in reported},
        resource_names=set(resources_section) if isinstance(resources_section, dict) else set(),
        condition_names=set(conditions_section) if isinstance(conditions_section, dict) else set(),
        files=template.files,
        **({"cfn": True, "mappings": _mappings(template, problems)} if version.is_cfn else {}),
        **context_args,
    )
    parser = Parser(version, context, problems)
    conditions = (Conditions.parse(conditions_section, parser, problems)
                  if isinstance(conditions_section, dict) else Conditions({}))
    conditions.check_cycles(problems)
    context.condition_evaluator = conditions.is_enabled

    resources: Mapping[str, ResourceDefinition] = {}
    if isinstance(resources_section, dict):
        resources = (StoredResources(resources_section, version, parser, problems) if stored
                     else _resources(resources_section, version, parser, problems))

    outputs = {}
    outputs_section = template.section("outputs")
    if isinstance(outputs_section, dict):
        for name, data in outputs_section.items():
            definition = _output(name, data, version, parser, problems)
            if definition is not None:
                outputs[name] = definition

    return StackDefinition(template, version, context, schemas, values, conditions,
                           resources, outputs, problems, parser.resource_calls)


def _resources(section: dict, version: Version, parser: Parser, problems: Problems) -> dict[str, ResourceDefinition]:
    """Every resource parsed, and dependency cycles among them reported."""
    resources = {}
    for name, data in section.items():
        definition = _resource(name, data, version, parser, problems)
        if definition is not None:
            resources[name] = definition
    _check_cycles(resources, problems)
    return resources


def _mappings(template: Template, problems: Problems) -> dict:
    """A CFN template's ``Mappings``: a map of maps.  Heat looks into it only for an
    ``Fn::FindInMap``, which fails at create on a bad entry: a warning here."""
    mappings = template.section("mappings")
    if not isinstance(mappings, dict) or not all(isinstance(m, dict) for m in mappings.values()):
        problems.warn(("mappings",), "invalid-section", 'the "Mappings" section must be a map of maps')
    return mappings if isinstance(mappings, dict) else {}


def _check_keys(path: tuple, data: dict, allowed: tuple, version: Version, what: str,
                problems: Problems, severity: str = "error") -> None:
    for key in data:
        if key not in allowed:
            problems.add(path + (key,), "unknown-key",
                         f'"{key}" is not a valid keyword inside a {what} definition '
                         f"(heat_template_version {version.name} allows: {', '.join(allowed)})", severity)


def _parse_condition_field(value: Any, path: tuple, parser: Parser, problems: Problems) -> Any:
    """A ``condition:`` of a resource or output: a name, a boolean or an expression."""
    if isinstance(value, str):
        if not parser.stack.has_condition(value):
            problems.add(path, "unknown-condition", f'Invalid condition "{value}"')
        return value
    if isinstance(value, bool) or value is None:
        return value
    parsed = parser.parse_condition(value, path)
    if not isinstance(parsed, Function):
        problems.add(path, "invalid-condition",
                     "a condition must be a condition name, a boolean or a condition function")
        return False
    return parsed


def _resource(name: Any, data: Any, version: Version, parser: Parser,
              problems: Problems) -> ResourceDefinition | None:
    path = ("resources", name)
    if not isinstance(data, dict):
        problems.add(path, "invalid-resource", f'resource "{name}" must be a map with at least a "type"')
        return None
    # Heat has always let CFN-format resources carry other keys
    _check_keys(path, data, version.resource_keys, version, "resource", problems,
                severity="warning" if version.is_cfn else "error")
    rtype = data.get("type")
    if rtype is None:
        problems.add(path, "missing-type", f'Resource {name} is missing "type"')
    elif not isinstance(rtype, str):
        problems.add(path + ("type",), "invalid-type", f'Resource {name} "type" must be a string')

    def parsed_map(key: str) -> Any:
        value = data.get(key)
        if value is None:
            return {}
        parsed = parser.parse(value, path + (key,))
        if not isinstance(parsed, (dict, Function)):
            problems.add(path + (key,), "invalid-resource-field",
                         f'"{key}" of resource {name} must be a map')
            return {}
        return parsed

    depends_on = data.get("depends_on") or []
    if isinstance(depends_on, str):
        depends_on = [depends_on]
    if not isinstance(depends_on, list) or not all(isinstance(d, str) for d in depends_on):
        problems.add(path + ("depends_on",), "invalid-depends-on",
                     "depends_on must be a resource name or a list of resource names")
        depends_on = []
    for index, target in enumerate(depends_on):
        if not parser.stack.has_resource(target):
            where = path + ("depends_on",) + ((index,) if isinstance(data["depends_on"], list) else ())
            problems.add(where, "unknown-resource",
                         f'"{target}" (in depends_on of {name}) is not a resource of this template')

    deletion_policy = data.get("deletion_policy", "Delete")
    if isinstance(deletion_policy, dict):
        deletion_policy = resolve_static(parser.parse(deletion_policy, path + ("deletion_policy",)))
    if deletion_policy not in version.deletion_policies:
        problems.add(path + ("deletion_policy",), "invalid-deletion-policy",
                     f'Invalid deletion policy "{deletion_policy}" '
                     f"(allowed in {version.name}: {', '.join(version.deletion_policies)})")
        deletion_policy = "Delete"

    external_id = data.get("external_id")
    if external_id is not None:
        external_id = parser.parse(external_id, path + ("external_id",))
        if not isinstance(external_id, (str, Function)):
            problems.add(path + ("external_id",), "invalid-external-id", "external_id must be a string")

    condition = None
    if "condition" in data and "condition" in version.resource_keys:
        condition = _parse_condition_field(data["condition"], path + ("condition",), parser, problems)

    description = data.get("description") or ""
    first_root = len(parser.reference_roots)
    properties, metadata = parsed_map("properties"), parsed_map("metadata")
    roots = parser.reference_roots[first_root:]
    definition = ResourceDefinition(
        name=name,
        type=rtype if isinstance(rtype, str) else "",
        properties=properties,
        metadata=metadata,
        depends_on=depends_on,
        deletion_policy=str(deletion_policy).capitalize(),
        update_policy=parsed_map("update_policy"),
        external_id=external_id,
        condition=condition,
        description=description if isinstance(description, str) else "",
    )
    # what dependencies() would find by walking properties and metadata
    definition._dependencies = set(depends_on).union(*(fn.dependencies() for fn in roots))
    return definition


def resolve_static(value: Any) -> Any:
    """Resolve a value that may only use parameters; errors become the raw value."""
    try:
        return resolve(value)
    except FunctionError:
        return value


def _output(name: Any, data: Any, version: Version, parser: Parser,
            problems: Problems) -> OutputDefinition | None:
    path = ("outputs", name)
    if not isinstance(data, dict):
        problems.add(path, "invalid-output", f'output "{name}" must be a map with a "value"')
        return None
    # Heat ignores other keys of an output: a warning, not an error
    _check_keys(path, data, version.output_keys, version, "output", problems, severity="warning")
    if "value" not in data:
        problems.add(path, "missing-value", f'Each output must contain a value key ("{name}" has none)')
    condition = None
    if "condition" in data and "condition" in version.output_keys:
        condition = _parse_condition_field(data["condition"], path + ("condition",), parser, problems)
    description = data.get("description") or ""
    return OutputDefinition(
        name=name,
        value=parser.parse(data.get("value"), path + ("value",)),
        description=description if isinstance(description, str) else str(description),
        condition=condition,
    )


def _check_cycles(resources: dict[str, ResourceDefinition], problems: Problems) -> None:
    """Report each dependency cycle once, as ``a -> b -> a``."""
    edges = {name: sorted(d for d in r.dependencies() if d in resources) for name, r in resources.items()}
    for cycle in find_cycles(edges):
        problems.add(("resources", cycle[-1]), "dependency-cycle",
                     "Circular Dependency Found: " + " -> ".join(cycle))
