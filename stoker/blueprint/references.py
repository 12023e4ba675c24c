"""Cycles of get_property and get_input references, found without evaluating anything.

A node property that reads another property (or an input's default that reads
another input) is an edge from where the function sits to what it reads; a
cycle of such edges would have evaluation follow it forever.  Validation and
deployment creation refuse it, naming the cycle as Cloudify does
(``a.p -> b.q -> a.p``).
"""

from __future__ import annotations

from typing import Any, Iterator

from stoker.blueprint.errors import BlueprintError
from stoker.blueprint.functions.base import SELF, function_of
from stoker.blueprint.functions.table import FUNCTIONS
from stoker.cycles import find_cycles

#: a place: ("node", name, *steps inside its properties) or ("input", name)
Place = tuple


def reference_cycles(plan: dict) -> Iterator[BlueprintError]:
    """One error per cycle of references in ``plan``, placed at the cycle's first member."""
    reads: dict[Place, list[Place]] = {}
    for node in plan["nodes"]:
        for steps, call in _calls(node.get("properties", {})):
            target = _target(call, node["name"])
            if target is not None:
                reads.setdefault(("node", node["name"], *steps), []).append(target)
    for name, definition in plan["inputs"].items():
        for _steps, call in _calls(definition.get("default")):
            target = _target(call, None)
            if target is not None and target[0] == "input":
                reads.setdefault(("input", name), []).append(target)
    by_owner: dict[Place, list[Place]] = {}
    for place in reads:
        by_owner.setdefault(place[:2], []).append(place)
    edges = {place: [other for target in targets for other in _overlapping(target, by_owner.get(target[:2], ()))]
             for place, targets in reads.items()}
    for cycle in find_cycles(edges):
        kind = "get_input" if cycle[0][0] == "input" else "get_property"
        where = f"inputs.{cycle[0][1]}" if kind == "get_input" else \
            f"node_templates.{cycle[0][1]}.properties.{'.'.join(map(str, cycle[0][2:]))}"
        yield BlueprintError(f"circular {kind} function call detected: {' -> '.join(map(_shown, cycle))}",
                             where, code="reference-cycle")


def check_reference_cycles(plan: dict) -> None:
    """Raise the first cycle's error, if there is one."""
    for error in reference_cycles(plan):
        raise error


def _calls(value: Any) -> Iterator[tuple[tuple, tuple]]:
    """(steps from ``value``'s root, (name, args)) of every function call inside ``value``, in order."""
    pending = [((), value)]
    while pending:
        steps, item = pending.pop()
        found = function_of(item, FUNCTIONS)
        if found is not None:
            yield steps, (found[0].name, found[1])
        if isinstance(item, dict):
            pending.extend(reversed([(steps + (key,), child) for key, child in item.items()]))
        elif isinstance(item, list):
            pending.extend(reversed([(steps + (index,), child) for index, child in enumerate(item)]))


def _literal(args: Any) -> bool:
    return isinstance(args, list) and all(isinstance(a, (str, int)) and not isinstance(a, bool) for a in args)


def _target(call: tuple, node: str | None) -> Place | None:
    """What a get_property (on a named node or SELF) or a get_input reads, when its arguments are literal."""
    name, args = call
    if name == "get_input":
        args = [args] if isinstance(args, str) else args
        return ("input", args[0]) if _literal(args) and args else None
    if name == "get_property" and _literal(args) and len(args) >= 2:
        owner = node if args[0] == SELF else args[0]
        return ("node", owner, *args[1:]) if isinstance(owner, str) else None
    return None


def _overlapping(target: Place, places: list) -> Iterator[Place]:
    """The places holding functions that reading ``target`` reaches: inside it, or holding it."""
    for place in places:
        shorter = min(len(place), len(target))
        if place[:shorter] == target[:shorter]:
            yield place


def _shown(place: Place) -> str:
    return ".".join(map(str, place[1:]))
