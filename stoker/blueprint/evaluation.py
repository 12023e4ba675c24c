"""Evaluating functions in place, inside out, at deployment creation or at runtime.

``scan`` walks a container and replaces each value by what the evaluator
makes of it; the evaluator first scans a value's own contents (so arguments
are evaluated before the function that holds them), then evaluates the
value if it is a function, and again while the result is a new function
(a property that holds ``get_input`` read through ``get_property``).
A call met again while it is being followed (a loop of get_property or
get_input calls) is reported, not followed; so is a chain over ``MAX_DEPTH``.
"""

from __future__ import annotations

import abc
from typing import Any

from stoker.blueprint.blueprint_errors import BlueprintError, FunctionFailed
from stoker.blueprint.functions.base import HYBRID, STATIC, Function, function_of
from stoker.blueprint.functions.table import FUNCTIONS
from stoker.blueprint.scanning import each_value

MAX_DEPTH = 50


#: evaluate every value of a container in place (``scan(container, evaluator, scope, context, path)``)
scan = each_value


def make_function(value: Any, scope: str | None, context: Any, path: str) -> Function | None:
    found = function_of(value, FUNCTIONS)
    if found is None:
        return None
    cls, args = found
    return cls(args, scope=scope, context=context, path=path, raw=value, table=FUNCTIONS)


class Evaluator(abc.ABC):
    """Evaluates values; subclasses say which functions run and where data comes from."""

    table = FUNCTIONS
    runtime = False

    def __init__(self) -> None:
        #: the function calls being followed (innermost last), to catch one met again
        self._following: list[tuple] = []

    def __call__(self, value: Any, scope: str | None, context: Any, path: str) -> Any:
        followed = 0
        try:
            while True:
                scan(value, self, scope, context, path)
                function = make_function(value, scope, context, path)
                if function is None:
                    return value
                self._follow(function, path)
                followed += 1
                previous = value
                value = self.apply(function)
                context = function.context
                if value is previous:  # left for runtime
                    return value
        finally:
            del self._following[len(self._following) - followed:]

    def _follow(self, function: Function, path: str) -> None:
        """Note one more call followed; a call met again (same function, same node) is a cycle."""
        owner = function.context.get("name") if isinstance(function.context, dict) else None
        key = (owner, repr(function.raw))
        if key in self._following:
            chain = [f"{name}: {raw}" for name, raw in self._following[self._following.index(key):] + [key]]
            raise BlueprintError(f"circular {function.name} function call detected: {' -> '.join(chain)}",
                                 path.split("[")[0], code="reference-cycle")
        if len(self._following) >= MAX_DEPTH:
            raise BlueprintError(f"functions refer to each other more than {MAX_DEPTH} levels deep",
                                 path.split("[")[0], code="function-loop")
        self._following.append(key)

    def apply(self, function: Function) -> Any:
        return function.evaluate(self)

    def property_value(self, value: Any, context: Any, where: str) -> Any:
        """A value met while following a property path."""
        return value

    # -- data that functions read; each names the asking function in its errors
    @abc.abstractmethod
    def get_node(self, name: str, function: Function) -> dict:
        """The node template (or instance) called ``name``; the asking function is named in errors."""


class PlanEvaluator(Evaluator):
    """Deployment creation: static and hybrid functions run, runtime ones stay as they are.

    With ``runtime_only`` nothing runs (every function waits for runtime).
    """

    def __init__(self, plan: dict, runtime_only: bool = False):
        super().__init__()
        self.plan = plan
        self.runtime_only = runtime_only
        self._nodes = {node["name"]: node for node in plan["nodes"]}

    def has_node(self, name: Any) -> bool:
        return isinstance(name, str) and name in self._nodes

    def apply(self, function: Function) -> Any:
        if not self.runtime_only and function.phase in (STATIC, HYBRID):
            return function.evaluate(self)
        return function.raw

    def get_input(self, name: Any, function: Function) -> Any:
        if name not in self.plan["inputs"]:
            raise FunctionFailed(function.name, f"references an unknown input '{name}'", function.path)
        return self.plan["inputs"][name]

    def get_node(self, name: str, function: Function) -> dict:
        try:
            return self._nodes[name]
        except (KeyError, TypeError):
            raise FunctionFailed(function.name, f"node {name} does not exist", function.path) from None


class RuntimeEvaluator(Evaluator):
    """Runtime: every function runs, against a deployment's state (``state`` answers the look-ups)."""

    runtime = True

    def __init__(self, state: Any):
        super().__init__()
        self.state = state
        self._instances_of: dict[str, list] = {}
        self._instances: dict[str, dict] = {}

    def property_value(self, value: Any, context: Any, where: str) -> Any:
        return self(value, None, context, where)

    def get_input(self, name: Any, function: Function) -> Any:
        inputs = self.state.inputs()
        if name not in inputs:
            raise FunctionFailed(function.name, f"references an unknown input '{name}'", function.path)
        return inputs[name]

    def get_node(self, name: str, function: Function) -> dict:
        node = self.state.node(name)
        if node is None:
            raise FunctionFailed(function.name, f"node not found: {name}", function.path)
        return node

    def get_node_instances(self, node_id: str, function: Function) -> list[dict]:
        if node_id not in self._instances_of:
            self.get_node(node_id, function)
            found = self.state.node_instances(node_id)
            self._instances_of[node_id] = found
            self._instances.update((i["id"], i) for i in found)
        return self._instances_of[node_id]

    def get_node_instance(self, instance_id: str, function: Function) -> dict:
        if instance_id not in self._instances:
            found = self.state.node_instance(instance_id)
            if found is None:
                raise FunctionFailed(function.name, f"node instance not found: {instance_id}", function.path)
            self._instances[instance_id] = found
        return self._instances[instance_id]

    def get_secret(self, name: Any, function: Function) -> str:
        value = self.state.secret(name)
        if value is None:
            raise FunctionFailed(function.name, f"secret {name!r} does not exist", function.path)
        return value

    def get_capabilities(self, deployment: Any, function: Function) -> dict:
        found = self.state.capabilities_of(deployment)
        if found is None:
            raise FunctionFailed(function.name, f"deployment {deployment!r} does not exist", function.path)
        return found

    def get_labels(self, function: Function) -> dict:
        return self.state.labels()

    def get_display_names(self, deployment_ids: list, function: Function) -> list[str]:
        return self.state.display_names(deployment_ids)

    def get_group_deployments(self, group: Any, function: Function) -> list[str]:
        return self.state.group_deployments(group)

    def get_sys(self, function: Function) -> dict:
        return self.state.sys()
