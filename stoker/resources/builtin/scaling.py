"""The arithmetic of a scaling group, kept apart from the resources that use it.

- ``new_capacity``: the size an adjustment asks for, within the group's bounds;
- ``rolling_batches``: the steps of a rolling replace (size after each step,
  members given the new definition in it), as Heat plans them;
- ``next_members``: the members after one step (the oldest go first when the
  group shrinks; changed members move to the young end);
- ``cooldown_refusal`` / ``cooldown_metadata``: Heat's cooldown, kept in the
  group's metadata (``cooldown_end: {time: reason}``, ``scaling_in_progress``).
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone
from typing import Any, Iterator

ADJUSTMENT_TYPES = (CHANGE_IN_CAPACITY, EXACT_CAPACITY, PERCENT_CHANGE_IN_CAPACITY) = (
    "change_in_capacity", "exact_capacity", "percent_change_in_capacity")
#: the reason Heat records when a create or update sets the size
EXACT_CAPACITY_REASON = "ExactCapacity : {size}"


def new_capacity(current: int, adjustment: float, adjustment_type: str, min_step: int | None,
                 lower: int, upper: int) -> int:
    """The group's size after ``adjustment``, kept within ``lower`` and ``upper``."""
    if adjustment_type == EXACT_CAPACITY:
        wanted = int(adjustment)
    elif adjustment_type == PERCENT_CHANGE_IN_CAPACITY:
        wanted = current + _percent_step(current, adjustment, min_step)
    else:
        wanted = current + int(adjustment)
    return max(lower, min(upper, wanted))


def _percent_step(current: int, percent: float, min_step: int | None) -> int:
    """A percentage of the group, rounded away from zero under one member and towards
    zero above; at least ``min_step`` members either way."""
    delta = current * percent / 100.0
    if abs(delta) < 1.0:
        step = math.ceil(delta) if delta > 0 else math.floor(delta)
    else:
        step = math.floor(delta) if delta > 0 else math.ceil(delta)
    if min_step and min_step > abs(step):
        step = min_step if step > 0 else -min_step
    return int(step)


def rolling_batches(target: int, current: int, batch_size: int, min_in_service: int) -> Iterator[tuple[int, int]]:
    """(group size after the batch, members getting the new definition in it), until
    ``target`` members all have it.  The group may grow above ``target`` meanwhile, so
    that ``min_in_service`` members keep serving while others are replaced."""
    updated = 0
    while not (updated >= current == target):
        floor = min(min_in_service, target, current)
        batch = min(batch_size, max(target - updated, 0))
        current = batch + max(min(current, target - batch), floor)
        updated += batch
        yield current, batch


def next_members(members: list[tuple[str, Any]], definition: Any, size: int, changes: int,
                 new_name) -> list[tuple[str, Any]]:
    """The members after one step, oldest first: ``size`` of them, of which ``changes``
    (new members first, then the oldest with another definition) get ``definition``.

    ``members`` is oldest first, failed ones ahead of the rest (they go first).
    """
    kept = members[len(members) - size:] if size < len(members) else list(members)
    to_change = changes - (size - len(kept))
    unchanged, changed = [], []
    for name, old in kept:
        if old != definition and to_change > 0:
            to_change -= 1
            changed.append((name, definition))
        else:
            unchanged.append((name, old))
    added = [(new_name(), definition) for _ in range(size - len(kept))]
    return unchanged + changed + added


# -- cooldown -----------------------------------------------------------------------------
def cooldown_refusal(metadata: dict, cooldown: float | None, now: datetime | None = None) -> str | None:
    """Why the group may not scale now (still cooling down), or None."""
    now = now or _utcnow()
    ends = metadata.get("cooldown_end")
    if isinstance(ends, dict) and ends:
        if now.isoformat() < max(ends):
            return f"due to cooldown, cooldown {_seconds(cooldown)}"
    return None


def cooldown_metadata(metadata: dict, cooldown: float | None, reason: str, size_changed: bool = True,
                      now: datetime | None = None) -> dict:
    """The group's metadata once a scaling ended: a new cooldown when the size changed."""
    metadata = dict(metadata)
    if size_changed:
        now = now or _utcnow()
        end = (now + timedelta(seconds=_seconds(cooldown))).isoformat()
        previous = metadata.get("cooldown_end")
        if isinstance(previous, dict) and previous and max(previous) > end:
            end = max(previous)
        metadata["cooldown_end"] = {end: reason}
    metadata["scaling_in_progress"] = False
    return metadata


def _utcnow() -> datetime:
    """UTC without an offset: Heat's timestamps in the metadata look so."""
    return datetime.now(timezone.utc).replace(tzinfo=None)


def _seconds(cooldown: float | None) -> float:
    return max(0, cooldown or 0)
