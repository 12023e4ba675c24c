"""``GET /audit/stream`` (``cfy auditlog list --follow``): new audit log entries as they come, each a JSON line and
a blank line (``text/event-stream``, as Cloudify's api-service streams them), the entries since ``since`` first.

A follower holds no server thread: it waits on the event loop and asks the
store for the entries after the last one it sent every ``POLL`` seconds, a
short query in the tenant's request pool.  It is bounded: at most ``FOLLOWERS``
at once in a server process (more: 503), each ended after ``LONGEST`` seconds
(cfy's own ``--timeout`` is 300 s by default; a client that wants more follows
again from ``since``), ended as soon as its client goes away, and when the server stops (not cut off
after its shutdown grace).
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any, AsyncIterator, Callable

from fastapi import Request
from fastapi.responses import StreamingResponse

from stoker.api.error_bodies import ApiError
from stoker.api.slow_clients import BoundedH11Protocol
from stoker.store.audit_records import AuditRecords

#: seconds between two looks for new entries
POLL = 0.5
#: entries read (and sent) in one look
PAGE = 500
#: followers one server process serves at once
FOLLOWERS = 16
#: seconds one follower is served
LONGEST = 3600.0


class Followers:
    """How many follow now, in this process (the event loop's: no lock needed)."""

    count = 0


def stream(request: Request, project: str, filters: dict, entry: Callable[[dict], dict]) -> StreamingResponse:
    """The response following the entries ``filters`` match (``since``: from then on, else from now), each
    shown as ``entry(row)``."""
    if Followers.count >= FOLLOWERS:
        raise ApiError(503, f"{FOLLOWERS} clients follow the audit log already (the most one server serves): "
                            f"try again later, or list it (cfy auditlog list)", "internal_server_error")
    records = AuditRecords(request.app.state.stoker.engine.store)
    call = request.app.state.stoker.runner.call
    return StreamingResponse(_lines(lambda work: call(project, work), records, filters, entry),
                             media_type="text/event-stream")


async def _lines(call: Callable[[Callable[[], Any]], Any], records: AuditRecords, filters: dict,
                 entry: Callable[[dict], dict]) -> AsyncIterator[bytes]:
    Followers.count += 1
    try:
        last = 0 if filters["since"] is not None else await call(records.last_id)
        ends = time.monotonic() + LONGEST
        while time.monotonic() < ends and not BoundedH11Protocol.stopping:
            rows = await call(lambda: records.after(last, filters, PAGE))
            if rows:
                last = rows[-1]["id"]
                yield b"".join(json.dumps(entry(row)).encode() + b"\n\n" for row in rows)
            if len(rows) < PAGE:
                await asyncio.sleep(POLL)
    finally:
        Followers.count -= 1
