"""Blueprint text -> plan: every section checked, every error collected with its place.

The plan is plain data (nodes, relationships, groups, outputs...) in the
shape Cloudify's own parser makes, so the deployment and the functions read
it the same way at creation and at runtime.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

from stoker.blueprint import namespaces, nodes as node_rules
from stoker.blueprint.blueprint_errors import BlueprintError
from stoker.blueprint.evaluation import PlanEvaluator, make_function
from stoker.blueprint.functions.base import function_of, holds_function
from stoker.blueprint.functions.table import FUNCTIONS
from stoker.blueprint.loader import DSL_VERSION, builtin_document, load_blueprint
from stoker.blueprint.plugins_to_install import COMPUTE, plugins_to_install, workflow_plugin
from stoker.blueprint.references import reference_cycles
from stoker.blueprint.scanning import walk_plan
from stoker.blueprint.types import flatten_types
from stoker.blueprint.values import check_input_constraints, constraint_problem, known_type, typed_value
from stoker.cycles import find_cycles
from stoker.workflows.resources import ResourceRefused, resource_path
from stoker.errors import Problem, Problems

SECTIONS = {"tosca_definitions_version", "description", "imports", "inputs", "dsl_definitions", "data_types",
            "node_types", "relationships", "plugins", "workflows", "node_templates", "groups", "policies",
            "outputs", "capabilities", "labels", "blueprint_labels", "policy_types", "policy_triggers",
            "metadata", "deployment_settings", "resource_tags"}
INPUT_KEYS = {"type", "default", "required", "description", "display_label", "hidden", "constraints",
              "item_type", "display"}
SCALING_POLICY = "cloudify.policies.scaling"
RUNTIME_LABEL_FUNCTIONS = ("get_attribute", "get_attributes_list", "get_attributes_dict")


def parse_file(path: str | Path) -> dict:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BlueprintError(f"cannot read {path}: {exc}", code="unreadable") from None
    return parse_blueprint(text, path.name, path.parent)


def parse_blueprint(text: str, name: str = "blueprint.yaml", base: Path | None = None) -> dict:
    """The plan of a blueprint; ``ValidationFailed`` with every problem (file:line:col) if it is wrong."""
    loaded = load_blueprint(text, name, base)
    problems = Problems()
    problems.extend(loaded.problems)
    plan = None
    if not problems.errors:
        plan = _Parser(loaded.document, problems).plan()
    if plan is not None and loaded.blueprints:  # as Cloudify's plan records blueprint imports
        plan["imported_blueprints"] = sorted({blueprint_id for blueprint_id, _ in loaded.blueprints.values()})
        plan["namespaces_mapping"] = {ns: blueprint_id for ns, (blueprint_id, _) in loaded.blueprints.items()}
    if plan is not None and base is not None:
        _check_scripts(plan, base, problems, {ns: folder for ns, (_, folder) in loaded.blueprints.items()})
    for problem in problems.items:
        loaded.main.place(problem)
    problems.raise_if_errors()
    plan["warnings"] = [p.as_dict() for p in problems.warnings]
    return plan


def _check_scripts(plan: dict, base: Path, problems: Problems, imported: dict[str, Path]) -> None:
    """A script operation whose file is missing or outside the blueprint's folder would be refused when it
    runs: refuse it now (as Cloudify refuses the upload), once per script, at the first operation using it.
    ``ns--path`` of a ``blueprint:`` import (``imported``: namespace -> folder) is in that blueprint's."""
    refused: dict[str, tuple[str, list[tuple]]] = {}
    found: set[str] = set()
    for node in plan["nodes"]:
        places = [(("node_templates", node["name"], "interfaces"), node["operations"])]
        places += [(("node_templates", node["name"], "relationships", index), operations)
                   for index, rel in enumerate(node["relationships"])
                   for operations in (rel["source_operations"], rel["target_operations"])]
        for place, operations in places:
            for operation in operations.values():
                script = operation["inputs"].get("script_path") if isinstance(operation["inputs"], dict) else None
                if operation["plugin"] != node_rules.SCRIPT_PLUGIN or not isinstance(script, str) \
                        or "://" in script or script in found:
                    continue
                if script not in refused:
                    try:
                        resource_path(*namespaces.script_root(base, imported, script))
                        found.add(script)
                        continue
                    except ResourceRefused as exc:
                        refused[script] = (str(exc), [])
                refused[script][1].append(place)
    for script, (reason, places) in refused.items():
        others = f" (and {len(places) - 1} more operations)" if len(places) > 1 else ""
        problems.add(places[0], "script-not-found", f"script {script}: {reason}{others}")


