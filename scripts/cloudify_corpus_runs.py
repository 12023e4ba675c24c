"""What both sides of scripts/cloudify-corpus share (standard library only: it runs in both virtualenvs)."""

import itertools
import re

SIMPLE_VALUES = {"integer": 1, "float": 1.0, "boolean": True, "list": [], "dict": {}}


def simple_inputs(definitions, needs_value):
    """A value for each input ``needs_value(definition)`` says has none: its type's simplest value."""
    return {name: SIMPLE_VALUES.get(d.get("type"), "x") for name, d in definitions.items() if needs_value(d)}


PLUGIN_LISTS = ("deployment_plugins_to_install", "workflow_plugins_to_install", "host_agent_plugins_to_install")


def plugins_to_install(plan):
    """The names in each of the plan's plugins-to-install lists, sorted."""
    return {kind: sorted(plugin["name"] for plugin in plan.get(kind) or []) for kind in PLUGIN_LISTS}


def sequences(calls):
    """Per node: each of its instances' operations in the order they ran, from ``[instance, node,
    operation]`` calls (instance ids differ between the sides, so only their sequences are compared).
    A relationship operation's source and target sides run side by side (Cloudify's forkjoin), so
    those of one operation towards one target, in a row, are in no particular order: sorted."""
    runs = {}
    for instance, node, operation in calls:
        runs.setdefault((node, instance), []).append(operation)
    runs = {key: [op for _, group in itertools.groupby(operations, key=_without_side) for op in sorted(group)]
            for key, operations in runs.items()}
    nodes = {}
    for (node, _), operations in runs.items():
        nodes.setdefault(node, []).append(operations)
    return {node: sorted(found) for node, found in sorted(nodes.items())}


def _without_side(operation):
    """``establish@->db`` for ``establish@source->db`` and ``establish@target->db``."""
    return re.sub(r"@(source|target)->", "@->", operation)
