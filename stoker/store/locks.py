"""Who holds a stack lock (or runs an execution), and whether that holder is gone.

An owner is ``host:pid:uuid``: the host and pid let a process on the same
machine see that the holder died; the uuid tells two engines in one process
apart.
"""

from __future__ import annotations

import os
import socket
import uuid
from datetime import datetime, timedelta, timezone

#: a heartbeat older than this marks an execution of another host as interrupted
EXECUTION_TIMEOUT = float(os.environ.get("STOKER_EXECUTION_TIMEOUT", 60))
#: the lock owner of a stack whose server stopped cleanly mid-action: the next server resumes it
HANDED_BACK = "handed-back"


def new_engine_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4()}"


def owner_is_dead(owner: str) -> bool:
    """True only when the owner ran on this host and its process is gone.

    Holders on other hosts are judged by the heartbeat timeout instead.  An
    action handed back by a server that stopped has no process any more.
    """
    if owner == HANDED_BACK:
        return True
    try:
        host, pid, _ = owner.rsplit(":", 2)
        pid_number = int(pid)
    except ValueError:
        return False
    if host != socket.gethostname():
        return False
    try:
        os.kill(pid_number, 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # alive, but another user's
        return False
    return False


def heartbeat_expired(row: dict, seconds: float) -> bool:
    beat = row.get("heartbeat_at")
    return beat is not None and beat < datetime.now(timezone.utc) - timedelta(seconds=seconds)


def execution_gone(row: dict) -> bool:
    """Has the process running this execution died, or stopped beating?"""
    owner = row.get("owner")
    return not owner or owner_is_dead(owner) or heartbeat_expired(row, EXECUTION_TIMEOUT)