class _Parser:
    def __init__(self, document: dict, problems: Problems):
        self.doc = document
        self.problems = problems

    def section(self, name: str) -> dict:
        value = self.doc.get(name)
        if value is None:
            return {}
        if not isinstance(value, dict):
            self.problems.add((name,), "invalid-section", f"{name} must be a mapping")
            return {}
        return value

    def plan(self) -> dict | None:
        for key in self.doc:
            if key not in SECTIONS:
                self.problems.add((key,), "unknown-section", f"unknown section '{key}'")
        version_name = self.doc.get("tosca_definitions_version")
        match = DSL_VERSION.match(str(version_name)) if version_name else None
        if not match:
            self.problems.add(("tosca_definitions_version",), "invalid-version",
                              f"tosca_definitions_version must be cloudify_dsl_1_0 ... cloudify_dsl_1_5, "
                              f"not {version_name!r}")
            return None
        plugins = self.section("plugins")
        data_types = flatten_types("data_types", self.section("data_types"), self.problems)
        node_types = flatten_types("node_types", self.section("node_types"), self.problems)
        rel_types = flatten_types("relationships", self.section("relationships"), self.problems)
        plan = {
            "version": (1, int(match.group(1))), "version_name": version_name,
            "description": self.doc.get("description"), "metadata": self.section("metadata") or None,
            "inputs": self.inputs(data_types), "data_types": data_types,
            "nodes": self.nodes(node_types, rel_types, plugins, data_types),
            "plugins": plugins, "workflows": self.section("workflows"),
            "outputs": self.values_section("outputs"), "capabilities": self.values_section("capabilities"),
            "labels": self.labels("labels"), "blueprint_labels": self.labels("blueprint_labels"),
            "deployment_settings": {"default_schedules": {}, **self.section("deployment_settings")},
            "resource_tags": self.section("resource_tags"),
        }
        self.check_workflow_mappings(plan["workflows"], plugins)
        standard = self.section("node_types").get(COMPUTE) == builtin_document()["node_types"][COMPUTE]
        plan.update(plugins_to_install([n for n in plan["nodes"] if not n.get("broken")], plan["workflows"], plugins,
                                       standard))
        plan["groups"], plan["policies"], plan["scaling_groups"] = self.groups(plan["nodes"])
        self.check_relationship_graph(plan["nodes"])
        self.check_functions(plan)
        return plan

    # -- inputs -------------------------------------------------------------------------------------
    def inputs(self, data_types: dict) -> dict:
        result = {}
        for name, definition in self.section("inputs").items():
            place = ("inputs", name)
            definition = definition if definition is not None else {}
            if not isinstance(definition, dict):
                self.problems.add(place, "invalid-input", "an input definition must be a mapping")
                continue
            self.problems.unknown_keys(place, definition, INPUT_KEYS, f" in input '{name}'")
            if not known_type(definition.get("type"), data_types):
                self.problems.add(place + ("type",), "unknown-type", f"unknown type '{definition['type']}'")
            constraints = definition.get("constraints") or []
            if not isinstance(constraints, list):
                self.problems.add(place + ("constraints",), "invalid-constraint", "constraints must be a list")
                constraints = []
            broken = [(i, constraint_problem(c)) for i, c in enumerate(constraints) if constraint_problem(c)]
            for index, problem in broken:
                self.problems.add(place + ("constraints", index), "invalid-constraint", problem)
            if definition.get("default") is not None and not broken and known_type(definition.get("type"), data_types):
                self._check_default(place, name, definition, data_types)
            result[name] = definition
        return result

    def _check_default(self, place: tuple, name: str, definition: dict, data_types: dict) -> None:
        """A default is a value too: it must fit the input's type and constraints."""
        if holds_function(definition["default"], FUNCTIONS):
            return
        try:
            typed_value(definition["default"], definition.get("type"), data_types, f"the default of input {name}")
            check_input_constraints(name, definition["default"], definition)
        except BlueprintError as exc:
            self.problems.add(place + ("default",), exc.code, exc.message)

    # -- node templates -----------------------------------------------------------------------------
    def nodes(self, node_types: dict, rel_types: dict, plugins: dict, data_types: dict) -> list[dict]:
        templates = self.section("node_templates")
        names = set(templates)
        result = []
        for name, template in templates.items():
            place = ("node_templates", name)
            if not isinstance(template, dict):
                self.problems.add(place, "invalid-node", "a node template must be a mapping")
                continue
            self.problems.unknown_keys(place, template, node_rules.NODE_KEYS, f" in node '{name}'")
            flat = node_types.get(template.get("type"))
            if flat is None:
                self.problems.add(place + ("type",), "unknown-type",
                                  f"node type '{template.get('type')}' is not defined")
                # a stand-in, so references to this node are not reported as well
                result.append({"id": name, "name": name, "type": None, "type_hierarchy": [], "broken": True,
                               "properties": {}, "operations": {}, "relationships": [],
                               "capabilities": {"scalable": {"properties": {"default_instances": 1}}}})
                continue
            result.append({
                "id": name, "name": name, "type": template["type"], "type_hierarchy": flat["hierarchy"],
                "properties": node_rules.typed_properties(place + ("properties",), template.get("properties"),
                                                          flat["properties"], data_types, self.problems),
                "operations": node_rules.operations(place + ("interfaces",), flat["interfaces"],
                                                    template.get("interfaces"), plugins, self.problems,
                                                    f"in node '{name}' of type '{template['type']}'"),
                "relationships": node_rules.relationships(place + ("relationships",),
                                                          template.get("relationships"), names, rel_types,
                                                          plugins, data_types, self.problems),
                "capabilities": {"scalable": {"properties": node_rules.scalable(place, template, self.problems)}},
            })
        for node in result:
            if node.get("broken"):
                continue
            try:
                node_rules.check_counts(f"node_templates.{node['name']}.capabilities.scalable.properties",
                                        node["capabilities"]["scalable"]["properties"])
            except BlueprintError as exc:
                self.problems.add(("node_templates", node["name"], "capabilities"), exc.code, exc.message)
        return result

    def check_workflow_mappings(self, workflows: dict, plugins: dict) -> None:
        """A workflow maps to a plugin's function or a script (dsl_parser's error 21)."""
        for name, workflow in workflows.items():
            mapping = workflow.get("mapping") if isinstance(workflow, dict) else workflow
            if isinstance(mapping, str) and mapping and workflow_plugin(workflow, plugins) is None:
                self.problems.add(("workflows", name), "unknown-plugin",
                                  "Could not extract plugin or a script resource is not found from workflow "
                                  f"mapping/script-path '{mapping}', which is declared for workflow '{name}'.")

    def check_relationship_graph(self, nodes: list[dict]) -> None:
        """One contained_in at most per node, and no cycle of relationships."""
        edges = {node["name"]: [r["target_id"] for r in node["relationships"]] for node in nodes}
        for node in nodes:
            hosts = [r for r in node["relationships"] if node_rules.CONTAINED_IN in r["type_hierarchy"]]
            if len(hosts) > 1:
                self.problems.add(("node_templates", node["name"], "relationships"), "several-hosts",
                                  "a node can be contained in one node only")
        for cycle in find_cycles(edges):
            self.problems.add(("node_templates", cycle[-2], "relationships"), "relationship-cycle",
                              f"relationships form a cycle: {' -> '.join(cycle)}")

    # -- groups and policies ------------------------------------------------------------------------
    def groups(self, nodes: list[dict]) -> tuple[dict, dict, dict]:
        groups = self.section("groups")
        node_names = {node["name"] for node in nodes}
        for name, group in groups.items():
            members = group.get("members") if isinstance(group, dict) else None
            if not isinstance(members, list) or not members:
                self.problems.add(("groups", name), "invalid-group", "a group needs a list of members")
                continue
            for index, member in enumerate(members):
                if member not in node_names and member not in groups:
                    self.problems.add(("groups", name, "members", index), "unknown-member",
                                      f"member '{member}' of group '{name}' is neither a node nor a group")
        policies = self.section("policies")
        scaling: dict[str, dict] = {}
        for name, policy in policies.items():
            place = ("policies", name)
            if not isinstance(policy, dict):
                self.problems.add(place, "invalid-policy", "a policy must be a mapping")
                continue
            if policy.get("type") != SCALING_POLICY:
                continue
            properties = {"default_instances": 1, "min_instances": 0, "max_instances": -1}
            for key, value in (policy.get("properties") or {}).items():
                if key not in properties:
                    self.problems.add(place + ("properties", key), "unknown-key", f"unknown scaling property '{key}'")
                properties[key] = value
            for target in policy.get("targets") or []:
                if target not in groups:
                    self.problems.add(place + ("targets",), "unknown-group", f"target '{target}' is not a group")
                    continue
                scaling[target] = {"members": list(groups[target]["members"]), "properties": properties}
            try:
                node_rules.check_counts(f"policies.{name}.properties", properties)
            except BlueprintError as exc:
                self.problems.add(place + ("properties",), exc.code, exc.message)
        return groups, policies, scaling

    # -- outputs, capabilities, labels --------------------------------------------------------------
    def values_section(self, section: str) -> dict:
        result = {}
        for name, definition in self.section(section).items():
            if not isinstance(definition, dict) or "value" not in definition:
                self.problems.add((section, name), "invalid-output", f"{section} '{name}' needs a value")
                continue
            self.problems.unknown_keys((section, name), definition, ("value", "description", "display_label", "hidden"))
            result[name] = dict(definition)
        return result

    def labels(self, section: str) -> dict:
        result = {}
        for key, label in self.section(section).items():
            place = (section, key)
            values = label.get("values") if isinstance(label, dict) else None
            if not isinstance(values, list):
                self.problems.add(place, "invalid-label", "a label is a mapping with a list of values")
                continue
            for value in values:
                found = function_of(value, FUNCTIONS)
                if section == "blueprint_labels" and not isinstance(value, str):
                    self.problems.add(place, "invalid-label", "a blueprint label's value must be a string")
                elif found and found[0].name in RUNTIME_LABEL_FUNCTIONS:
                    self.problems.add(place, "invalid-label",
                                      f"a label's value cannot be a runtime property ({found[0].name})")
                elif not found and not isinstance(value, str):
                    self.problems.add(place, "invalid-label",
                                      "a label's value must be a string or an intrinsic function")
            result[key.lower() if isinstance(key, str) else key] = {"values": values}
        return result

    # -- functions ----------------------------------------------------------------------------------
    def check_functions(self, plan: dict) -> None:
        """Every function call: arguments of the right shape, references to things that exist."""
        checker = PlanEvaluator(plan)  # one node index for all the checks

        def check(value: Any, scope: str | None, context: Any, path: str) -> None:
            try:
                function = make_function(value, scope, context, path)
                if function is not None:
                    function.validate(checker)
                elif isinstance(value, dict) and len(value) == 1:
                    self.warn_look_alike(next(iter(value)), path)
            except BlueprintError as exc:
                self.problems.extend([Problem(_steps(exc.path or path), exc.code, str(exc.message))])

        walk_plan(plan, check)
        for error in reference_cycles(plan):
            self.problems.extend([Problem(_steps(error.path), error.code, error.message)])

    def warn_look_alike(self, key: Any, path: str) -> None:
        """``{get_atribute: ...}`` is a plain mapping, as in Cloudify; say so, it is rarely meant."""
        if not isinstance(key, str):
            return
        close = difflib.get_close_matches(key, FUNCTIONS, n=1, cutoff=0.85)
        if close:
            self.problems.warn(_steps(path) + (key,), "function-look-alike",
                               f"'{key}' is not a function (did you mean {close[0]}?); the mapping is kept "
                               "as a literal value")


def _steps(path: str) -> tuple:
    """``node_templates.n.properties.a[0]`` -> ``('node_templates', 'n', 'properties', 'a', 0)``."""
    steps: list = []
    for part in path.split("."):
        name, *indexes = part.split("[")
        if name:
            steps.append(name)
        steps.extend(int(i.rstrip("]")) for i in indexes if i.rstrip("]").isdigit())
    return tuple(steps)
