"""get_property: a node template's property, by node name or SELF/SOURCE/TARGET."""

from __future__ import annotations

from typing import Any, Iterator

from stoker.blueprint.functions.base import (HYBRID, NODE_REFS, NODE_SCOPE, RELATIONSHIP_SCOPE, SELF, SOURCE, Function,
                                             follow_property, function_of, is_literal_path, is_path_item)


class GetProperty(Function):
    name = "get_property"
    phase = HYBRID

    def parse_args(self, args: Any) -> None:
        if not (isinstance(args, list) and len(args) >= 2 and all(is_path_item(a, self.table) for a in args)):
            raise self.fail("expected [node_name, property_name, nested key or index, ...] "
                            f"but got {args!r}")
        self.node_name, self.property_path = args[0], args[1:]

    def validate(self, checker: Any) -> None:
        if any(function_of(a, self.table) for a in [self.node_name, *self.property_path]):
            return
        node = self.node_template(checker)
        if not node.get("broken"):  # a node whose type is unknown is reported already
            self._lookup(node, checker)

    def dependencies(self) -> Iterator[tuple]:
        """``("node", name, *path)`` when the node (SELF: the one holding the call) and path are literal."""
        owner = self.context.get("name") if self.node_name == SELF else self.node_name
        if is_literal_path([self.node_name, *self.property_path]) and isinstance(owner, str):
            yield ("node", owner, *self.property_path)

    def node_template(self, handler: Any) -> dict:
        if self.node_name == SELF:
            if self.scope != NODE_SCOPE:
                raise self.fail(f"SELF can only be used in a node template, but appears in {self.scope}")
            return self.context
        if self.node_name in NODE_REFS:
            if self.scope != RELATIONSHIP_SCOPE:
                raise self.fail(f"{self.node_name} can only be used within a relationship, but is used in "
                                f"{self.path}")
            if self.node_name == SOURCE:
                return self.context.get("node_template") or handler.get_node(self.context["source_node"], self)
            target = self.context.get("relationship", {}).get("target_id") or self.context["target_node"]
            return handler.get_node(target, self)
        node = handler.get_node(self.node_name, self)
        # a property of another node that holds functions is evaluated as that node
        self.context = node
        return node

    def _lookup(self, node: dict, handler: Any) -> Any:
        return follow_property(node["name"], node.get("properties", {}), self.property_path, handler,
                              self.context, self.path, self.name)

    def evaluate(self, handler: Any) -> Any:
        if any(function_of(a, handler.table) for a in [self.node_name, *self.property_path]):
            raise self.fail(f"found an argument that can only be evaluated at runtime in the path: "
                            f"{self.node_name}, {self.property_path}")
        node = self.node_template(handler)
        return self._lookup(node, handler)
