"""What the test plug-ins that lose a worker at a chosen moment share (no resources of its own)."""

import os
import signal


def lose_once(when: str, *moment: str) -> None:
    """SIGKILL this worker's whole process group, as a lost machine, when ``moment`` is the one
    ``when`` names (``PART:...:FILE``), once: FILE, made then, says it happened."""
    *wanted, mark = when.split(":", len(moment))
    if tuple(wanted) != moment:
        return
    try:
        os.close(os.open(mark, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return
    os.killpg(os.getpgid(0), signal.SIGKILL)
