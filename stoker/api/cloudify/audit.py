"""What the audit log records of a request to Cloudify's API: a change (a successful ``PUT``, ``POST``, ``PATCH``
or ``DELETE``), the family it changed, what it named, who made it (Cloudify's ``audit_log`` rows, read by
``cfy auditlog list``).  Searches, though sent as ``POST``, change nothing and are left out, as is the audit log's
own truncation."""

from __future__ import annotations

import asyncio
import json
import logging

from fastapi import Request
from fastapi.responses import Response

from stoker.store.audit_records import AuditRecords

LOG = logging.getLogger("stoker.api")
CHANGES = {"PUT": "create", "POST": "create", "PATCH": "update", "DELETE": "delete"}
#: families whose requests change nothing Cloudify audits
UNAUDITED = {"audit", "searches"}


def _named(parts: list[str], response: Response) -> str | None:
    """What the request changed: the id its path names, else the one its answer shows."""
    if len(parts) > 1:
        return parts[1]
    try:
        shown = json.loads(getattr(response, "body", b"") or b"null")
    except ValueError:
        return None
    return next((str(shown[k]) for k in ("id", "name", "key") if isinstance(shown, dict) and shown.get(k)), None)


async def record(request: Request, response: Response) -> None:
    """Keep the change ``request`` made (``response``: its successful answer); a failure to keep it is logged,
    never the request's."""
    who = getattr(request.state, "caller", None)
    parts = [p for p in request.url.path.split("/")[3:] if p]  # after /api/v3.1/
    if request.method not in CHANGES or not parts or parts[0] in UNAUDITED or who is None:
        return
    if request.method == "PUT" and response.status_code == 204:  # a check (a provider's test), not a change
        return
    operation = "update" if request.method == "POST" and len(parts) > 1 else CHANGES[request.method]
    row = {"ref_table": parts[0], "ref_identifier": {"id": _named(parts, response), "tenant_name": who.tenant},
           "operation": operation, "creator_name": None if who.project_token else who.user, "execution_id": None}
    try:
        await asyncio.to_thread(AuditRecords(request.app.state.stoker.engine.store).add, row)
    except Exception:  # the change is made: an audit row that could not be written must not fail it
        LOG.exception("audit log: %s %s not recorded", request.method, request.url.path)
