"""Which DSL version each blueprint feature needs, and Cloudify's refusal when it is used too early.

One table (``SINCE``) decides it, as the HOT version table does for templates.
Each file is checked against the main blueprint's version as it is loaded
(Stoker's own standard types excepted: Cloudify picks the types file for the
version too), so the refusal points at the file and line that use the feature.
"""

from __future__ import annotations

from typing import Any, Iterator

from stoker.errors import Problem

Version = tuple[int, int]

#: top-level sections
SECTIONS_SINCE: dict[str, Version] = {"dsl_definitions": (1, 2), "description": (1, 2), "data_types": (1, 2),
                                      "resource_tags": (1, 3), "policies": (1, 3)}
#: keys of a property schema (inputs, type properties, data type properties, workflow parameters)
SCHEMA_KEYS_SINCE: dict[str, Version] = {"required": (1, 2), "hidden": (1, 3), "display_label": (1, 3),
                                         "item_type": (1, 4)}
#: types naming manager objects
TYPES_SINCE: dict[str, Version] = {**dict.fromkeys(("blueprint_id", "deployment_id", "capability_value",
                                                    "scaling_group", "node_id", "node_type", "node_instance",
                                                    "secret_key"), (1, 4)), "operation_name": (1, 5)}
OPERATION_KEYS_SINCE: dict[str, Version] = {"max_retries": (1, 1), "retry_interval": (1, 1)}
PLUGIN_KEYS_SINCE: dict[str, Version] = {"install_arguments": (1, 1), "properties": (1, 5),
                                         "properties_description": (1, 5),
                                         **dict.fromkeys(("package_name", "package_version", "supported_platform",
                                                          "distribution", "distribution_version",
                                                          "distribution_release"), (1, 2))}
FUNCTIONS_SINCE: dict[str, Version] = {"concat": (1, 1), "merge": (1, 3)}
#: sections an imported file may define again only from 1_3 on
MERGEABLE_SINCE_1_3 = ("inputs", "outputs", "node_templates", "capabilities", "blueprint_labels", "labels",
                       "resource_tags")


def name(version: Version) -> str:
    return f"cloudify_dsl_{version[0]}_{version[1]}"


def _refusal(what: str, version: Version, since: Version) -> str:
    return f"{what} not supported in version {name(version)}, it was added in {name(since)}"


def check_import_version(main: Version, imported: Version | None, url: str, where: str) -> Problem | None:
    """An import may use the main file's version or an earlier one."""
    if imported is None or imported <= main:
        return None
    return Problem(("tosca_definitions_version",), "version-mismatch",
                   "An import uses a different tosca_definitions_version than the one defined in the main "
                   f"blueprint's file: main blueprint's file version is '{name(main)}', import with different "
                   f"version is '{url}', version of problematic import is '{name(imported)}'", where)


def check_mergeable(version: Version, section: str, where: str) -> Problem | None:
    """An imported section the importer already has, before 1_3."""
    if version >= (1, 3) or section not in MERGEABLE_SINCE_1_3:
        return None
    return Problem((section,), "non-mergeable",
                   f"Import failed: non-mergeable field: '{section}'. {section} can be imported multiple times "
                   "only from cloudify_dsl_1_3 and above.", where)


def version_problems(document: dict, version: Version, where: str) -> list[Problem]:
    """Every feature of ``document`` (one file) that ``version`` does not have yet."""
    found = []
    for path, what, since in _features(document):
        if version < since:
            found.append(Problem(path, "version-too-old", _refusal(what, version, since), where))
    for path, function, since in _functions(document, ()):
        if version < since:
            found.append(Problem(path, "version-too-old",
                                 f"Using {function} requires using dsl version {since[0]}_{since[1]} or greater, "
                                 f"but found: {name(version)} in {'.'.join(map(str, path))}.", where))
    return found


def _features(doc: dict) -> Iterator[tuple[tuple, str, Version]]:
    for section, since in SECTIONS_SINCE.items():
        if doc.get(section) is not None:
            yield (section,), section, since
    for place, schema in _schemas(doc):
        for prop, definition in schema.items():
            if not isinstance(definition, dict):
                continue
            for key, since in SCHEMA_KEYS_SINCE.items():
                if definition.get(key) is not None:
                    yield place + (prop, key), key, since
            if definition.get("type") in TYPES_SINCE:
                yield place + (prop, "type"), f"type '{definition['type']}'", TYPES_SINCE[definition["type"]]
            for index, constraint in enumerate(_list(definition.get("constraints"))):
                if isinstance(constraint, dict) and len(constraint) > 1:
                    yield place + (prop, "constraints", index), "Constraint's additional attributes", (1, 5)
    for node, template in _mapping(doc.get("node_templates")).items():
        if isinstance(template, dict) and template.get("capabilities") is not None:
            yield ("node_templates", node, "capabilities"), "capabilities", (1, 3)
    for place, operation in _operations(doc):
        for key, since in OPERATION_KEYS_SINCE.items():
            if operation.get(key) is not None:
                yield place + (key,), key, since
    for plugin, definition in _mapping(doc.get("plugins")).items():
        for key, since in PLUGIN_KEYS_SINCE.items():
            if isinstance(definition, dict) and definition.get(key) is not None:
                yield ("plugins", plugin, key), key, since
    for workflow, definition in _mapping(doc.get("workflows")).items():
        if isinstance(definition, dict) and definition.get("availability_rules") is not None:
            yield ("workflows", workflow, "availability_rules"), "availability_rules", (1, 4)


def _schemas(doc: dict) -> Iterator[tuple[tuple, dict]]:
    yield ("inputs",), _mapping(doc.get("inputs"))
    for section in ("node_types", "relationships", "data_types"):
        for type_name, definition in _mapping(doc.get(section)).items():
            if isinstance(definition, dict):
                yield (section, type_name, "properties"), _mapping(definition.get("properties"))
    for workflow, definition in _mapping(doc.get("workflows")).items():
        if isinstance(definition, dict):
            yield ("workflows", workflow, "parameters"), _mapping(definition.get("parameters"))


def _operations(doc: dict) -> Iterator[tuple[tuple, dict]]:
    for section, keys in (("node_types", ("interfaces",)), ("node_templates", ("interfaces",)),
                          ("relationships", ("source_interfaces", "target_interfaces"))):
        for owner, definition in _mapping(doc.get(section)).items():
            for key in keys:
                if not isinstance(definition, dict):
                    continue
                for interface, operations in _mapping(definition.get(key)).items():
                    for operation, body in _mapping(operations).items():
                        if isinstance(body, dict):
                            yield (section, owner, key, interface, operation), body


def _functions(value: Any, path: tuple) -> Iterator[tuple[tuple, str, Version]]:
    if isinstance(value, dict):
        if len(value) == 1 and next(iter(value)) in FUNCTIONS_SINCE:
            yield path, next(iter(value)), FUNCTIONS_SINCE[next(iter(value))]
        for key, item in value.items():
            yield from _functions(item, path + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _functions(item, path + (index,))


def _mapping(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list:
    return value if isinstance(value, list) else []
