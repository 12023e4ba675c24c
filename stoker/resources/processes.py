"""Commands a resource starts on this machine, and stopping those an engine left behind.

Each command runs in a session (and process group) of its own, so that it
and everything it starts can be killed at once.  While it runs, the
resource's data records it under ``PROCESS_KEY``: the group, the host, the
engine process that started it, and a marker put in the command's
environment.  An engine that dies (SIGKILL, a crash) cannot kill its
commands; whoever next takes the stack over (recovery, cancel, delete) calls
``stop_orphan`` on each recorded one, which kills the group only when its
engine is dead and a process of the group still carries the marker (so a
reused process id is never killed by mistake).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import uuid
from typing import Any

from stoker.store.locks import owner_is_dead

#: resource data key of the command running now
PROCESS_KEY = "process_group"
#: environment variable naming the command, so that its processes can be recognised
MARKER_VARIABLE = "STOKER_COMMAND_ID"


def start(argv: list[str], env: dict[str, str], cwd: str | None) -> tuple[subprocess.Popen, dict]:
    """Start ``argv`` in a new session; returns the process and the record to keep."""
    marker = str(uuid.uuid4())
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=cwd or None,
                            env={**env, MARKER_VARIABLE: marker}, start_new_session=True)
    record = {"pgid": proc.pid, "host": socket.gethostname(), "marker": marker,
              "engine": f"{socket.gethostname()}:{os.getpid()}:{marker}"}
    return proc, record


def kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):  # gone already, or not ours
        pass


def stop_orphan(record: Any) -> bool:
    """Kill the group of a recorded command whose engine has died; True if one was killed."""
    if not isinstance(record, dict) or not isinstance(record.get("pgid"), int):
        return False
    if record.get("host") != socket.gethostname() or not owner_is_dead(str(record.get("engine"))):
        return False  # another machine's, or its engine still runs it
    if not _group_carries(record["pgid"], str(record.get("marker"))):
        return False
    kill_group(record["pgid"])
    return True


def _group_carries(pgid: int, marker: str) -> bool:
    """Does a live process of group ``pgid`` have ``marker`` in its environment?

    Without ``/proc`` the group's existence is all there is to go on.
    """
    if not os.path.isdir("/proc"):
        try:
            os.killpg(pgid, 0)
            return True
        except (ProcessLookupError, PermissionError):
            return False
    wanted = f"{MARKER_VARIABLE}={marker}".encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
            if int(fields[2]) != pgid:  # state, ppid, pgrp
                continue
            with open(f"/proc/{entry}/environ", "rb") as f:
                if wanted in f.read().split(b"\0"):
                    return True
        except (OSError, IndexError, ValueError):  # gone meanwhile, or not ours to read
            continue
    return False
