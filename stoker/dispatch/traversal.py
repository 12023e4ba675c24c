"""The stored state every worker decides from: a traversal, its nodes and their counters.

One traversal is one stack action (or workflow execution) spread over
workers.  A node is one resource (or execution step); ``waiting`` counts its requirements still to finish.  Every
decision is one short transaction in PostgreSQL:

* a worker takes resources with session advisory locks on their ids, so two
  workers never act on one resource; a worker that dies loses the locks with
  its connection, and the redelivered task takes them;
* nodes start (PENDING -> RUNNING) only while the traversal is not
  stopping, checked under a share lock on the traversal row;
* nodes that end (many at once, in one transaction) decrement their
  dependents' counters with one ``UPDATE ... RETURNING``: the dependents
  reaching 0 are ready, and exactly one worker sees each reach 0;
* a worker whose node ends leave nothing to do (all done, or stopping with
  nothing running) moves the traversal to ENDING, if no other did first, and
  ends the stack action.
"""

from __future__ import annotations

import json
import time
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Iterable, Iterator

from sqlalchemy import ARRAY, Integer, and_, any_, bindparam, or_, select, text, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.engine import Connection

from stoker.engine.graph import Graph
from stoker.store.models import DispatchNode, DispatchTraversal, Stack, utcnow

if TYPE_CHECKING:  # pragma: no cover
    from stoker.store.repository import Store

TRAVERSALS = DispatchTraversal.__table__
NODES = DispatchNode.__table__
STACKS = Stack.__table__
#: first key of the two-int advisory locks on resources ("stoker" in hex speak)
LOCK_SPACE = 0x570C
#: first key of the advisory lock on a traversal's end (the second: its id's hash): held by whoever
#: runs the end, so a task finding the traversal ENDING knows whether its ender is alive
END_SPACE = 0x570E
#: seconds a stack lock's time stays fresh before a worker renews it (it times out after 60)
LOCK_FRESH = 10
#: a traversal of this many nodes or more has the planner's statistics renewed when it starts
ANALYZE_FROM = 1000
IN_PROGRESS, ENDING, ENDED = "IN_PROGRESS", "ENDING", "ENDED"
PENDING, RUNNING, DONE = "PENDING", "RUNNING", "DONE"


def among(column: Any, ids: Iterable[int]) -> Any:
    """``column`` is one of ``ids``, as one array parameter: the same statement whatever their
    number (an ``IN`` list is compiled, and parsed by the driver, anew for every length)."""
    return column == any_(bindparam(None, list(ids), type_=ARRAY(Integer)))


@dataclass
class View:
    """A traversal with its stack's cancel request, read together with some of its nodes."""

    traversal_id: str
    stack_id: str
    project_id: str
    action: str
    status: str
    stopping: str | None
    interrupt: bool
    deadline: datetime | None
    disable_rollback: bool
    cancel_requested: bool
    cancel_rollback: bool
    #: a workflow execution's traversal: the execution's (``stack_id`` None)
    execution_pk: int | None = None


@dataclass
class Node:
    """One node as stored: PENDING, RUNNING or DONE, its step, the nodes waiting on it."""

    resource_id: int
    state: str
    step: int
    dependents: list


def start(store: Store, traversal_id: str, stack_id: str, action: str, graph: Graph,
          deadline: datetime | None, disable_rollback: bool, given: dict | None = None,
          execution_pk: int | None = None) -> list:
    """Store a traversal of ``graph`` (nodes are resource ids); returns the nodes ready now.

    A traversal stored before (its start made again by an end run again) is
    not stored twice: its nodes ready and not started are returned again.

    ``given``: what the action was given beyond the stored stack (an update's inputs before it,
    an adopt's resources);
    ``execution_pk``: a workflow execution's (``stack_id`` None, nodes are its steps).
    """
    dependents = graph.required_by()
    nodes = list(graph.requires)
    waiting = [len([r for r in graph.requires[node] if r in graph.requires]) for node in nodes]
    with store.engine.begin() as conn:
        if not conn.execute(insert(TRAVERSALS).values(
                id=traversal_id, stack_id=stack_id, action=action, status=IN_PROGRESS, total=len(nodes),
                stopping=None, interrupt=False, deadline=deadline, disable_rollback=disable_rollback,
                created_at=utcnow(), given=given, execution_pk=execution_pk)
                            .on_conflict_do_nothing().returning(TRAVERSALS.c.id)).first():
            return _ready(conn, traversal_id)
        if nodes:
            conn.execute(_INSERT_NODES, {"traversal": traversal_id, "ids": nodes, "waiting": waiting,
                                         "dependents": [json.dumps(dependents[node]) for node in nodes]})
        if len(nodes) >= ANALYZE_FROM:
            # the planner learns that the tables just grew, before workers look rows up by id
            conn.execute(text("ANALYZE dispatch_node, resource"))
    return [node for node, count in zip(nodes, waiting) if count == 0]


