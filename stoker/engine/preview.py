"""What an update preview adds to the direct changes: the resources that read one that changes.

A resource whose own definition is unchanged still changes when it reads
(``get_attr``) a resource that is updated or replaced, or names
(``get_resource``) one that is replaced: its properties are only known once
that one has changed.  Heat's preview leaves these out as "unchanged"; the
preview lists them under ``updated`` as "may change", with the reason, and
follows the chain (a reader of a resource that may change may change too).
"""

from __future__ import annotations

from typing import Iterable

from stoker.functions.base import functions_in
from stoker.functions.references import GetAtt, GetResource

#: how a change of the resource read reaches its reader, by the function reading it
REACHES = {GetAtt: ("replaced", "updated"), GetResource: ("replaced",)}


def add_knock_on_changes(plan: dict[str, list], definition, order: Iterable[str]) -> None:
    """Move ``unchanged`` entries of ``plan`` that read a changing resource to ``updated``.

    ``order`` names the new definition's resources, those read first.
    """
    change = {entry["resource_name"]: kind for kind in ("replaced", "updated")
              for entry in plan[kind]}
    unchanged = {entry["resource_name"]: entry for entry in plan["unchanged"]}
    for name in order:
        entry = unchanged.get(name)
        if entry is None:
            continue
        reason = _reason(definition.resources[name], change)
        if reason is not None:
            del unchanged[name]
            change[name] = "updated"
            plan["updated"].append({**entry, "reason": reason})
    plan["unchanged"] = [entry for entry in plan["unchanged"] if entry["resource_name"] in unchanged]
    plan["updated"].sort(key=lambda entry: entry["resource_name"])


def _reason(rdef, change: dict[str, str]) -> str | None:
    """Why ``rdef`` may change (the first changing resource it reads), or None."""
    for section in (rdef.properties, rdef.metadata):
        for call in functions_in(section):
            kinds = next((k for cls, k in REACHES.items() if isinstance(call, cls)), ())
            target = call.static_resource_name() if kinds else None
            if target is None or change.get(target) not in kinds:
                continue
            read = f"{call.name} {target}"
            if isinstance(call, GetAtt):
                read += f".{call.attribute_name() or '*'}"
            what = "is replaced" if change[target] == "replaced" else "changes"
            return f"may change: it reads {read}, and {target} {what}"
    return None
