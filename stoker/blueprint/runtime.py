"""Runtime evaluation: outputs, capabilities, node properties and operation inputs against a state.

``state`` answers ``inputs()``, ``node(name)``, ``node_instances(node)``,
``node_instance(id)``, ``secret(name)``, ``capabilities_of(deployment)``,
``labels()`` and ``sys()`` (see ``service.StoredState``).
"""

from __future__ import annotations

import copy
from typing import Any

from stoker.blueprint.evaluation import RuntimeEvaluator, scan
from stoker.blueprint.functions.base import NODE_SCOPE, RELATIONSHIP_SCOPE


def evaluate_values(section: str, declared: dict, state: Any) -> dict:
    """Every value of the plan's ``outputs`` or ``capabilities``; one whose value is a missing secret
    is left out, as in Cloudify."""
    values = {name: copy.deepcopy(entry["value"]) for name, entry in declared.items()
              if not _missing_secret(entry["value"], state)}
    scan(values, RuntimeEvaluator(state), None, {"evaluate_outputs": section == "outputs"}, section)
    return values


def _missing_secret(value: Any, state: Any) -> bool:
    if not isinstance(value, dict) or "get_secret" not in value:
        return False
    name = value["get_secret"]
    name = name[0] if isinstance(name, list) and name else name
    return isinstance(name, str) and state.secret(name) is None


def evaluate_node_properties(node: dict, state: Any, instance_id: str | None = None) -> dict:
    """A node's properties as an operation reading them sees them."""
    node = copy.deepcopy(node)
    if instance_id:
        node["instance_id_hint"] = instance_id
    scan(node["properties"], RuntimeEvaluator(state), NODE_SCOPE, node, f"nodes.{node['name']}.properties")
    return node["properties"]


def evaluate_operation_inputs(inputs: Any, state: Any, self_id: str | None = None, source_id: str | None = None,
                              target_id: str | None = None) -> Any:
    """An operation's inputs in the context of one instance (or one relationship instance)."""
    inputs = copy.deepcopy(inputs)
    if source_id:
        context, scope = {"source": source_id, "target": target_id}, RELATIONSHIP_SCOPE
    else:
        context, scope = {"self": self_id}, NODE_SCOPE
    scan(inputs, RuntimeEvaluator(state), scope, context, "operation.inputs")
    return inputs