#: a traversal's nodes in one statement, their columns as arrays (an executemany of 10,000 rows
#: costs its caller more than the database its work)
_INSERT_NODES = text(f"""
INSERT INTO dispatch_node (traversal_id, resource_id, waiting, dependents, state, step)
SELECT :traversal, n.id, n.waiting, n.dependents, '{PENDING}', 0
FROM unnest(CAST(:ids AS integer[]), CAST(:waiting AS integer[]), CAST(:dependents AS json[]))
     AS n(id, waiting, dependents)""")


#: the cancel or timeout stopping the action of a nested stack's parent (a failure there does not
#: stop the nested stacks running: a cancel without rollback is known by the parent's request),
#: read under a share lock on the parent's traversal
_PARENT_STOPPING = text("""
SELECT t.stopping, t.interrupt FROM dispatch_traversal AS t JOIN stack AS p ON p.id = t.stack_id
    JOIN stack AS s ON s.parent_id = p.id
WHERE s.id = :stack AND t.status = 'IN_PROGRESS' AND t.stopping IS NOT NULL AND (t.interrupt OR NOT p.cancel_rollback)
FOR SHARE OF t""")


def inherit_stop(store: Store, traversal_id: str, stack_id: str) -> None:
    """A nested stack's traversal, stored (committed) already, stops as its parent's does.

    A stop of the parent takes the parent's traversal row for update and
    stops the nested traversals it sees: one stored before that stop's
    statement is stopped by it; one stored after waits here for the stop's
    commit (the share lock), and sees it.
    """
    with store.engine.begin() as conn:
        stopped = conn.execute(_PARENT_STOPPING, {"stack": stack_id}).first()
        if stopped is not None:
            conn.execute(update(TRAVERSALS).where(TRAVERSALS.c.id == traversal_id)
                         .values(stopping=stopped.stopping, interrupt=stopped.interrupt))


@contextmanager
def resource_locks(store: Store) -> Iterator[Connection]:
    """An autocommit connection to take resources' advisory locks on (``try_locks``; a round's
    ``advance`` is a transaction on it too); whatever it still holds is released when the block ends."""
    with store.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        try:
            yield conn
        finally:
            release_all(conn)


#: the advisory locks' first key: a stack traversal's resources lock in ``LOCK_SPACE``, an execution's
#: steps (numbered from 0) in a space of their own, minus the execution's pk
_SPACE = "COALESCE((SELECT -execution_pk FROM dispatch_traversal WHERE id = :traversal), :space)"


def try_locks(conn: Connection, traversal_id: str, resource_ids: Iterable[int]) -> set:
    """Take the advisory locks of those of the traversal's nodes no other session holds; returns their ids.

    A worker that dies loses its locks with its connection, so a
    redelivered task can take them.
    """
    ids = sorted(resource_ids)
    if not ids:
        return set()
    return set(conn.execute(text(f"SELECT k FROM unnest(CAST(:ids AS integer[])) AS k "
                                 f"WHERE pg_try_advisory_lock({_SPACE}, k)"),
                            {"ids": ids, "traversal": traversal_id, "space": LOCK_SPACE}).scalars())


