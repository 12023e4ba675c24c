"""Where functions may sit in a plan, with the scope and context each place gives them.

One walk serves three purposes: checking at upload, evaluating at creation,
and finding secrets; the visitor decides what happens at each value.
"""

from __future__ import annotations

from typing import Any, Callable

from stoker.blueprint.functions.base import CAPABILITIES_SCOPE, NODE_SCOPE, OUTPUTS_SCOPE, RELATIONSHIP_SCOPE

Visitor = Callable[[Any, Any, Any, str], Any]


def each_value(container: Any, visit: Visitor, scope: str | None, context: Any, path: str) -> None:
    """Visit every value of ``container``, replacing it by what the visitor returns (if anything)."""
    if isinstance(container, dict):
        for key, value in list(container.items()):
            result = visit(value, scope, context, f"{path}.{key}")
            if result is not value:
                container[key] = result
    elif isinstance(container, list):
        for index, value in enumerate(container):
            result = visit(value, scope, context, f"{path}[{index}]")
            if result is not value:
                container[index] = result


def _deep(visit: Visitor) -> Visitor:
    """A visitor that also goes inside containers (for checking, which does not evaluate)."""

    def inner(value: Any, scope: Any, context: Any, path: str) -> Any:
        visit(value, scope, context, path)
        each_value(value, inner, scope, context, path)
        return value

    return inner


def walk_node(node: dict, visit: Visitor) -> None:
    place = f"node_templates.{node['name']}"
    each_value(node["properties"], visit, NODE_SCOPE, node, f"{place}.properties")
    for capability in node.get("capabilities", {}).values():
        each_value(capability.get("properties", {}), visit, NODE_SCOPE, node, f"{place}.capabilities.scalable.properties")


def walk_operations(node: dict, visit: Visitor) -> None:
    place = f"node_templates.{node['name']}"
    for name, operation in node["operations"].items():
        context = {**node, "operation": operation}
        each_value(operation["inputs"], visit, NODE_SCOPE, context, f"{place}.interfaces.{name}.inputs")
    for index, rel in enumerate(node["relationships"]):
        context = {"node_template": node, "relationship": rel}
        for side in ("source", "target"):
            for name, operation in rel[f"{side}_operations"].items():
                each_value(operation["inputs"], visit, RELATIONSHIP_SCOPE, context,
                      f"{place}.relationships[{index}].{side}_interfaces.{name}.inputs")


def walk_plan(plan: dict, visit: Visitor, deep: bool = True) -> None:
    """Visit every place of ``plan`` that may hold functions, in Cloudify's order."""
    visit = _deep(visit) if deep else visit
    for node in plan["nodes"]:
        walk_node(node, visit)
        walk_operations(node, visit)
    for name, output in plan["outputs"].items():
        each_value(output, visit, OUTPUTS_SCOPE, plan["outputs"], f"outputs.{name}")
    for name, policy in plan.get("policies", {}).items():
        if isinstance(policy, dict):
            each_value(policy.get("properties", {}), visit, "policies", policy, f"policies.{name}.properties")
    for name, group in plan.get("scaling_groups", {}).items():
        each_value(group.get("properties", {}), visit, "scaling_groups", group, f"groups.{name}.properties")
    for name, capability in plan["capabilities"].items():
        each_value(capability, visit, CAPABILITIES_SCOPE, capability, f"capabilities.{name}")
    for key, label in plan["labels"].items():
        each_value(label, visit, "labels", label, f"labels.{key}")
    each_value(plan["deployment_settings"], visit, "deployment_settings", plan, "deployment_settings")
    each_value(plan.get("resource_tags", {}), visit, "resource_tags", plan, "resource_tags")
