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
* a worker whose node end leaves nothing to do (all done, or stopping with
  nothing running) moves the traversal to ENDING, if no other did first, and
  ends the stack action.
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Iterable, Iterator

from sqlalchemy import and_, insert, or_, select, text, update

from stoker.engine.graph import Graph
from stoker.store.models import DispatchNode, DispatchTraversal, Stack, utcnow

TRAVERSALS = DispatchTraversal.__table__
NODES = DispatchNode.__table__
STACKS = Stack.__table__
#: first key of the two-int advisory locks on resources ("stoker" in hex speak)
LOCK_SPACE = 0x570C
#: seconds a stack lock's time stays fresh before a worker renews it (it times out after 60)
LOCK_FRESH = 10
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
          deadline: datetime | None, disable_rollback: bool, given: dict | None = None,
          execution_pk: int | None = None) -> list:
    """Store a traversal of ``graph`` (nodes are resource ids); returns the nodes ready now.

    ``given``: what the action was given beyond the stored stack (an update's inputs before it,
    an adopt's resources);
    ``execution_pk``: a workflow execution's (``stack_id`` None, nodes are its steps).
    """
    dependents = graph.required_by()
    rows = [{"traversal_id": traversal_id, "resource_id": node,
             "waiting": len([r for r in reqs if r in graph.requires]),
             "dependents": dependents[node], "state": PENDING, "step": 0}
            for node, reqs in graph.requires.items()]
    with store.engine.begin() as conn:
        conn.execute(insert(TRAVERSALS).values(
            id=traversal_id, stack_id=stack_id, action=action, status=IN_PROGRESS, total=len(rows),
            finished=0, stopping=None, interrupt=False, deadline=deadline,
            disable_rollback=disable_rollback, created_at=utcnow(), given=given, execution_pk=execution_pk))
        if rows:
            conn.execute(insert(NODES), rows)
    return [row["resource_id"] for row in rows if row["waiting"] == 0]


@contextmanager
def resource_lock(store: Any, resource_id: int, space: int = LOCK_SPACE) -> Iterator[tuple[bool, Any]]:
    """Hold the resource's advisory lock while the block runs: yields (held, an autocommit connection
    for reads); held is False when another session holds the lock.  An execution's steps lock in a
    ``space`` of their own (minus the execution's pk)."""
    with store.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        held = bool(conn.execute(text("SELECT pg_try_advisory_lock(:space, :key)"),
                                 {"space": space, "key": resource_id}).scalar())
        try:
            yield held, conn
        finally:
            if held:
                conn.execute(text("SELECT pg_advisory_unlock(:space, :key)"),
                             {"space": space, "key": resource_id})


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


def begin_node(store: Any, traversal_id: str, resource_id: int, stack_id: str, owner: str,
               conn: Any = None) -> bool:
    """PENDING -> RUNNING unless the traversal stops; False when it must not run.

    One statement: the node moves only while a share lock on the traversal
    row finds it not stopping (``stop`` takes that row for update).  The
    stack lock's heartbeat goes with it now and then (and with every park):
    the traversal's owner is alive while its resources move.
    """
    not_stopping = (select(TRAVERSALS.c.id).where(TRAVERSALS.c.id == traversal_id,
                                                   TRAVERSALS.c.status == IN_PROGRESS,
                                                   TRAVERSALS.c.stopping.is_(None))
                    .with_for_update(read=True))
    with _autocommit(store, conn) as conn:
        began = conn.execute(update(NODES).where(NODES.c.traversal_id == traversal_id,
                                                 NODES.c.resource_id == resource_id, not_stopping.exists())
                             .values(state=RUNNING)).rowcount
        if began and _beat_due(stack_id):
            _heartbeat(conn, stack_id, owner)
    return bool(began)


@contextmanager
def _autocommit(store: Any, conn: Any = None) -> Iterator[Any]:
    """A connection whose every statement commits by itself (one round trip, no BEGIN/COMMIT):
    ``conn`` when the caller has one (``resource_lock``'s), saving a checkout and its ping."""
    if conn is not None:
        yield conn
        return
    with store.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        yield conn


#: when this process last renewed each stack's lock (time.monotonic())
_last_beats: dict[str, float] = {}


