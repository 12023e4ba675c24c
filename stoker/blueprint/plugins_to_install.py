"""The plan's ``deployment_plugins_to_install``, ``workflow_plugins_to_install`` and
``host_agent_plugins_to_install``: which plugins a deployment's operations and workflows use, as
dsl_parser lists them (a manager installs them; a plugin task reads its properties from them).

Each entry is the plugin's definition with every field dsl_parser gives (absent ones None,
``install`` true, ``properties`` empty) and its ``name``: one plugin imported into two
namespaces is two entries of one package, each with its own properties.
"""

from __future__ import annotations

import copy
from typing import Any

from stoker.blueprint.loader import builtin_document
from stoker.blueprint.namespaces import is_script
from stoker.blueprint.nodes import SCRIPT_PLUGIN

#: a plugin definition's fields, in dsl_parser's order
FIELDS = ("source", "executor", "install", "install_arguments", "package_name", "package_version",
          "supported_platform", "distribution", "distribution_version", "distribution_release",
          "properties_description", "properties")
CENTRAL = "central_deployment_agent"
HOST_AGENT = "host_agent"
#: Cloudify's Compute declares the agent's operations (cloudify.interfaces.cloudify_agent), some run by
#: the manager, some by the agent: Stoker's standard types leave them out (it installs no agents), the
#: plan lists their plugin as Cloudify's does
COMPUTE = "cloudify.nodes.Compute"
AGENT_PLUGIN = "agent"


def plugin_entry(name: str, definition: Any) -> dict:
    """``definition`` (a ``plugins:`` entry) as a plan lists it."""
    definition = definition if isinstance(definition, dict) else {}
    entry = {field: copy.deepcopy(definition.get(field)) for field in FIELDS}
    entry["install"] = True if entry["install"] is None else entry["install"]
    entry["properties"] = entry["properties"] or {}
    return {**entry, "name": name}


def plugins_to_install(nodes: list[dict], workflows: dict, plugins: dict,
                       standard_compute: bool = True) -> dict[str, list[dict]]:
    """The three lists, from the nodes' operations (each plugin with the executor its operations run
    under) and the workflows' mappings; ``standard_compute``: the plan's Compute is the standard types'
    (a blueprint defining its own has no agent operations)."""
    deployment: dict[str, dict] = {}
    host_agent: dict[str, dict] = {}
    for node in nodes:
        for name, executor in _node_plugins(node, nodes, standard_compute):
            entry = {**plugin_entry(name, plugins.get(name)), "executor": executor}
            if executor == CENTRAL:
                deployment.setdefault(name, entry)
            elif executor == HOST_AGENT:
                host_agent.setdefault(name, entry)
    used = []
    for workflow in workflows.values():
        name = workflow_plugin(workflow, plugins)
        if name is not None and name not in used:
            used.append(name)
    return {"deployment_plugins_to_install": list(deployment.values()),
            "workflow_plugins_to_install": [plugin_entry(name, plugins.get(name)) for name in used],
            "host_agent_plugins_to_install": list(host_agent.values())}


def _node_plugins(node: dict, nodes: list[dict], standard_compute: bool) -> list[tuple[str, str]]:
    """``(plugin, executor)`` of a node's operations, its relationships' source side and the target side
    of relationships to it (dsl_parser's node ``plugins``), in dsl_parser's order: a Compute's agent
    operations come after those of the interfaces Root declares, before those of interfaces declared below."""
    own = node["operations"]
    root = builtin_document()["node_types"]["cloudify.nodes.Root"]["interfaces"]
    first = {key: op for key, op in own.items() if key.rsplit(".", 1)[0] in root}
    agent = {"agent": {"plugin": AGENT_PLUGIN, "executor": CENTRAL}, "amqp": {"plugin": AGENT_PLUGIN,
                                                                                "executor": HOST_AGENT}}
    tables = [first, agent if standard_compute and COMPUTE in node.get("type_hierarchy", ()) else {},
              {key: op for key, op in own.items() if key not in first},
              *(rel["source_operations"] for rel in node["relationships"])]
    tables += [rel["target_operations"] for other in nodes for rel in other["relationships"]
               if rel["target_id"] == node["name"]]
    found: list[tuple[str, str]] = []
    for table in tables:
        for operation in table.values():
            key = (operation.get("plugin"), operation.get("executor"))
            if key[0] and key not in found:
                found.append(key)
    return found


def workflow_plugin(workflow: Any, plugins: dict) -> str | None:
    """The plugin a workflow's mapping names (its name and a dot begin it), ``script`` for a script;
    None for a mapping naming neither (dsl_parser refuses it)."""
    mapping = workflow.get("mapping") if isinstance(workflow, dict) else workflow
    if not isinstance(mapping, str) or not mapping:
        return None
    for name in plugins:
        if mapping.startswith(f"{name}."):
            return name
    return SCRIPT_PLUGIN if is_script(mapping) else None
