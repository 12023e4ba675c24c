"""Namespaced imports: ``imports: [ns--other.yaml]`` puts everything the file defines under ``ns--``.

As in Cloudify, the names a file defines (inputs, types, node templates,
outputs, groups, plugins and their properties...) and its references to them (types,
derived_from, targets, group members, get_input/get_property/get_attribute, the plugin
an operation or workflow mapping names) take the prefix; the standard types keep their
names. Namespaces nest: an import of a namespaced file is in the same namespace,
``outer--inner--`` if it has one of its own. So one plugin imported into two namespaces
is two plugins (``a--p``, ``b--p``) of one package, each with its own properties.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from stoker.blueprint.functions.base import NODE_REFS

SEPARATOR = "--"
#: names Cloudify never namespaces (dsl_parser's check_if_overridable_cloudify_type)
CLOUDIFY_PREFIX = "cloudify."
_ENTRY = re.compile(r"^([A-Za-z0-9_.-]+?)--(.+)$")
#: sections whose keys are names a file defines
NAMED_SECTIONS = ("inputs", "data_types", "node_types", "relationships", "node_templates", "outputs",
                  "capabilities", "groups", "policies", "policy_types", "workflows")
NODE_FUNCTIONS = ("get_property", "get_attribute", "get_attributes_list", "get_attributes_dict")
PRIMITIVE_TYPES = {"string", "integer", "float", "boolean", "list", "dict", "regex", "textarea",
                   "blueprint_id", "deployment_id", "capability_value", "scaling_group", "node_id", "node_type",
                   "node_instance", "secret_key", "operation_name"}


def split(entry: str) -> tuple[str | None, str]:
    """``("ns", "other.yaml")`` for ``ns--other.yaml``; no namespace for a URL with ``--`` in its path."""
    found = _ENTRY.match(entry)
    if not found or "/" in found.group(1) or ":" in found.group(1):
        return None, entry
    return found.group(1), found.group(2)


def apply(document: dict, namespace: str, builtin: set[str]) -> None:
    """Prefix the names ``document`` defines and its references to them, in place."""
    rename = _Renamer(namespace + SEPARATOR, builtin)
    for section in NAMED_SECTIONS:
        if isinstance(document.get(section), dict):
            document[section] = {rename.name(key): value for key, value in document[section].items()}
    for section in ("node_types", "relationships", "data_types"):
        for definition in _values(document.get(section)):
            if "derived_from" in definition:
                definition["derived_from"] = rename.type(definition["derived_from"])
            for schema in _values(definition.get("properties")):
                if "type" in schema:
                    schema["type"] = rename.type(schema["type"])
    for schema in _values(document.get("inputs")):
        if "type" in schema:
            schema["type"] = rename.type(schema["type"])
    for template in _values(document.get("node_templates")):
        if "type" in template:
            template["type"] = rename.type(template["type"])
        for relationship in template.get("relationships") or []:
            if isinstance(relationship, dict):
                relationship.update({key: rename.type(relationship[key]) if key == "type" else rename.name(
                    relationship[key]) for key in ("type", "target") if key in relationship})
    for group in _values(document.get("groups")):
        if isinstance(group.get("members"), list):
            group["members"] = [rename.name(m) for m in group["members"]]
    for policy in _values(document.get("policies")):
        if isinstance(policy.get("targets"), list):
            policy["targets"] = [rename.name(t) for t in policy["targets"]]
    for section in ("node_templates", "outputs", "capabilities", "node_types", "relationships", "inputs"):
        rename.functions(document.get(section))
    _plugins(document, rename)


def _plugins(document: dict, rename: _Renamer) -> None:
    """Plugin names and their property names, and the mappings naming them (dsl_parser namespaces
    every string of an operation's implementation or a workflow's mapping but scripts and
    ``cloudify.`` names: a namespaced file's ``p.module.task`` is plugin ``ns--p``'s, and
    an unnamespaced plugin cannot be reached from it)."""
    if isinstance(document.get("plugins"), dict):
        document["plugins"] = {rename.name(key): value for key, value in document["plugins"].items()}
    for plugin in _values(document.get("plugins")):
        if isinstance(plugin.get("properties"), dict):
            plugin["properties"] = {rename.name(key): value for key, value in plugin["properties"].items()}
    for interface, name, operation in _operations(document):
        if isinstance(operation, str):
            interface[name] = rename.mapping(operation)
        elif isinstance(operation, dict) and "implementation" in operation:
            operation["implementation"] = rename.mapping(operation["implementation"])
    workflows = document.get("workflows") if isinstance(document.get("workflows"), dict) else {}
    for name, workflow in workflows.items():
        if isinstance(workflow, str):
            workflows[name] = rename.mapping(workflow)
        elif isinstance(workflow, dict) and "mapping" in workflow:
            workflow["mapping"] = rename.mapping(workflow["mapping"])


#: an operation implementation naming a script (not ``plugin.module.task``)
_SCRIPT = re.compile(r"(/|\.(sh|py|bash|ps1|pl|rb)$)")


def prefix_scripts(document: dict, namespace: str) -> None:
    """Script paths (implementations and ``script_path`` inputs) of an imported blueprint's operations
    as ``ns--path``: they are read from that blueprint's files."""
    prefix = namespace + SEPARATOR
    for interface, name, operation in _operations(document):
        if isinstance(operation, str) and _SCRIPT.search(operation):
            interface[name] = prefix + operation
        elif isinstance(operation, dict):
            prefix_operation(operation, prefix)


