"""Functions answered by the manager's state: get_secret, get_capability, get_group_capability,
get_environment_capability, get_label, get_sys and get_consumers.  All are runtime-only."""

from __future__ import annotations

import json
from typing import Any

from stoker.blueprint.blueprint_errors import FunctionFailed
from stoker.blueprint.environments import CONSUMER_LABEL, PARENT_LABEL
from stoker.blueprint.functions.base import RUNTIME, Function, function_of, walk_path

SYS_PROPERTIES = {("tenant", "name"): "tenant_name", ("deployment", "id"): "deployment_id",
                  ("deployment", "name"): "deployment_name", ("deployment", "blueprint"): "blueprint_id",
                  ("deployment", "owner"): "owner"}


class GetSecret(Function):
    name = "get_secret"
    phase = RUNTIME

    def parse_args(self, args: Any) -> None:
        if not ((isinstance(args, list) and len(args) > 1) or isinstance(args, str) or function_of(args, self.table)):
            raise self.fail("the argument should be a secret name, a list [name, key or index, ...] of at "
                            f"least 2 items, or a function; got {type(args).__name__} {args!r}")
        self.secret = args

    def secret_name(self) -> Any:
        return self.secret[0] if isinstance(self.secret, list) else self.secret

    def evaluate(self, handler: Any) -> Any:
        if not isinstance(self.secret, list):
            return handler.get_secret(self.secret, self)
        name = self.secret[0]
        text = handler.get_secret(name, self)
        try:
            value = json.loads(text)
        except ValueError as exc:
            raise self.fail(f'could not parse secret "{name}" as JSON: {exc}') from None
        for key in self.secret[1:]:
            try:
                value = value[key]
            except (KeyError, TypeError, IndexError) as exc:
                raise self.fail(f'could not find "{key}" in nested lookup on secret "{name}": {exc}') from None
        return value


def _check_path_items(function: Function, args: list) -> None:
    for index, arg in enumerate(args):
        if not (isinstance(arg, (str, int)) and not isinstance(arg, bool)) and not function_of(arg, function.table):
            raise function.fail("arguments can't be complex values; only strings/ints/functions are "
                                f"accepted, but item {index} is {arg!r} of type {type(arg).__name__}")


def capability_value(function: Function, handler: Any, path: list) -> Any:
    """``[deployment, capability, key or index...]`` read from another deployment's capabilities."""
    deployment, name = path[0], path[1]
    capabilities = handler.get_capabilities(deployment, function)
    if name not in capabilities:
        raise function.fail(f"requested capability `{name}` is not declared in deployment `{deployment}`")
    return walk_path(function, capabilities[name], path, 2, f" in deployment '{deployment}'")


class GetCapability(Function):
    name = "get_capability"
    phase = RUNTIME

    def parse_args(self, args: Any) -> None:
        if not isinstance(args, list):
            raise self.fail(f"the argument should be a list, but it is {type(args).__name__} {args!r}")
        if len(args) < 2:
            raise self.fail("the argument should be a list [deployment ID, capability ID, key or index ...] "
                            f"of at least 2 items, but it is {args!r}")
        _check_path_items(self, args)
        self.capability_path = args

    def evaluate(self, handler: Any) -> Any:
        return capability_value(self, handler, self.capability_path)


class GetEnvironmentCapability(Function):
    name = "get_environment_capability"
    phase = RUNTIME

    def parse_args(self, args: Any) -> None:
        if isinstance(args, str):
            self.capability_path = [args]
        elif isinstance(args, list) and len(args) >= 2:
            _check_path_items(self, args)
            self.capability_path = args
        else:
            raise self.fail("the argument should be a capability name or a list [capability, key or index, "
                            f"...] of at least 2 items, but it is {type(args).__name__} {args!r}")

    def evaluate(self, handler: Any) -> Any:
        parents = handler.get_labels(self).get(PARENT_LABEL)
        if not parents:
            raise self.fail(f"the deployment does not have a label with the key `{PARENT_LABEL}` assigned to it")
        return capability_value(self, handler, [parents[0], *self.capability_path])


