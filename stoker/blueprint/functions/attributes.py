"""get_attribute, get_attributes_list, get_attributes_dict: node instances' runtime properties.

A missing runtime property falls back to the node's property of the same
path.  When a node name has several instances, get_attribute picks the one
the referencing instance has its only relationship to, else the one sharing
the smallest scaling-group instance with it (containment counts as
membership); otherwise it is ambiguous.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from stoker.blueprint.blueprint_errors import FunctionFailed
from stoker.blueprint.functions.base import (NODE_REFS, NODE_SCOPE, OUTPUTS_SCOPE, RELATIONSHIP_SCOPE, RUNTIME, SELF,
                                             SOURCE, TARGET, Function, follow_property, function_of, is_path_item)

CONTAINED_IN = "cloudify.relationships.contained_in"
#: which of SELF/SOURCE/TARGET each place forbids
_FORBIDDEN_REFS = {OUTPUTS_SCOPE: NODE_REFS, "capabilities": NODE_REFS, RELATIONSHIP_SCOPE: (SELF,),
                   NODE_SCOPE: (SOURCE, TARGET)}


def _check_node_ref(function: Function, node_name: Any, paths: list, checker: Any) -> None:
    if any(function_of(x, function.table) for x in [node_name, *paths]):
        return
    if node_name in NODE_REFS:
        if node_name in _FORBIDDEN_REFS.get(function.scope, ()):
            raise function.fail(f"{node_name} cannot be used with {function.name} in {function.path}")
    elif not checker.has_node(node_name):
        raise function.fail(f"node reference '{node_name}' does not exist")


def attribute_of(instance: dict, node: dict, path: list, handler: Any, context: dict, where: str,
                 function: str) -> Any:
    """The runtime property at ``path``, else the built-in id/index, else the node's property."""
    value = follow_property(instance["node_id"], instance.get("runtime_properties") or {}, path, handler,
                            context, where, function, missing_ok=True)
    if value is None and len(path) == 1:
        if path[0] == "node_instance_id":
            value = instance["id"]
        elif path[0] == "node_instance_index":
            value = instance.get("index")
    if value is None:
        value = follow_property(node["id"], node.get("properties", {}), path, handler, context, where,
                                function, missing_ok=True)
    return value


class _AttributeFunction(Function):
    phase = RUNTIME

    def parse_args(self, args: Any) -> None:
        if not (isinstance(args, list) and len(args) >= 2 and all(is_path_item(a, self.table) for a in args)):
            raise self.fail("expected [node_name, attribute_name, nested key or index, ...] "
                            f"but got {args!r}")
        self.node_name, self.attribute_path = args[0], list(args[1:])

    def validate(self, checker: Any) -> None:
        _check_node_ref(self, self.node_name, self.attribute_path, checker)

    def _node_of_reference(self, handler: Any) -> str:
        """get_attributes_*: SELF/SOURCE/TARGET name what the context holds."""
        if self.node_name not in NODE_REFS:
            return self.node_name
        found = self.context.get(self.node_name.lower())
        if not found:
            raise self.fail(f"{self.node_name} is missing in the context of {self.path}")
        return found


class GetAttribute(_AttributeFunction):
    name = "get_attribute"

    def evaluate(self, handler: Any) -> Any:
        try:
            instance = self._instance(handler)
        except FunctionFailed as exc:
            if not self.context.get("evaluate_outputs"):
                raise
            return f"<ERROR: Unable to evaluate get_attribute function: {exc.reason}>"
        node = handler.get_node(instance["node_id"], self)
        if self.context.get("self") and self.context["self"] != instance["id"]:
            self.context = {**self.context, "self": instance["id"]}
        return attribute_of(instance, node, self.attribute_path, handler, self.context, self.path, self.name)

    def _instance(self, handler: Any) -> dict:
        hint = self.context.get("instance_id_hint")
        if hint:
            instance = handler.get_node_instance(hint, self)
            if instance["node_id"] == self.node_name:
                return instance
        if self.node_name in NODE_REFS:
            instance_id = self.context.get(self.node_name.lower())
            if not instance_id and self.node_name == SELF and self.context.get("id"):
                instance_id = self._by_name(handler, self.context["id"])["id"]
            if not instance_id:
                raise self.fail(f"{self.node_name} is missing in the context of {self.path} "
                                f"for attribute {self.attribute_path}")
            return handler.get_node_instance(instance_id, self)
        return self._by_name(handler, self.node_name)

    def _by_name(self, handler: Any, node_id: str) -> dict:
        instances = handler.get_node_instances(node_id, self)
        if not instances:
            raise self.fail(f"Node {node_id} has no instances.")
        if len(instances) == 1:
            return instances[0]
        found = self._by_relationship(handler, instances) or self._by_scaling_group(handler, instances)
        if found:
            return found
        raise self.fail(f'More than one node instance found for node "{node_id}". '
                        "Cannot resolve a node instance unambiguously.")

    def _by_relationship(self, handler: Any, instances: list) -> dict | None:
        if not self.context.get("self"):
            return None
        me = handler.get_node_instance(self.context["self"], self)
        targets = {r["target_id"] for r in me.get("relationships") or [] if r["target_name"] == self.node_name}
        if len(targets) != 1:
            return None
        target = targets.pop()
        return next((i for i in instances if i["id"] == target), None)

    def _by_scaling_group(self, handler: Any, instances: list) -> dict | None:
        groups = _GroupFinder(handler, self)
        if self.context.get("self"):
            return groups.shared(self.context["self"], instances)
        if self.context.get("source"):
            return (groups.shared(self.context["source"], instances)
                    or groups.shared(self.context["target"], instances))
        return None