def _beat_due(stack_id: str) -> bool:
    """Whether this process should renew the stack lock now (at most once per ``LOCK_FRESH`` / 2)."""
    now = time.monotonic()
    if now - _last_beats.get(stack_id, float("-inf")) < LOCK_FRESH / 2:
        return False
    if len(_last_beats) > 1000:
        _last_beats.clear()
    _last_beats[stack_id] = now
    return True


def park(store: Any, traversal_id: str, resource_id: int, stack_id: str, owner: str,
         writes: tuple[list, list] = ([], [])) -> int:
    """The node waits: its next step's number (tasks of older steps are stale).

    ``writes`` (resource changes, events) are committed with it.
    """
    with store.engine.begin() as conn:
        store.write_changes(conn, *writes)
        _heartbeat(conn, stack_id, owner)
        return conn.execute(update(NODES).where(NODES.c.traversal_id == traversal_id,
                                                NODES.c.resource_id == resource_id)
                            .values(step=NODES.c.step + 1).returning(NODES.c.step)).scalar_one()


def _heartbeat(conn: Any, stack_id: str, owner: str) -> None:
    """Renew the stack lock when its time is older than ``LOCK_FRESH``: every worker writing the one stack
    row at every step would queue them all behind its row lock."""
    now = utcnow()
    conn.execute(update(STACKS).where(STACKS.c.id == stack_id, STACKS.c.lock_owner == owner,
                                      STACKS.c.lock_time < now - timedelta(seconds=LOCK_FRESH))
                 .values(lock_time=now))


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
             succeeded: bool, writes: tuple[list, list] = ([], []), conn: Any = None) -> tuple[list, bool]:
    """Mark the node DONE, with ``writes`` (the resource's changes and events not committed yet);
    returns (dependents now ready, whether this worker ends the traversal).

    No row every worker writes: the node's own row and its dependents' only,
    so workers ending nodes at once do not queue behind one another's commits.
    """
    with store.engine.begin() as ending:
        store.write_changes(ending, *writes)
        stopping_now = select(TRAVERSALS.c.stopping).where(TRAVERSALS.c.id == traversal_id).scalar_subquery()
        done = ending.execute(update(NODES).where(NODES.c.traversal_id == traversal_id,
                                                  NODES.c.resource_id == resource_id, NODES.c.state != DONE)
                              .values(state=DONE).returning(stopping_now)).first()
        if done is None:  # ended before (a redelivered task): nothing to count again
            return [], False
        stopping = done[0]
        ready = []
        dependents = list(dependents)
        if succeeded and stopping is None and dependents:
            ready = [r.resource_id for r in ending.execute(
                update(NODES).where(NODES.c.traversal_id == traversal_id, NODES.c.resource_id.in_(dependents))
                .values(waiting=NODES.c.waiting - 1).returning(NODES.c.resource_id, NODES.c.waiting))
                if r.waiting == 0]
    return ready, end_if_done(store, traversal_id, conn)


def end_if_done(store: Any, traversal_id: str, conn: Any = None) -> bool:
    """Whether this caller ends the traversal: nothing is left to run (every node done, or, when
    it stops, none running), and no other caller took the end first.

    Asked after the caller's node end is committed, so the last of several
    ends committed at once sees all the others; one conditional update lets
    only one of those that see it end the traversal, and takes the
    traversal's row lock only then.
    """
    left = select(NODES.c.resource_id).where(
        NODES.c.traversal_id == TRAVERSALS.c.id, NODES.c.state != DONE,  # the partial index of open nodes
        or_(TRAVERSALS.c.stopping.is_(None), NODES.c.state == RUNNING))  # when stopping, PENDING never run
    with _autocommit(store, conn) as conn:
        return bool(conn.execute(update(TRAVERSALS).where(TRAVERSALS.c.id == traversal_id,
                                                          TRAVERSALS.c.status == IN_PROGRESS, ~left.exists())
                                 .values(status=ENDING)).rowcount)


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


def given(store: Any, traversal_id: str) -> dict | None:
    """What the traversal's action was given (``start``'s ``given``)."""
    with store.engine.connect() as conn:
        return conn.execute(select(TRAVERSALS.c.given).where(TRAVERSALS.c.id == traversal_id)).scalar()


def mark_ended(store: Any, traversal_id: str) -> None:
    with store.engine.begin() as conn:
        conn.execute(update(TRAVERSALS).where(TRAVERSALS.c.id == traversal_id).values(status=ENDED))
