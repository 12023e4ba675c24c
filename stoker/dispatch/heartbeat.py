"""While a worker runs one long step (a plug-in's handler, a script), its owner's heartbeat goes on."""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Any, Callable, Iterator

#: seconds between heartbeats while one step runs (stack locks and executions time out after 60)
BEAT = 15.0


@contextmanager
def beating(beat: Callable[[], Any], every: float = BEAT) -> Iterator[None]:
    """Call ``beat`` every ``every`` seconds on a thread of its own until the block ends."""
    stop = threading.Event()

    def run() -> None:
        while not stop.wait(every):
            beat()

    beater = threading.Thread(target=run, name="stoker-beat", daemon=True)
    beater.start()
    try:
        yield
    finally:
        stop.set()
        beater.join()