def release(conn: Connection, traversal_id: str, resource_ids: Iterable[int]) -> None:
    ids = sorted(resource_ids)
    if ids:
        conn.execute(text(f"SELECT pg_advisory_unlock({_SPACE}, k) FROM unnest(CAST(:ids AS integer[])) AS k"),
                     {"ids": ids, "traversal": traversal_id, "space": LOCK_SPACE})


def release_all(conn: Connection) -> None:
    conn.execute(text("SELECT pg_advisory_unlock_all()"))


def in_progress(conn: Connection, traversal_ids: Iterable[str]) -> set:
    """Those of the traversals (a worker's few kept ones) still IN_PROGRESS."""
    ids = list(traversal_ids)
    if not ids:
        return set()
    return set(conn.execute(select(TRAVERSALS.c.id).where(TRAVERSALS.c.id.in_(ids),
                                                          TRAVERSALS.c.status == IN_PROGRESS)).scalars())


def ready_unstarted(store: Store, traversal_id: str) -> tuple[str, list] | None:
    """(action, nodes waiting on nothing and not started) of a stored traversal (none once it
    ended); None if it was never stored."""
    with store.engine.connect() as conn:
        row = conn.execute(select(TRAVERSALS.c.action, TRAVERSALS.c.status)
                           .where(TRAVERSALS.c.id == traversal_id)).one_or_none()
        if row is None or row.status != IN_PROGRESS:
            return None if row is None else (row.action, [])
        return row.action, _ready(conn, traversal_id)


def unended_empty(store: Store, traversal_id: str) -> str | None:
    """The stack of this traversal when it has no nodes and was never marked ended: its start
    ends such a traversal at once, so the worker starting it was lost in between."""
    with store.engine.connect() as conn:
        return conn.execute(select(TRAVERSALS.c.stack_id).where(
            TRAVERSALS.c.id == traversal_id, TRAVERSALS.c.total == 0, TRAVERSALS.c.status != ENDED)).scalar()


def _ready(conn: Connection, traversal_id: str) -> list:
    """The traversal's nodes waiting on nothing and not started (none once it stopped running)."""
    return list(conn.execute(select(NODES.c.resource_id).join(TRAVERSALS, TRAVERSALS.c.id == NODES.c.traversal_id)
                             .where(NODES.c.traversal_id == traversal_id, NODES.c.state == PENDING,
                                    NODES.c.waiting == 0, TRAVERSALS.c.status == IN_PROGRESS)).scalars())


def read(conn: Connection, traversal_id: str, resource_ids: Iterable[int] = ()) -> tuple[View | None, dict[int, Node]]:
    """The traversal and those of its nodes named, in one query; (None, {}) when it is gone (an
    execution's traversal has no stack: no project, no cancel request here)."""
    ids = list(resource_ids)
    query = (select(TRAVERSALS.c.id, TRAVERSALS.c.stack_id, STACKS.c.project_id, TRAVERSALS.c.action,
                    TRAVERSALS.c.status, TRAVERSALS.c.stopping, TRAVERSALS.c.interrupt, TRAVERSALS.c.deadline,
                    TRAVERSALS.c.disable_rollback, STACKS.c.cancel_requested, STACKS.c.cancel_rollback,
                    TRAVERSALS.c.execution_pk, NODES.c.resource_id, NODES.c.state, NODES.c.step, NODES.c.dependents)
             .outerjoin(STACKS, STACKS.c.id == TRAVERSALS.c.stack_id)
             .outerjoin(NODES, and_(NODES.c.traversal_id == TRAVERSALS.c.id, among(NODES.c.resource_id, ids)))
             .where(TRAVERSALS.c.id == traversal_id))
    rows = conn.execute(query).all()
    if not rows:
        return None, {}
    first = rows[0]
    view = View(first.id, first.stack_id, first.project_id, first.action, first.status, first.stopping,
                bool(first.interrupt), first.deadline, bool(first.disable_rollback),
                bool(first.cancel_requested), bool(first.cancel_rollback), first.execution_pk)
    return view, {row.resource_id: Node(row.resource_id, row.state, row.step, list(row.dependents or []))
                  for row in rows if row.resource_id is not None}


