"""Commands a resource starts on this machine, and stopping those an engine left behind.

Each command runs in a session (and process group) of its own, so that it
and everything it starts can be killed at once.  While it runs, the
resource's data records it under ``PROCESS_KEY``: the group, the host, the
engine process that started it, and a marker put in the command's
environment.  An engine that dies (SIGKILL, a crash) cannot kill its
commands; whoever next takes the stack over (recovery, cancel, delete) calls
``stop_orphan`` on each recorded one, which kills the group only when its
engine is dead and a process of the group still carries the marker (so a
reused process id is never killed by mistake).  An execution's scripts share
one record (``marked_record``): their groups are found by the marker.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import uuid
from contextlib import suppress
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
    with suppress(ProcessLookupError, PermissionError):  # gone already, or not ours
        os.killpg(pgid, signal.SIGKILL)


def marked_record(engine: str, marker: str) -> dict:
    """The record of every command started with ``marker`` in its environment by ``engine`` (an
    execution's scripts: one record for all, written once, each script found by the marker)."""
    return {"pgid": None, "host": socket.gethostname(), "marker": marker, "engine": engine}


def stop_orphan(record: Any) -> bool:
    """Kill the group of a recorded command whose engine has died; True if one was killed."""
    return stop_orphans([record]) > 0


def stop_orphans(records: list) -> int:
    """Kill the groups of the recorded commands whose engine has died (a record whose ``pgid`` is None:
    every group carrying its marker); how many groups were killed.  One look at ``/proc`` for all."""
    wanted = [r for r in records if isinstance(r, dict) and (r.get("pgid") is None or isinstance(r["pgid"], int))
              and r.get("host") == socket.gethostname() and owner_is_dead(str(r.get("engine")))]
    if not wanted:
        return 0
    carrying = _groups_carrying({str(r.get("marker")) for r in wanted})
    killed = set()
    for record in wanted:
        groups = carrying.get(str(record.get("marker")), set())
        if record["pgid"] is None:
            killed |= groups
        elif record["pgid"] in groups or (carrying is _NO_PROC and _group_exists(record["pgid"])):
            killed.add(record["pgid"])
    for pgid in killed:
        kill_group(pgid)
    return len(killed)


#: what ``_groups_carrying`` answers without ``/proc``: nothing is known of environments
_NO_PROC: dict = {}


def _group_exists(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
        return True
    except (ProcessLookupError, PermissionError):
        return False


def _groups_carrying(markers: set[str]) -> dict[str, set[int]]:
    """marker -> the process groups with a live process carrying it in its environment."""
    if not os.path.isdir("/proc"):
        return _NO_PROC
    wanted = {f"{MARKER_VARIABLE}={marker}".encode(): marker for marker in markers}
    found: dict[str, set[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                variables = f.read().split(b"\0")
            hits = [wanted[v] for v in variables if v in wanted]
            if not hits:
                continue
            with open(f"/proc/{entry}/stat", "rb") as f:
                pgid = int(f.read().rsplit(b")", 1)[1].split()[2])  # state, ppid, pgrp
        except (OSError, IndexError, ValueError):  # gone meanwhile, or not ours to read
            continue
        for marker in hits:
            found.setdefault(marker, set()).add(pgid)
    return found
