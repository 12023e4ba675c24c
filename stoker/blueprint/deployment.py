"""Deployment creation: inputs applied, static functions evaluated, node instances laid out.

``prepare`` works on a copy of the plan and returns the deployment plan;
nothing is stored here (``service`` does that), so a failure leaves no trace.
"""

from __future__ import annotations

import copy
from typing import Any, Callable

from stoker.blueprint import nodes as node_rules
from stoker.blueprint.blueprint_errors import BlueprintError
from stoker.blueprint.evaluation import PlanEvaluator, make_function
from stoker.blueprint.functions.manager import GetSecret
from stoker.blueprint.deployment_inputs import deployment_inputs
from stoker.blueprint.instances import create_instances
from stoker.blueprint.references import check_reference_cycles
from stoker.blueprint.scanning import walk_plan


def prepare(plan: dict, inputs: dict | None = None, runtime_only: bool = False,
            secret_exists: Callable[[str], bool] = lambda name: False) -> dict:
    """The deployment plan: ``plan`` with input values, static values and ``node_instances``."""
    check_reference_cycles(plan)
    plan = copy.deepcopy(plan)
    plan["inputs"] = deployment_inputs(plan["inputs"], inputs, plan["data_types"])
    evaluator = PlanEvaluator(plan, runtime_only=runtime_only)
    walk_plan(plan, evaluator, deep=False)
    missing = sorted(name for name in secrets_named(plan) if not secret_exists(name))
    if missing:
        raise BlueprintError(f"Required secrets: [{', '.join(missing)}] don't exist in this tenant", code="missing-secret")
    for node in plan["nodes"]:
        node_rules.check_counts(f"node_templates.{node['name']}.capabilities.scalable.properties",
                                node["capabilities"]["scalable"]["properties"])
    for name, group in plan["scaling_groups"].items():
        node_rules.check_counts(f"groups.{name}", group["properties"])
    for key, label in plan["labels"].items():
        for value in label["values"]:
            if not isinstance(value, str) and not runtime_only:
                raise BlueprintError(f"a label's value must be a string once evaluated, not {value!r}",
                                     f"labels.{key}", code="invalid-label")
    plan["node_instances"] = create_instances(plan)
    return plan


def secrets_named(plan: dict) -> set[str]:
    """Secret names known at creation (a name computed at runtime is checked then)."""
    found: set[str] = set()

    def visit(value: Any, scope: Any, context: Any, path: str) -> None:
        try:
            function = make_function(value, scope, context, path)
        except BlueprintError:
            return
        if isinstance(function, GetSecret) and isinstance(function.secret_name(), str):
            found.add(function.secret_name())

    walk_plan(plan, visit)
    return found
