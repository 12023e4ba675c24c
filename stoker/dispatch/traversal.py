"""The stored state every worker decides from: a traversal, its nodes and their counters.

One traversal is one stack action spread over workers.  A node is one
resource; ``waiting`` counts its requirements still to finish.  Every
decision is one short transaction in PostgreSQL:

* a worker takes a resource with a session advisory lock on its id, so two
  workers never act on one resource; a worker that dies loses the lock with
  its connection, and the redelivered task takes it;
* a node starts (PENDING -> RUNNING) only while the traversal is not
  stopping, checked under a share lock on the traversal row;
* a node that ends decrements its dependents' counters with
  ``UPDATE ... RETURNING``: the dependents reaching 0 are ready, and exactly
  one worker sees each reach 0;
* the worker whose node end leaves nothing to do (all finished, or stopping
  with nothing running) moves the traversal to ENDING and ends the stack action.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Iterable, Iterator

from sqlalchemy import and_, func, insert, select, text, update

from stoker.engine.graph import Graph
from stoker.store.models import DispatchNode, DispatchTraversal, Stack, utcnow

TRAVERSALS = DispatchTraversal.__table__
NODES = DispatchNode.__table__
STACKS = Stack.__table__
#: first key of the two-int advisory locks on resources ("stoker" in hex speak)
LOCK_SPACE = 0x570C
IN_PROGRESS, ENDING, ENDED = "IN_PROGRESS", "ENDING", "ENDED"
PENDING, RUNNING, DONE = "PENDING", "RUNNING", "DONE"


@dataclass
class View:
    """A node with its traversal and the stack's cancel request, read together."""

    traversal_id: str
    stack_id: str
    project_id: str
    action: str
    status: str
    stopping: str | None
    interrupt: bool
    deadline: datetime | None
    disable_rollback: bool
    node_state: str
    step: int
    dependents: list
    cancel_requested: bool
    cancel_rollback: bool


def start(store: Any, traversal_id: str, stack_id: str, action: str, graph: Graph,
          deadline: datetime | None, disable_rollback: bool) -> list:
    """Store a traversal of ``graph`` (nodes are resource ids); returns the nodes ready now."""
    dependents = graph.required_by()
    rows = [{"traversal_id": traversal_id, "resource_id": node,
             "waiting": len([r for r in reqs if r in graph.requires]),
             "dependents": dependents[node], "state": PENDING, "step": 0}
            for node, reqs in graph.requires.items()]
    with store.engine.begin() as conn:
        conn.execute(insert(TRAVERSALS).values(
            id=traversal_id, stack_id=stack_id, action=action, status=IN_PROGRESS, total=len(rows),
            finished=0, stopping=None, interrupt=False, deadline=deadline,
            disable_rollback=disable_rollback, created_at=utcnow()))
        if rows:
            conn.execute(insert(NODES), rows)
    return [row["resource_id"] for row in rows if row["waiting"] == 0]


@contextmanager
def resource_lock(store: Any, resource_id: int) -> Iterator[tuple[bool, Any]]:
    """Hold the resource's advisory lock while the block runs: yields (held, an autocommit connection
    for reads); held is False when another session holds the lock."""
    with store.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        held = bool(conn.execute(text("SELECT pg_try_advisory_lock(:space, :key)"),
                                 {"space": LOCK_SPACE, "key": resource_id}).scalar())
        try:
            yield held, conn
        finally:
            if held:
                conn.execute(text("SELECT pg_advisory_unlock(:space, :key)"),
                             {"space": LOCK_SPACE, "key": resource_id})


def read(conn: Any, traversal_id: str, resource_id: int) -> View | None:
    query = (select(TRAVERSALS.c.id, TRAVERSALS.c.stack_id, STACKS.c.project_id, TRAVERSALS.c.action, TRAVERSALS.c.status,
                    TRAVERSALS.c.stopping, TRAVERSALS.c.interrupt, TRAVERSALS.c.deadline,
                    TRAVERSALS.c.disable_rollback, NODES.c.state, NODES.c.step, NODES.c.dependents,
                    STACKS.c.cancel_requested, STACKS.c.cancel_rollback)
             .join(NODES, and_(NODES.c.traversal_id == TRAVERSALS.c.id, NODES.c.resource_id == resource_id))
             .join(STACKS, STACKS.c.id == TRAVERSALS.c.stack_id)
             .where(TRAVERSALS.c.id == traversal_id))
    row = conn.execute(query).first()
    if row is None:
        return None
    return View(row.id, row.stack_id, row.project_id, row.action, row.status, row.stopping, bool(row.interrupt), row.deadline,
                bool(row.disable_rollback), row.state, row.step, list(row.dependents or []),
                bool(row.cancel_requested), bool(row.cancel_rollback))


def begin_node(store: Any, traversal_id: str, resource_id: int, stack_id: str, owner: str) -> bool:
    """PENDING -> RUNNING unless the traversal stops; False when it must not run.

    The stack lock's heartbeat goes with it (and with every park): the
    traversal's owner is alive while its resources move.
    """
    with store.engine.begin() as conn:
        status = conn.execute(select(TRAVERSALS.c.status, TRAVERSALS.c.stopping)
                              .where(TRAVERSALS.c.id == traversal_id).with_for_update(read=True)).first()
        if status is None or status.status != IN_PROGRESS or status.stopping is not None:
            return False
        conn.execute(update(NODES).where(NODES.c.traversal_id == traversal_id,
                                         NODES.c.resource_id == resource_id).values(state=RUNNING))
        _heartbeat(conn, stack_id, owner)
    return True