def begin_nodes(conn: Connection, traversal_id: str, resource_ids: Iterable[int], stack_id: str, owner: str) -> set:
    """PENDING -> RUNNING unless the traversal stops; returns the nodes that moved.

    One statement: the nodes move only while a share lock on the traversal
    row finds it not stopping (``stop`` takes that row for update).  The
    stack lock's heartbeat goes with it now and then: the traversal's
    owner is alive while its resources move.
    """
    ids = list(resource_ids)
    if not ids:
        return set()
    not_stopping = (select(TRAVERSALS.c.id).where(TRAVERSALS.c.id == traversal_id,
                                                   TRAVERSALS.c.status == IN_PROGRESS,
                                                   TRAVERSALS.c.stopping.is_(None))
                    .with_for_update(read=True))
    began = set(conn.execute(update(NODES).where(NODES.c.traversal_id == traversal_id, among(NODES.c.resource_id, ids),
                                                 NODES.c.state == PENDING, not_stopping.exists())
                             .values(state=RUNNING).returning(NODES.c.resource_id)).scalars())
    if began and stack_id is not None and _beat_due(stack_id):
        _heartbeat(conn, stack_id, owner)
    return began


@contextmanager
def _autocommit(store: Store, conn: Connection | None = None) -> Iterator[Connection]:
    """A connection whose every statement commits by itself (one round trip, no BEGIN/COMMIT):
    ``conn`` when the caller has one (the one ``resource_locks`` gives), saving a checkout and its ping."""
    if conn is not None:
        yield conn
        return
    with store.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        yield conn


@contextmanager
def _transaction(store: Store, conn: Connection | None = None) -> Iterator[Connection]:
    """One transaction: on ``conn`` when the caller has one (``resource_locks``' connection, whose
    statements commit by themselves around it), saving a checkout and its ping."""
    if conn is None:
        with store.engine.begin() as conn:
            yield conn
        return
    conn.commit()  # ends the autocommit statements' autobegun block (no round trip)
    conn.execution_options(isolation_level=conn.default_isolation_level)
    try:
        with conn.begin():
            yield conn
    finally:
        if not conn.invalidated:
            conn.execution_options(isolation_level="AUTOCOMMIT")


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


def _heartbeat(conn: Connection, stack_id: str, owner: str) -> None:
    """Renew the stack lock when its time is older than ``LOCK_FRESH``: every worker writing the one stack
    row at every step would queue them all behind its row lock."""
    now = utcnow()
    conn.execute(update(STACKS).where(STACKS.c.id == stack_id, STACKS.c.lock_owner == owner,
                                      STACKS.c.lock_time < now - timedelta(seconds=LOCK_FRESH))
                 .values(lock_time=now))


def stop(store: Store, traversal_id: str, reason: str, interrupt: bool, first_prefix: str = "") -> None:
    """The traversal stops: no node starts any more; ``interrupt`` stops running ones too.

    A failure's reason joins the ones before it (the first after
    ``first_prefix``; it replaces a cancel without rollback's, as the
    in-process walk's failures become its end's reason); a timeout or cancel
    replaces them, and stops the actions of the stack's nested stacks (theirs
    too) the same way, as the in-process walk of a tree stops as one.
    """
    with store.engine.begin() as conn:
        row = conn.execute(select(TRAVERSALS.c.stopping, TRAVERSALS.c.interrupt, TRAVERSALS.c.stack_id)
                           .where(TRAVERSALS.c.id == traversal_id).with_for_update()).first()
        if row is None or row.interrupt:
            return
        failed_before = row.stopping is not None and row.stopping.startswith(first_prefix)
        stopping = reason if interrupt else f"{row.stopping}; {reason}" if failed_before else f"{first_prefix}{reason}"
        conn.execute(update(TRAVERSALS).where(TRAVERSALS.c.id == traversal_id)
                     .values(stopping=stopping, interrupt=interrupt))
        if interrupt:
            _stop_nested(conn, row.stack_id, reason, interrupt=True)


