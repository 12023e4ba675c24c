"""A resource whose type is a template (``type: server.yaml`` or a registry mapping): the provider
template's parameters are its properties, its outputs its attributes, both checked against the
facade it stands in for; its nested stack is run by ``NestedStackResource``."""

from __future__ import annotations

import copy
import json
from contextlib import contextmanager
from typing import Any

from stoker.errors import NotFound, Problem, Problems, StokerError, ValidationFailed
from stoker.functions.base import resolve
from stoker.resources import attributes
from stoker.resources.nested_stack import (NESTED_INVALID, NestedStackFailed, NestedStackResource,
                                           nested_resource_attribute)
from stoker.resources.properties import Properties, Schema, schemata
from stoker.template.environment import RegistryLoop, is_template_type, resolve_type
from stoker.template.parameters import parse_parameters
from stoker.template.template import Template


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
        owner = self.stack.parent.resources.get(self.stack.owner_name) if self.stack.parent is not None else None
        if not getattr(owner, "checks_member_facade", True):
            return
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
        return {k: _as_parameter(values[k], self.properties_schema[k]) for k in given if k in values}

    def _resolve_attribute(self, name: str) -> Any:
        if name == "OS::stack_id":
            return self.resource_id
        error = self.child_output_errors().get(name)
        if error is not None:  # as Heat's TemplateOutputError
            raise StokerError(f"Error in {self.name} output {name}: {error}")
        return self.child_outputs().get(name)

    def _show_resource(self) -> Any:
        return self.child_outputs()


def _as_parameter(value: Any, schema: Any) -> Any:
    """A list of maps given to a ``comma_delimited_list`` parameter, flattened as Heat does
    (``.member.N.KEY=VALUE`` items): an ``AWS::EC2::Instance`` template's ``Tags``, say."""
    if schema.type == Schema.LIST and isinstance(value, list) and value and isinstance(value[0], dict):
        return ",".join(f".member.{number}.{key}={item}" for number, entry in enumerate(value)
                        for key, item in entry.items())
    return value


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
