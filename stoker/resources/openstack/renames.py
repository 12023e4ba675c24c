"""Heat's renamed properties: a deprecated name's value moves to its new name before validation.

Heat's plug-ins translate old property names (``network_id`` of a port to ``network``,
``fixed_ips``' ``subnet_id`` to ``subnet``...) before they read their properties; the catalogue
records those rules (``renames``: old path, new path).  A simulated type applies them to its raw
property data, so a template written with the old names validates, creates and updates as in Heat,
and attributes read the new name.  Giving both names is Heat's error.  A list on a rule's way is
renamed item by item; a list or map given by a function is left as it is (its items are unknown
until it is resolved).
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from stoker.errors import ValidationFailed
from stoker.resources.exceptions import ResourcePropertyConflict

#: one rule: the old path and the new path, equal but for their tails under the same map
Rule = tuple[tuple[str, ...], tuple[str, ...]]


def from_entries(entries: Iterable[dict]) -> tuple[Rule, ...]:
    """The rules of a catalogue entry's ``renames`` list."""
    return tuple((tuple(item["from"]), tuple(item["to"])) for item in entries)


def renamed(rules: Sequence[Rule], data: Any, path: tuple) -> Any:
    """``data`` with every old name's value under its new name (``data`` itself is not changed;
    the maps a rule changes are copies).  ``ValidationFailed`` when both names have a value."""
    for old, new in rules:
        if type(data) is dict and (old[0] not in data or not may_hold(data, old, new)):
            continue  # the old name's way starts at its first key (shared with the new name's, if any)
        data = _renamed_under(data, old, new, path, len(new) - 1)
    return data


def may_hold(data: dict, old: tuple, new: tuple) -> bool:
    """Does a map that ``new[:-1]`` leads to (through lists, item by item, as ``_renamed_under``
    walks) hold the next key of ``old``?  When none does, the rule changes nothing: one loop
    tells, where the walk takes a call per map."""
    if len(old) < len(new):
        return True
    places: list = [data]
    for key in new[:-1]:
        reached: list = []
        for place in places:
            if type(place) is dict:
                inner = place.get(key)
                if type(inner) is list:
                    reached.extend(inner)
                else:
                    reached.append(inner)
        places = reached
    head = old[len(new) - 1]
    for place in places:
        if type(place) is dict and head in place:
            return True
    return False


def _renamed_under(data: Any, old: tuple, new: tuple, place: tuple, depth: int) -> Any:
    """Apply one rule to the map ``data`` that holds ``new[-depth-1:]``: walk down to the map of
    the new name, through lists item by item."""
    if type(data) is not dict:
        return data
    if depth == 0:
        return _moved(data, old[len(new) - 1:], new[-1], place, old, new)
    key = new[len(new) - 1 - depth]
    inner = data.get(key)
    if type(inner) is list:
        changed = [_renamed_under(item, old, new, place + (key, i), depth - 1) for i, item in enumerate(inner)]
        if all(a is b for a, b in zip(changed, inner)):
            return data
        return {**data, key: changed}
    changed = _renamed_under(inner, old, new, place + (key,), depth - 1)
    return data if changed is inner else {**data, key: changed}


def _moved(data: dict, old_tail: tuple, new_key: str, place: tuple, old: tuple, new: tuple) -> dict:
    """``data`` with the value at ``old_tail`` moved to ``new_key`` (as Heat: an old value that
    is not null wins; both given and not empty is an error)."""
    value = _value_at(data, old_tail)
    if value is None:
        return data
    if value and data.get(new_key):
        raise ValidationFailed.single(place, ResourcePropertyConflict.code,
                                      "Cannot define the following properties at the same time: "
                                      f"{'.'.join(new)}, {'.'.join(old)}")
    return {**_without(data, old_tail), new_key: value}


def _value_at(data: dict, keys: tuple) -> Any:
    for key in keys:
        if type(data) is not dict:
            return None
        data = data.get(key)
    return data


def _without(data: dict, keys: tuple) -> dict:
    """A copy of ``data`` without the value at ``keys`` (the maps on the way copied too)."""
    head, rest = keys[0], keys[1:]
    if not rest:
        return {k: v for k, v in data.items() if k != head}
    return {**data, head: _without(data[head], rest)}
