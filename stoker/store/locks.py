"""Who holds a stack lock (or runs an execution), and whether that holder is gone.

An owner is ``host:pid:uuid``: the host and pid let a process on the same
machine see that the holder died; the uuid tells two engines in one process
apart.  A server process also registers ``host:pid`` and beats
(``Store.register_process``), so that a process of another host that stopped
beating for ``ENGINE_TIMEOUT`` is known gone too (Heat pings the lock's engine
instead), long before its locks' own heartbeat (``LOCK_TIMEOUT``) expires.
"""

from __future__ import annotations

import os
import socket
import uuid
from datetime import datetime, timedelta, timezone

#: a heartbeat older than this marks an execution of another host as interrupted
EXECUTION_TIMEOUT = float(os.environ.get("STOKER_EXECUTION_TIMEOUT", 60))
#: a stack lock whose holder has not beaten for this long may be taken over, alive or not
LOCK_TIMEOUT = float(os.environ.get("STOKER_LOCK_TIMEOUT", 60))
#: seconds between a server process's beats, and how old its last beat may be while it lives
ENGINE_BEAT = 5.0
ENGINE_TIMEOUT = float(os.environ.get("STOKER_ENGINE_TIMEOUT", 30))
#: the lock owner of a stack whose server stopped cleanly mid-action: the next server resumes it
HANDED_BACK = "handed-back"


def new_engine_id() -> str:
    return f"{this_process()}:{uuid.uuid4()}"


def this_process() -> str:
    """``host:pid``: the part of this process's engine ids its registration is kept under."""
    return f"{socket.gethostname()}:{os.getpid()}"


def process_of(owner: str) -> tuple[str, int] | None:
    """(host, pid) of an engine id; None for other owners (a traversal, a hand-back)."""
    try:
        host, pid, _ = owner.rsplit(":", 2)
        return host, int(pid)
    except ValueError:
        return None


def owner_is_dead(owner: str) -> bool:
    """True only when the owner ran on this host and its process is gone.

    Holders on other hosts are judged by the heartbeat timeout instead.  An
    action handed back by a server that stopped has no process any more.
    """
    if owner == HANDED_BACK:
        return True
    process = process_of(owner)
    if process is None or process[0] != socket.gethostname():
        return False
    try:
        os.kill(process[1], 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # alive, but another user's
        return False
    return _zombie(process[1])


def _zombie(pid: int) -> bool:
    """Has the process ended, its exit not yet collected?  (A worker's pool process killed with its
    parent waits so until init reaps it, which may take a while.)"""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] == b"Z"
    except (OSError, IndexError):  # gone meanwhile, or no /proc here
        return False


def heartbeat_expired(row: dict, seconds: float) -> bool:
    beat = row.get("heartbeat_at")
    return beat is not None and beat < datetime.now(timezone.utc) - timedelta(seconds=seconds)


def execution_gone(row: dict) -> bool:
    """Has the process running this execution died, or (on another host) stopped beating?

    On this host the process table decides, as for stack locks: a live process on a busy
    machine may beat late, and its execution must not be failed under it."""
    owner = row.get("owner")
    if not owner or owner_is_dead(owner):
        return True
    process = process_of(owner)
    return (process is None or process[0] != socket.gethostname()) and heartbeat_expired(row, EXECUTION_TIMEOUT)