def cancel_gracefully(store: Store, traversal_id: str, reason: str) -> bool:
    """Heat's cancel without rollback: nothing starts any more (in nested stacks neither), what
    runs finishes, and no rollback follows.  False when the traversal was stopping already."""
    with store.engine.begin() as conn:
        stack_id = conn.execute(update(TRAVERSALS).where(TRAVERSALS.c.id == traversal_id,
                                                         TRAVERSALS.c.stopping.is_(None))
                                .values(stopping=reason, disable_rollback=True)
                                .returning(TRAVERSALS.c.stack_id)).scalar()
        if stack_id is None:
            return False
        _stop_nested(conn, stack_id, reason, interrupt=False)
    return True


#: the traversals in progress of a stack's nested stacks, at any depth: stopped (running nodes too
#: with ``interrupt``), the reason replacing a failure's only when they are interrupted
_STOP_NESTED = text("""
WITH RECURSIVE tree(id) AS (
    SELECT id FROM stack WHERE parent_id = :stack
  UNION
    SELECT s.id FROM stack AS s JOIN tree ON s.parent_id = tree.id)
UPDATE dispatch_traversal
SET stopping = CASE WHEN :interrupt OR stopping IS NULL THEN :reason ELSE stopping END,
    interrupt = interrupt OR :interrupt
WHERE stack_id IN (SELECT id FROM tree) AND status = 'IN_PROGRESS' AND NOT interrupt""")


def _stop_nested(conn: Connection, stack_id: str | None, reason: str, interrupt: bool) -> None:
    if stack_id is not None:
        conn.execute(_STOP_NESTED, {"stack": stack_id, "reason": reason, "interrupt": interrupt})


@dataclass
class Advance:
    """What a round of node ends and parks leaves: the nodes now ready, the parked ones' next steps."""

    ready: list
    steps: dict


#: lowers waiting nodes' counters by how many of their requirements just ended, taking their row
#: locks in one order (two workers lowering the same counters never wait on each other in a cycle)
_LOWER = text("""
UPDATE dispatch_node AS n SET waiting = n.waiting - c.ended
FROM (SELECT unnest(CAST(:ids AS integer[])) AS id, unnest(CAST(:counts AS integer[])) AS ended) AS c
WHERE n.traversal_id = :traversal AND n.resource_id = c.id
  AND n.resource_id IN (SELECT resource_id FROM dispatch_node
                        WHERE traversal_id = :traversal AND resource_id = ANY(CAST(:ids AS integer[]))
                        ORDER BY resource_id FOR UPDATE)
RETURNING n.resource_id, n.waiting""")


def advance(store: Store, traversal_id: str, ended: dict[int, tuple[list, bool]], parked: Iterable[int] = (),
            writes: tuple[list, list] = ([], []), beat: tuple[str, str] | None = None,
            conn: Connection | None = None) -> Advance:
    """In one transaction: ``writes`` (resource changes and events not committed yet), the ``ended``
    nodes (id -> (dependents, succeeded)) DONE, their dependents' counters lowered, the ``parked``
    nodes moved to their next step (tasks of older steps are stale), and, now and then, the stack
    lock's heartbeat (``beat``: stack id, owner).

    Only the nodes' own rows and their dependents' are written, so workers
    ending nodes at once do not queue behind one another's commits.  A node
    ended before (a redelivered task) counts no second time.  ``conn``: as ``_transaction``'s.
    """
    parked = list(parked)
    if not ended and not parked and not any(writes):
        return Advance([], {})
    with _transaction(store, conn) as conn:
        store.write_changes(conn, *writes)
        if beat is not None and (parked or _beat_due(beat[0])):
            _heartbeat(conn, *beat)
        steps = dict(conn.execute(update(NODES).where(NODES.c.traversal_id == traversal_id,
                                                      among(NODES.c.resource_id, parked))
                                  .values(step=NODES.c.step + 1).returning(NODES.c.resource_id, NODES.c.step)
                                  ).all()) if parked else {}
        if not ended:
            return Advance([], steps)
        stopping_now = select(TRAVERSALS.c.stopping).where(TRAVERSALS.c.id == traversal_id).scalar_subquery()
        newly_done = conn.execute(update(NODES).where(NODES.c.traversal_id == traversal_id,
                                                      among(NODES.c.resource_id, ended), NODES.c.state != DONE)
                                  .values(state=DONE).returning(NODES.c.resource_id, stopping_now)).all()
        counts: dict[int, int] = {}
        for resource_id, stopping in newly_done:
            dependents, succeeded = ended[resource_id]
            if succeeded and stopping is None:
                for dependent in dependents:
                    counts[dependent] = counts.get(dependent, 0) + 1
        ready = []
        if counts:
            ids = sorted(counts)
            ready = sorted(row.resource_id for row in conn.execute(
                _LOWER, {"traversal": traversal_id, "ids": ids, "counts": [counts[i] for i in ids]})
                if row.waiting == 0)
    return Advance(ready, steps)


