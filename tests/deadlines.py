"""Ending a test's long waits early: the stored end of a wait is moved into the past.

A test that needs a resource to stay in progress across some event (a server's stop, another
stack's create) gives it a wait long enough for a loaded machine.  Once that event is over, the
rest of the wait proves nothing: these helpers end it at the next look of whichever process polls
it, through the same stored poll or plan that process reads, instead of sleeping it out.
"""

from __future__ import annotations

from typing import Callable

from sqlalchemy.engine import Engine

from stoker.resources.builtin.staged import STAGES_KEY
from stoker.resources.resource import POLL_KEY
from stoker.store.models import Resource

#: a time every clock has passed
PAST = 0.0


def deadline_passed(data: dict) -> dict | None:
    """An ``OS::Heat::TestResource``'s kept poll (its token is its deadline) ended; None if none."""
    polling = data.get(POLL_KEY) or {}
    if not isinstance(polling.get("token"), float):
        return None
    return {**data, POLL_KEY: {**polling, "token": PAST}}


def pause_over(data: dict) -> dict | None:
    """A group's pause between two stages (its end stored in the plan on the workers) ended."""
    plan = data.get(STAGES_KEY) or {}
    if not plan.get("resume"):
        return None
    return {**data, STAGES_KEY: {**plan, "resume": [plan["resume"][0], PAST]}}


def edit_resources(database: Engine, edit: Callable[[dict], dict | None], name: str | None = None) -> int:
    """Apply ``edit`` to the data of every resource (named ``name``, if given); how many it changed."""
    table = Resource.__table__
    query = table.select() if name is None else table.select().where(table.c.name == name)
    changed = 0
    with database.begin() as conn:
        for row in conn.execute(query).all():
            edited = edit(row.data or {})
            if edited is not None:
                conn.execute(table.update().where(table.c.id == row.id).values(data=edited))
                changed += 1
    return changed