def _operations(document: dict) -> list[tuple[dict, str, Any]]:
    """``(interface, name, operation)`` of every operation of the types and templates of ``document``."""
    holders = [*_values(document.get("node_types")), *_values(document.get("node_templates")),
               *_values(document.get("relationships"))]
    holders += [rel for template in _values(document.get("node_templates"))
                for rel in template.get("relationships") or [] if isinstance(rel, dict)]
    return [(interface, name, operation) for holder in holders
            for key in ("interfaces", "source_interfaces", "target_interfaces")
            for interface in _values(holder.get(key)) for name, operation in list(interface.items())]


def is_script(mapping: str) -> bool:
    """An implementation or workflow mapping naming a script (a path, a URL, or the script written in place)
    rather than ``plugin.module.task``."""
    return bool(_SCRIPT.search(mapping)) or "\n" in mapping.strip()


def script_root(base: Path, imported: dict[str, Path], script: str) -> tuple[Path, str]:
    """(folder, path in it) of a script: ``ns--path`` in an imported blueprint's folder, else ``base``."""
    namespace, rest = split(script)
    if namespace is not None and namespace in imported:
        return imported[namespace], rest
    return base, script


def prefix_operation(operation: dict, prefix: str) -> None:
    """``prefix`` before the operation's script (its implementation or its ``script_path`` input)."""
    implementation = operation.get("implementation")
    if isinstance(implementation, str) and _SCRIPT.search(implementation):
        operation["implementation"] = prefix + implementation
    inputs = operation.get("inputs")
    if isinstance(inputs, dict) and isinstance(inputs.get("script_path"), str):
        inputs["script_path"] = prefix + inputs["script_path"]
    elif isinstance(inputs, dict) and isinstance(inputs.get("script_path"), dict) \
            and isinstance(inputs["script_path"].get("default"), str):
        inputs["script_path"]["default"] = prefix + inputs["script_path"]["default"]


class _Renamer:
    def __init__(self, prefix: str, builtin: set[str]):
        self.prefix = prefix
        self.builtin = builtin

    def name(self, value: Any) -> Any:
        """A name the file defines, or a reference to one; ``cloudify.`` names keep theirs, as in
        Cloudify (a plugin's types imported by a namespaced file)."""
        return self.prefix + value if isinstance(value, str) and not value.startswith(CLOUDIFY_PREFIX) else value

    def argument(self, value: Any) -> Any:
        """A function's input or node name: always prefixed (dsl_parser's generate_namespaced_value)."""
        return self.prefix + value if isinstance(value, str) else value

    def mapping(self, value: Any) -> Any:
        """An operation's implementation or a workflow's mapping: ``ns--plugin.module.task``, scripts kept."""
        return self.name(value) if isinstance(value, str) and value and not is_script(value) else value

    def type(self, value: Any) -> Any:
        if not isinstance(value, str) or value in self.builtin or value in PRIMITIVE_TYPES:
            return value
        return self.name(value)

    def functions(self, value: Any) -> None:
        """get_input names and node names in functions, wherever they sit."""
        if isinstance(value, list):
            for item in value:
                self.functions(item)
            return
        if not isinstance(value, dict):
            return
        if len(value) == 1:
            (key, args), = value.items()
            if key == "get_input":
                value[key] = [self.argument(args[0]), *args[1:]] if isinstance(args, list) and args \
                    else self.argument(args)
            elif key in NODE_FUNCTIONS and isinstance(args, list) and args and args[0] not in NODE_REFS:
                args[0] = self.argument(args[0])
        for item in value.values():
            self.functions(item)


def _values(section: Any) -> list[dict]:
    return [v for v in section.values() if isinstance(v, dict)] if isinstance(section, dict) else []