def park(store: Any, traversal_id: str, resource_id: int, stack_id: str, owner: str) -> int:
    """The node waits: its next step's number (tasks of older steps are stale)."""
    with store.engine.begin() as conn:
        _heartbeat(conn, stack_id, owner)
        return conn.execute(update(NODES).where(NODES.c.traversal_id == traversal_id,
                                                NODES.c.resource_id == resource_id)
                            .values(step=NODES.c.step + 1).returning(NODES.c.step)).scalar_one()


def _heartbeat(conn: Any, stack_id: str, owner: str) -> None:
    conn.execute(update(STACKS).where(STACKS.c.id == stack_id, STACKS.c.lock_owner == owner)
                 .values(lock_time=utcnow()))


def stop(store: Any, traversal_id: str, reason: str, interrupt: bool, first_prefix: str = "") -> None:
    """The traversal stops: no node starts any more; ``interrupt`` stops running ones too.

    A failure's reason joins the ones before it (the first after
    ``first_prefix``); a timeout or cancel replaces them.
    """
    with store.engine.begin() as conn:
        row = conn.execute(select(TRAVERSALS.c.stopping, TRAVERSALS.c.interrupt)
                           .where(TRAVERSALS.c.id == traversal_id).with_for_update()).first()
        if row is None or row.interrupt:
            return
        stopping = (reason if interrupt else f"{first_prefix}{reason}" if row.stopping is None
                    else f"{row.stopping}; {reason}")
        conn.execute(update(TRAVERSALS).where(TRAVERSALS.c.id == traversal_id)
                     .values(stopping=stopping, interrupt=interrupt))


def end_node(store: Any, traversal_id: str, resource_id: int, dependents: Iterable[int],
             succeeded: bool) -> tuple[list, bool]:
    """Mark the node DONE; returns (dependents now ready, whether this worker ends the traversal)."""
    with store.engine.begin() as conn:
        done = conn.execute(update(NODES).where(NODES.c.traversal_id == traversal_id,
                                                NODES.c.resource_id == resource_id, NODES.c.state != DONE)
                            .values(state=DONE)).rowcount
        if not done:  # ended before (a redelivered task): nothing to count again
            return [], False
        trav = conn.execute(update(TRAVERSALS).where(TRAVERSALS.c.id == traversal_id)
                            .values(finished=TRAVERSALS.c.finished + (1 if succeeded else 0))
                            .returning(TRAVERSALS.c.finished, TRAVERSALS.c.total, TRAVERSALS.c.status,
                                       TRAVERSALS.c.stopping)).first()
        ready = []
        dependents = list(dependents)
        if succeeded and trav.stopping is None and dependents:
            ready = [r.resource_id for r in conn.execute(
                update(NODES).where(NODES.c.traversal_id == traversal_id, NODES.c.resource_id.in_(dependents))
                .values(waiting=NODES.c.waiting - 1).returning(NODES.c.resource_id, NODES.c.waiting))
                if r.waiting == 0]
        if trav.status != IN_PROGRESS:
            return ready, False
        if trav.stopping is None:
            finished = trav.finished == trav.total
        else:
            finished = not conn.execute(select(func.count()).select_from(NODES).where(
                NODES.c.traversal_id == traversal_id, NODES.c.state == RUNNING)).scalar()
        if finished:
            conn.execute(update(TRAVERSALS).where(TRAVERSALS.c.id == traversal_id).values(status=ENDING))
        return ready, finished


def end_if_idle(store: Any, traversal_id: str) -> bool:
    """A stopping traversal with nothing running ends here (True: this caller ends it)."""
    with store.engine.begin() as conn:
        trav = conn.execute(select(TRAVERSALS.c.status, TRAVERSALS.c.stopping)
                            .where(TRAVERSALS.c.id == traversal_id).with_for_update()).first()
        if trav is None or trav.status != IN_PROGRESS or trav.stopping is None:
            return False
        if conn.execute(select(func.count()).select_from(NODES).where(
                NODES.c.traversal_id == traversal_id, NODES.c.state == RUNNING)).scalar():
            return False
        conn.execute(update(TRAVERSALS).where(TRAVERSALS.c.id == traversal_id).values(status=ENDING))
        return True


def ready_not_started(store: Any, traversal_id: str, nodes: Iterable[int]) -> list:
    """Of ``nodes``, those ready and never taken (their task may have been lost in a crash)."""
    nodes = list(nodes)
    if not nodes:
        return []
    with store.engine.connect() as conn:
        return list(conn.execute(select(NODES.c.resource_id).where(
            NODES.c.traversal_id == traversal_id, NODES.c.resource_id.in_(nodes),
            NODES.c.waiting == 0, NODES.c.state == PENDING)).scalars())


def outcome(store: Any, traversal_id: str) -> tuple[str, str | None, bool]:
    """(action, why it stopped or None, disable_rollback) of a traversal."""
    with store.engine.connect() as conn:
        row = conn.execute(select(TRAVERSALS.c.action, TRAVERSALS.c.stopping, TRAVERSALS.c.disable_rollback)
                           .where(TRAVERSALS.c.id == traversal_id)).one()
    return row.action, row.stopping, bool(row.disable_rollback)


def mark_ended(store: Any, traversal_id: str) -> None:
    with store.engine.begin() as conn:
        conn.execute(update(TRAVERSALS).where(TRAVERSALS.c.id == traversal_id).values(status=ENDED))