def end_if_done(store: Store, traversal_id: str, conn: Connection | None = None) -> bool:
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


#: from nodes DONE, through nodes DONE, the nodes ready and not DONE: what a task lost with its
#: worker may have been running after the nodes it was given (it runs ready dependents itself)
_LEFT_BEHIND = text("""
WITH RECURSIVE reached(id) AS (
    SELECT unnest(CAST(:ids AS integer[]))
  UNION
    SELECT CAST(d.value AS integer)
    FROM reached JOIN dispatch_node AS n ON n.traversal_id = :traversal AND n.resource_id = reached.id
         CROSS JOIN json_array_elements_text(n.dependents) AS d
    WHERE n.state = 'DONE')
SELECT n.resource_id, n.step FROM reached JOIN dispatch_node AS n
    ON n.traversal_id = :traversal AND n.resource_id = reached.id
WHERE n.state <> 'DONE' AND n.waiting = 0
ORDER BY n.resource_id""")


def left_behind(store: Store, traversal_id: str, done: Iterable[int]) -> dict[int, int]:
    """Of the nodes past ``done`` ones (DONE nodes of a redelivered task), those ready and not
    DONE (id -> step): their task may have been lost in a crash; a live holder's are safe to
    name again (its lock keeps them its own)."""
    ids = sorted(done)
    if not ids:
        return {}
    with store.engine.connect() as conn:
        return dict(conn.execute(_LEFT_BEHIND, {"traversal": traversal_id, "ids": ids}).all())


def take_end(conn: Connection, traversal_id: str) -> bool:
    """Take the lock of the traversal's end for ``conn``'s session (autocommit: ``resource_locks``);
    False when another session holds it: its end runs there.  A worker lost while it runs the end
    gives the lock up with its connection, so a task coming back takes the end over."""
    return bool(conn.execute(text("SELECT pg_try_advisory_lock(:space, hashtext(:traversal))"),
                             {"space": END_SPACE, "traversal": traversal_id}).scalar())


def status(store: Store, traversal_id: str) -> str | None:
    """The traversal's status (None if it was never stored)."""
    with store.engine.connect() as conn:
        return conn.execute(select(TRAVERSALS.c.status).where(TRAVERSALS.c.id == traversal_id)).scalar()


def outcome(store: Store, traversal_id: str) -> tuple[str, str | None, bool]:
    """(action, why it stopped or None, disable_rollback) of a traversal."""
    with store.engine.connect() as conn:
        row = conn.execute(select(TRAVERSALS.c.action, TRAVERSALS.c.stopping, TRAVERSALS.c.disable_rollback)
                           .where(TRAVERSALS.c.id == traversal_id)).one()
    return row.action, row.stopping, bool(row.disable_rollback)


def given(store: Store, traversal_id: str) -> dict | None:
    """What the traversal's action was given (``start``'s ``given``)."""
    with store.engine.connect() as conn:
        return conn.execute(select(TRAVERSALS.c.given).where(TRAVERSALS.c.id == traversal_id)).scalar()


def mark_ended(store: Store, traversal_id: str) -> None:
    """The traversal ENDED, its nodes deleted with it: nothing decides from them any more (a task
    arriving late finds the traversal not IN_PROGRESS and does nothing), and a stack acted on
    round after round would otherwise keep every round's rows."""
    with store.engine.begin() as conn:
        conn.execute(update(TRAVERSALS).where(TRAVERSALS.c.id == traversal_id).values(status=ENDED))
        conn.execute(NODES.delete().where(NODES.c.traversal_id == traversal_id))
