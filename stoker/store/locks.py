"""Who holds a stack lock, and whether that holder is gone.

An owner is ``host:pid:uuid``: the host and pid let a process on the same
machine see that the holder died; the uuid tells two engines in one process
apart.
"""

from __future__ import annotations

import os
import socket
import uuid


def new_engine_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4()}"


def owner_is_dead(owner: str) -> bool:
    """True only when the owner ran on this host and its process is gone.

    Holders on other hosts are judged by the heartbeat timeout instead.
    """
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