class _GroupFinder:
    """Scaling-group instances an instance belongs to, directly or through its containers."""

    def __init__(self, handler: Any, function: Function):
        self.handler = handler
        self.function = function

    def _parent(self, instance: dict) -> dict | None:
        node = self.handler.get_node(instance["node_id"], self.function)
        for relationship in node.get("relationships") or []:
            if CONTAINED_IN in relationship.get("type_hierarchy", ()):
                for rel in instance.get("relationships") or []:
                    if rel["target_name"] == relationship["target_id"]:
                        return self.handler.get_node_instance(rel["target_id"], self.function)
        return None

    def _group_names(self, instance: dict) -> list[str]:
        names = [g["name"] for g in instance.get("scaling_groups") or []]
        parent = self._parent(instance)
        return names + self._group_names(parent) if parent else names

    def _group_instance(self, instance: dict, group: str) -> str | None:
        for member_of in instance.get("scaling_groups") or []:
            if member_of["name"] == group:
                return member_of["id"]
        parent = self._parent(instance)
        return self._group_instance(parent, group) if parent else None

    def shared(self, context_id: str, instances: list) -> dict | None:
        me = self.handler.get_node_instance(context_id, self.function)
        mine = self._group_names(me)
        theirs = set(self._group_names(instances[0]))
        group = next((g for g in mine if g in theirs), None)
        if group is None:
            return None
        wanted = self._group_instance(me, group)
        found = [i for i in instances if self._group_instance(i, group) == wanted]
        return found[0] if len(found) == 1 else None


class GetAttributesList(_AttributeFunction):
    name = "get_attributes_list"

    def evaluate(self, handler: Any) -> Any:
        node_id = self._node_of_reference(handler)
        node = handler.get_node(node_id, self)
        return [attribute_of(i, node, self.attribute_path, handler, self.context, self.path, self.name)
                for i in handler.get_node_instances(node_id, self)]


class GetAttributesDict(_AttributeFunction):
    name = "get_attributes_dict"

    def parse_args(self, args: Any) -> None:
        if not isinstance(args, list) or len(args) < 2:
            raise self.fail(f"expected [node_name, attribute or [attribute, key, ...], ...] but got {args!r}")
        self.node_name = args[0]
        self.attribute_paths = [p if isinstance(p, list) else [p] for p in args[1:]]
        for path in self.attribute_paths:
            if not path or not all(is_path_item(a, self.table) for a in [self.node_name, *path]):
                raise self.fail(f"expected [node_name, attribute or [attribute, key, ...], ...] but got {args!r}")
        counts = Counter(self._key(p) for p in self.attribute_paths)
        clashes = [key for key, n in counts.items() if n > 1]
        if clashes:
            raise self.fail(f"duplicated or ambiguous attribute paths: {', '.join(clashes)}")
        self.attribute_path = self.attribute_paths

    @staticmethod
    def _key(path: list) -> str:
        return ".".join(str(p) for p in path)

    def evaluate(self, handler: Any) -> Any:
        node_id = self._node_of_reference(handler)
        node = handler.get_node(node_id, self)
        return {i["id"]: {self._key(p): attribute_of(i, node, p, handler, self.context, self.path, self.name)
                          for p in self.attribute_paths}
                for i in handler.get_node_instances(node_id, self)}
