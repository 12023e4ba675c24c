"""Functions in operation inputs and node properties, evaluated against the execution's live state.

The blueprint layer's ``StoredState`` answers from the store; during an
execution the instances' states and runtime properties are the runner's, so
these answers come from the ``Deployment`` it holds (no database read per
operation, and a property a script set a moment ago is seen at once).
"""

from __future__ import annotations

from typing import Any

from stoker.blueprint.runtime import evaluate_node_properties, evaluate_operation_inputs
from stoker.blueprint.state import StoredState
from stoker.workflows.model import Deployment, Instance


class LiveState(StoredState):
    def __init__(self, records: Any, project_id: str, deployment_row: dict, model: Deployment):
        super().__init__(records, project_id, deployment_row)
        self.model = model

    def node(self, name: str) -> dict | None:
        return self.model.nodes.get(name) if isinstance(name, str) else None

    def node_instances(self, node: str) -> list[dict]:
        return [_view(i) for i in self.model.instances.values() if i.node_id == node]

    def node_instance(self, instance_id: str) -> dict | None:
        instance = self.model.instances.get(instance_id) if isinstance(instance_id, str) else None
        return _view(instance) if instance is not None else None


def _view(instance: Instance) -> dict:
    return {"id": instance.id, "node_id": instance.node_id, "index": instance.index, "state": instance.state,
            "host_id": instance.host_id, "scaling_groups": instance.scaling_groups,
            "relationships": instance.relationships, "runtime_properties": instance.runtime_properties,
            "version": 0}


class LiveEvaluator:
    def __init__(self, state: LiveState):
        self.state = state

    def node_properties(self, instance: Instance) -> dict:
        return evaluate_node_properties(self.state.model.nodes[instance.node_id], self.state, instance.id)

    def operation_inputs(self, inputs: dict, instance: Instance, target: Instance | None) -> dict:
        if target is None:
            return evaluate_operation_inputs(inputs, self.state, self_id=instance.id)
        return evaluate_operation_inputs(inputs, self.state, source_id=instance.id, target_id=target.id)