class GetLabel(Function):
    name = "get_label"
    phase = RUNTIME

    def parse_args(self, args: Any) -> None:
        self.index = None
        if isinstance(args, list) and len(args) == 2:
            key, index = args
            if not (isinstance(key, str) or function_of(key, self.table)):
                raise self.fail(f"the label key should be a string or a function, but it is {key!r}")
            if not ((isinstance(index, int) and not isinstance(index, bool))
                    or (isinstance(index, str) and index.isdigit())):
                raise self.fail("the label-values list index should be a number (in string or int form), "
                                f"but it is {type(index).__name__} {index!r}")
            self.key, self.index = key, int(index)
        elif isinstance(args, str) or function_of(args, self.table):
            self.key = args
        else:
            raise self.fail("the argument should be a label key, a list [label key, values list index] or a "
                            f"function, but it is {type(args).__name__} {args!r}")

    def evaluate(self, handler: Any) -> Any:
        labels = handler.get_labels(self)
        key = self.key.lower() if isinstance(self.key, str) else self.key
        if key not in labels:
            raise self.fail(f"the deployment does not have a label with the key `{key}` assigned to it")
        values = labels[key]
        if self.index is None:
            return values
        if self.index >= len(values):
            raise self.fail(f"the label-values list index is out of range: the key `{key}` has "
                            f"{len(values)} values")
        return values[self.index]


class GetSys(Function):
    name = "get_sys"
    phase = RUNTIME

    def parse_args(self, args: Any) -> None:
        if not (isinstance(args, list) and len(args) >= 2
                and all(isinstance(a, str) or function_of(a, self.table) for a in args)):
            raise self.fail("expected a 2-item list naming an entity and its property (e.g. [tenant, name] or "
                            f"[deployment, id]) but got {args!r}")
        self.entity, self.property = args[0], args[1]

    def validate(self, checker: Any) -> None:
        if function_of(self.entity, self.table):
            return
        if self.entity not in {entity for entity, _ in SYS_PROPERTIES}:
            raise self.fail(f"unknown entity: {self.entity}")
        if not function_of(self.property, self.table) and (self.entity, self.property) not in SYS_PROPERTIES:
            raise self.fail(f"unknown property: {self.entity} {self.property}")

    def evaluate(self, handler: Any) -> Any:
        key = SYS_PROPERTIES.get((self.entity, self.property))
        if key is None:
            raise FunctionFailed(self.name, f"unknown property: {self.entity} {self.property}", self.path)
        return handler.get_sys(self)[key]


class GetConsumers(Function):
    """The deployments consuming this one, from its ``csys-consumer-id`` labels."""

    name = "get_consumers"
    phase = RUNTIME
    PROPERTIES = ("ids", "names", "count")

    def parse_args(self, args: Any) -> None:
        if args not in self.PROPERTIES:
            raise self.fail(f"expected a property string (one of: {', '.join(self.PROPERTIES)}), but got {args!r}")
        self.property = args

    def evaluate(self, handler: Any) -> Any:
        ids = handler.get_labels(self).get(CONSUMER_LABEL, [])
        if self.property == "count":
            return len(ids)
        return handler.get_display_names(ids, self) if self.property == "names" else ids


class GetGroupCapability(Function):
    """``[group, capability or [capabilities] or deployment_id:capability, key or index...]`` of every
    deployment of a deployment group."""

    name = "get_group_capability"
    phase = RUNTIME

    def parse_args(self, args: Any) -> None:
        if not isinstance(args, list) or len(args) < 2:
            raise self.fail("the argument should be a list [group ID, capability ID, key or index ...] of at "
                            f"least 2 items, but it is {args!r}")
        _check_path_items(self, [a for index, a in enumerate(args) if not (index == 1 and isinstance(a, list))])
        self.capability_path = args

    def evaluate(self, handler: Any) -> Any:
        group, wanted = self.capability_path[0], self.capability_path[1]
        keyed = isinstance(wanted, str) and wanted.startswith("deployment_id:")
        names = [wanted[len("deployment_id:"):]] if keyed else wanted if isinstance(wanted, list) else [wanted]
        found = {}
        for deployment in handler.get_group_deployments(group, self):
            capabilities = handler.get_capabilities(deployment, self)
            if all(name not in capabilities for name in names):
                continue  # a deployment with none of them is left out, as in Cloudify
            values = [walk_path(self, capabilities[name], self.capability_path, 2) if name in capabilities
                      else None for name in names]
            found[deployment] = values[0] if len(values) == 1 else values
        return found if keyed else [found[d] for d in sorted(found)]
