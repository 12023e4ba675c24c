"""What a tree of stacks will hold, known before anything is made.

Provider templates, ``OS::Heat::Stack`` and ``OS::Heat::ResourceGroup``
make nested stacks only when the create runs; without looking ahead, a
template fanning out to 100,000 resources validates fine and is refused
after thousands of stacks were built.  ``Fanout`` walks the templates
statically: it counts resources (a group's size at create when it is known
here: a number, or a parameter with a value or default) and asks the type policy
about every type met on the way, nested ones included.  It stops as soon as
the count passes ``most`` (``TooMany``): a tree of a million resources costs
no more to refuse than one just over the limit.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable

from stoker.errors import ValidationFailed
from stoker.template.environment import RegistryLoop, is_template_type, resolve_type
from stoker.template.loader import load

STACK_TYPE = "OS::Heat::Stack"
#: group types: the property holding the member definition (or the definition itself, for the groups
#: whose members are made from a launch configuration), those giving the size at create
GROUP_SIZES = {
    "OS::Heat::ResourceGroup": ("resource_def", ("count",)),
    "OS::Heat::AutoScalingGroup": ("resource", ("desired_capacity", "min_size")),
    "OS::Heat::InstanceGroup": ({"type": "AWS::EC2::Instance"}, ("Size",)),
    "AWS::AutoScaling::AutoScalingGroup": ({"type": "AWS::EC2::Instance"}, ("DesiredCapacity", "MinSize")),
}


class TooMany(Exception):
    """The count passed the limit; ``at_least`` is how far it got."""

    def __init__(self, at_least: int):
        super().__init__(at_least)
        self.at_least = at_least


@dataclass
class Fanout:
    """One walk: the environment's registry, the files map, the policy's questions."""

    registry: dict
    files: dict
    #: the class a type name maps to (None when unknown: validation reports it elsewhere)
    class_of: Callable[[str], type | None]
    #: why a type may not be used (None when it may)
    refusal: Callable[[list[str], type | None], str | None]
    max_depth: int
    #: the count at which the walk stops (``TooMany``); None: count everything
    most: int | None = None
    #: (path of the top-level resource, why) for each refused nested type
    refused: list[tuple[tuple, str]] = field(default_factory=list)
    _parsed: dict = field(default_factory=dict)
    _counted: dict = field(default_factory=dict)

    def count(self, data: Any, parameters: dict, path: tuple = (), depth: int = 0) -> int:
        """Resources in the template ``data`` and under it, for these parameter values.

        ``path`` is the top-level resource the template is nested under (empty at the top).
        """
        resources = data.get("resources") if isinstance(data, dict) else None
        if not isinstance(resources, dict) or depth > self.max_depth:
            return 0
        values = {**_defaults(data), **parameters}
        total = 0
        for name, rdef in resources.items():
            if isinstance(rdef, dict) and isinstance(rdef.get("type"), str):
                total += self.count_one(str(name), rdef["type"], rdef.get("properties"), values,
                                        path or ("resources", name), depth)
                self._stop_past_most(total)
        return total

    def _stop_past_most(self, total: int) -> None:
        """Any part of the tree over the limit puts the whole tree over it: no need to go on."""
        if self.most is not None and total > self.most:
            raise TooMany(total)

    def count_one(self, name: str, written: str, properties: Any, parameters: dict, path: tuple,
                  depth: int) -> int:
        """One resource: 1, plus what its nested stack holds."""
        try:
            effective = resolve_type(self.registry, name, written)
        except RegistryLoop:
            return 1  # reported by validation
        props = properties if isinstance(properties, dict) else {}
        if is_template_type(effective):
            self._check([written, effective], None, path, depth)
            child = self._template(effective)
            given = {k: v for k, v in props.items() if not isinstance(v, (dict, list))}
            return 1 + self._nested(effective, child, given, path, depth)
        cls = self.class_of(effective)
        self._check([written, effective], cls, path, depth)
        if effective in GROUP_SIZES:
            member_key, size_keys = GROUP_SIZES[effective]
            member = member_key if isinstance(member_key, dict) else props.get(member_key)
            count = _static_int(next((props[k] for k in size_keys if k in props), 1), parameters)
            if not isinstance(member, dict) or not isinstance(member.get("type"), str) or not count:
                return 1
            total = 1 + count * self.count_one("0", member["type"], member.get("properties"), {},
                                               path, depth + 1)
            self._stop_past_most(total)
            return total
        if effective == STACK_TYPE and isinstance(props.get("template"), (str, dict)):
            text = props["template"]
            child = text if isinstance(text, dict) else self._parse(text, f"{name}.template")
            return 1 + self._nested(json.dumps(text, sort_keys=True), child, {}, path, depth)
        return 1

    def _nested(self, key: str, child: Any, given: dict, path: tuple, depth: int) -> int:
        memo = (key, json.dumps(given, sort_keys=True, default=str), path)
        if memo not in self._counted:
            self._counted[memo] = self.count(child, given, path, depth + 1)
        return self._counted[memo]

    def _check(self, names: list[str], cls: type | None, path: tuple, depth: int) -> None:
        """Nested types only: the top level's are checked with its resources."""
        why = self.refusal(names, cls) if depth > 0 else None
        if why and (path, why) not in self.refused:
            self.refused.append((path, why))

    def _template(self, name: str) -> Any:
        text = self.files.get(name)
        return self._parse(text, name) if isinstance(text, str) else None

    def _parse(self, text: str, name: str) -> Any:
        """A nested template's data (each text parsed once, whoever names it)."""
        if text not in self._parsed:
            try:
                self._parsed[text] = load(text, name)
            except ValidationFailed:
                self._parsed[text] = None  # reported when the nested stack is made
        return self._parsed[text]


def _defaults(data: dict) -> dict:
    section = data.get("parameters")
    if not isinstance(section, dict):
        return {}
    return {k: v["default"] for k, v in section.items() if isinstance(v, dict) and "default" in v}


def _static_int(value: Any, parameters: dict) -> int | None:
    """A count known without running anything: a number, or ``get_param`` of a known one."""
    if isinstance(value, dict) and len(value) == 1 and isinstance(value.get("get_param"), str):
        value = parameters.get(value["get_param"])
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return max(value, 0)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    return None
