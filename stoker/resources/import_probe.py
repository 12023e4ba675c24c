"""Import plug-in modules first in a forked child, so one that loops or ends the process
at import cannot hang or silently end every command.

A plug-in's module runs arbitrary code when imported: ``while True: pass``
would hang every ``stoker`` command and the API server, and ``os._exit(0)``
would end them without a word.  Neither can be caught in the process that
imports it, so a child forked from it (which has everything imported already,
so it costs milliseconds) imports the modules in order first, reporting each
start and end through a pipe.  A module the child never finished, because
time ran out or the child ended, is named and left out here; the others are
then imported for real.  Ordinary exceptions are left for that real import to
report, with their line.
"""

from __future__ import annotations

import importlib
import os
import selectors
import signal
import time
from contextlib import suppress
from typing import Iterable

#: seconds the child may take to import the plug-ins (``STOKER_PLUGIN_IMPORT_TIMEOUT``)
IMPORT_TIMEOUT = 10.0


def import_timeout() -> float:
    raw = os.environ.get("STOKER_PLUGIN_IMPORT_TIMEOUT")
    return float(raw) if raw else IMPORT_TIMEOUT


def unsafe_modules(modules: Iterable[tuple[str, str]], timeout: float | None = None) -> dict[str, str]:
    """``{file: why}`` for the modules of ``(module name, file)`` that must not be imported
    here: each that did not finish importing within ``timeout`` or ended the process."""
    pending = list(modules)
    if not pending or not hasattr(os, "fork"):
        return {}
    unsafe: dict[str, str] = {}
    limit = import_timeout() if timeout is None else timeout
    while pending:
        stopped_at, why = _probe([name for name, _ in pending], limit)
        if stopped_at is None:
            break
        unsafe[pending[stopped_at][1]] = why
        pending = pending[stopped_at + 1:]
    return unsafe


def _probe(names: list[str], limit: float) -> tuple[int | None, str]:
    """Import ``names`` in a child; the index of the module it stopped in and why (None: all done)."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        _import_all(names, read_end, write_end)
    os.close(write_end)
    current, finished, timed_out = None, False, False
    deadline = time.monotonic() + limit
    buffered = b""
    # a selector, not select.select: a long-lived process may hold descriptors past 1024
    waiter = selectors.DefaultSelector()
    waiter.register(read_end, selectors.EVENT_READ)
    try:
        while not finished:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not waiter.select(remaining):
                timed_out = True
                break
            chunk = os.read(read_end, 4096)
            if not chunk:
                break  # the child ended
            buffered += chunk
            *lines, buffered = buffered.split(b"\n")
            for line in lines:
                word, _, index = line.partition(b" ")
                if word == b"start":
                    current = int(index)
                elif word == b"done":
                    current = None
                elif word == b"end":
                    finished = True
    finally:
        waiter.close()
        os.close(read_end)
        if not finished:
            _kill(pid)
        os.waitpid(pid, 0)
    if finished or current is None:
        return None, ""
    if timed_out:
        return current, f"did not finish importing within {limit:g} s (a loop at import?); not loaded " \
                        "(STOKER_PLUGIN_IMPORT_TIMEOUT)"
    return current, "ended the process while being imported (os._exit, exit or a crash); not loaded"


def _import_all(names: list[str], read_end: int, write_end: int) -> None:
    os.close(read_end)
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):  # the real import prints what the plug-in prints, once
        os.dup2(devnull, fd)
    try:
        for index, name in enumerate(names):
            os.write(write_end, b"start %d\n" % index)
            with suppress(Exception):  # the real import reports it
                importlib.import_module(name)
            os.write(write_end, b"done %d\n" % index)
        os.write(write_end, b"end\n")
    finally:
        os._exit(0)


def _kill(pid: int) -> None:
    with suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
