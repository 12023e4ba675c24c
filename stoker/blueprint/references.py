"""Cycles of get_property and get_input references, found without evaluating anything.

A node property that reads another property (or an input's default that reads
another input) is an edge from where the function sits to what it reads; a
cycle of such edges would have evaluation follow it forever.  Validation and
deployment creation refuse it, naming the cycle as Cloudify does
(``a.p -> b.q -> a.p``).
"""

from __future__ import annotations

from typing import Any, Iterator

from stoker.blueprint.blueprint_errors import BlueprintError
from stoker.blueprint.evaluation import make_function
from stoker.cycles import find_cycles

#: a place: ("node", name, *steps inside its properties) or ("input", name)
Place = tuple


def reference_cycles(plan: dict) -> Iterator[BlueprintError]:
    """One error per cycle of references in ``plan``, placed at the cycle's first member."""
    reads: dict[Place, list[Place]] = {}
    for node in plan["nodes"]:
        for steps, target in _reads(node.get("properties", {}), node):
            reads.setdefault(("node", node["name"], *steps), []).append(target)
    for name, definition in plan["inputs"].items():
        for _steps, target in _reads(definition.get("default"), {}):
            if target[0] == "input":
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


def _reads(value: Any, context: dict) -> Iterator[tuple[tuple, Place]]:
    """(steps from ``value``'s root, a place read) of every call inside ``value`` that reads a known place, in order.

    ``context`` is the node holding ``value`` (SELF), or empty; a call with bad arguments reads nothing here.
    """
    pending = [((), value)]
    while pending:
        steps, item = pending.pop()
        try:
            call = make_function(item, None, context, "")
        except BlueprintError:
            call = None
        if call is not None:
            yield from ((steps, target) for target in call.dependencies())
        if isinstance(item, dict):
            pending.extend(reversed([(steps + (key,), child) for key, child in item.items()]))
        elif isinstance(item, list):
            pending.extend(reversed([(steps + (index,), child) for index, child in enumerate(item)]))


def _overlapping(target: Place, places: list) -> Iterator[Place]:
    """The places holding functions that reading ``target`` reaches: inside it, or holding it."""
    for place in places:
        shorter = min(len(place), len(target))
        if place[:shorter] == target[:shorter]:
            yield place


def _shown(place: Place) -> str:
    return ".".join(map(str, place[1:]))
