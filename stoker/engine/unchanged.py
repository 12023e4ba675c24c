"""Which resources an update may leave alone, without resolving their properties again.

Changing one property of a 1,000-resource stack should not pay for
resolving, validating and diffing the other 999.  A resource is left alone
only when nothing it is made from can have changed since the stack was
stored:

* its entry in the template is the same as the stored template's (compared
  as data: both are plain JSON-like values);
* every input that could reach it is the same: parameter values (defaults
  included), the environment, the files map, every section of the template
  but ``resources``, ``outputs`` and ``description`` (conditions, mappings,
  parameter declarations, the version), and a nested stack's facade;
* it reads no attribute (``get_attr``): attributes may change without an
  update (a signalled wait condition's data);
* when its turn comes, every resource it depends on was left alone too
  (a replaced one has a new physical id), it is in a healthy ``*_COMPLETE``
  state, and its type does not ask to be updated always (nested stacks).

Anything else goes through the full update, as before.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from stoker.functions.references import GetAtt
from stoker.template.environment import Environment

if TYPE_CHECKING:  # pragma: no cover
    from stoker.resources.resource import Resource
    from stoker.template.definition import StackDefinition


class ComparedStack(Protocol):
    """What the comparison reads of a stack (``engine/stack.py``'s ``Stack``)."""

    definition: "StackDefinition | None"
    environment: Environment
    facade: dict
    unchanged: frozenset[str]
    left_alone: set[str]

#: sections compared resource by resource, or not at all (they feed no resource)
PER_ENTRY = frozenset({"resources", "outputs", "description"})


def same_definitions(previous: ComparedStack, stack: ComparedStack,
                     definition: "StackDefinition") -> frozenset[str]:
    """Resources of ``definition`` written and fed exactly as in ``previous`` (the stored stack)."""
    old = previous.definition
    if old is None or not _same_inputs(previous, old, stack, definition):
        return frozenset()
    old_entries, new_entries = old.template.section("resources"), definition.template.section("resources")
    reading = {fn.path[1] for fn in definition.resource_calls
               if isinstance(fn, GetAtt) and len(fn.path) > 1 and fn.path[0] == "resources"}
    return frozenset(name for name, entry in new_entries.items()
                     if name in definition.resources and name in old.resources and name not in reading
                     and old_entries.get(name) == entry)


def _same_inputs(previous: ComparedStack, old: "StackDefinition", stack: ComparedStack,
                 new: "StackDefinition") -> bool:
    old_hot, new_hot = old.template.hot, new.template.hot
    return (old.parameters == new.parameters
            and old.template.files == new.template.files
            and previous.environment.as_dict() == stack.environment.as_dict()
            and previous.facade == stack.facade
            and all(old_hot.get(key) == new_hot.get(key) for key in {*old_hot, *new_hot} - PER_ENTRY))


def may_leave_alone(stack: ComparedStack, resource: "Resource", definition: Any) -> bool:
    """At the resource's turn in the update walk: nothing it is made from changed."""
    return (resource.name in stack.unchanged
            and resource.leaves_unchanged_alone
            and resource.status == "COMPLETE"
            and resource.action in ("CREATE", "UPDATE", "ADOPT", "RESUME", "CHECK")
            and definition.dependencies() <= stack.left_alone)
