"""``/snapshots`` and ``/snapshot-status`` (``cfy snapshots create|list|get|download|upload|restore|delete|status``):
whole-server backups (``stoker/store/manager_snapshots.py``), and their status update (``PATCH``), for the
server's operator only (Cloudify's sys_admin): a snapshot holds every tenant.

A create or a restore is done in the request (bounded by the data) and answered, as Cloudify answers, with
its system workflow's execution, ended already; ``GET /executions/{id}`` answers it too (``execution_view``),
so ``cfy snapshots create --wait`` reads it back.
"""

from __future__ import annotations

import re
from typing import Any

from fastapi import Depends, Request
from fastapi.responses import Response

from stoker.api.body import read_body
from stoker.api.cloudify import views
from stoker.api.cloudify.identity import Caller, caller, forbidden
from stoker.api.cloudify.routing import bad, map_body, router, run
from stoker.limits import limit
from stoker.store.backups import keep_upload, make_snapshot, restore_snapshot
from stoker.store.manager_snapshots import CREATED, FAILED, STATES, ManagerSnapshots
from stoker.workflows import executions
from stoker.workflows.parameters import given_flag

routes = router("snapshots")

#: what a create's or a restore's body holds
FLAGS = "send {\"include_events\": true, \"include_logs\": true} (create) or {\"force\": false} (restore)"


def operator(request: Request) -> Caller:
    """A dependency refusing (403) anyone but the server's operator."""
    who = caller(request)
    if not request.app.state.cloudify.operator(who):
        raise forbidden(f"User {who.user!r} may not handle snapshots: a snapshot holds every tenant, only the "
                        "operator (a manager of tenant default_tenant) handles them")
    return who


operator.needs = "sys_admin"  # type: ignore[attr-defined]  # read by routes/permissions.py


def _new_id(snapshot_id: str) -> str:
    """A new snapshot's id, held to Cloudify's rule (``validate_inputs``)."""
    prefix = "The `snapshot_id` argument"
    if len(snapshot_id) > 256:
        raise bad(f"{prefix} is too long. Maximum allowed length is 256 characters")
    if not re.fullmatch(r"[A-Za-z0-9._-]*", snapshot_id):
        raise bad(f'{prefix} contains illegal characters. Only letters, digits and the characters "-", "." and "_" '
                  "are allowed")
    if not snapshot_id[:1].isascii() or not snapshot_id[:1].isalpha():
        raise bad(f"{prefix} must begin with a letter")
    return snapshot_id


def _snapshots(engine: Any) -> ManagerSnapshots:
    return ManagerSnapshots(engine.store)


def execution_view(store: Any, project: str, execution_id: str) -> dict | None:
    """The ended ``create_snapshot`` or ``restore_snapshot`` execution ``execution_id`` (None: no snapshot's)."""
    found = ManagerSnapshots(store).by_execution(execution_id)
    if found is None:
        return None
    workflow, row = found
    created = workflow == "create_snapshot"
    status = {CREATED: "terminated", FAILED: "failed"}.get(row["status"], "started") if created else "terminated"
    when = row["created_at"] if created else row["restored_at"]
    return views.execution(executions.view({
        "id": execution_id, "workflow_id": workflow, "deployment_id": None, "status": status,
        "parameters": {"snapshot_id": row["id"]}, "error": row["error"] if created else "", "created_at": when,
        "started_at": when, "ended_at": when, "project_id": project}), project) | {"is_system_workflow": True}


@routes.get("/snapshot-status")
def status(request: Request) -> dict:
    """Open to all, as Cloudify's (it answers while a restore replaces who may log in)."""
    snapshots = ManagerSnapshots(request.app.state.stoker.engine.store)
    return {"status": "running" if snapshots.restoring() else "not-running"}


@routes.get("/snapshots")
async def list_(request: Request, who: Caller = Depends(operator)) -> Response:
    return await run(request, who, lambda engine: views.page(request, [
        views.snapshot(row) for row in _snapshots(engine).list()]))


@routes.get("/snapshots/{snapshot_id}")
async def get(snapshot_id: str, request: Request, who: Caller = Depends(operator)) -> Response:
    return await run(request, who, lambda engine: views.one(request, views.snapshot(
        _snapshots(engine).get(snapshot_id))))


@routes.put("/snapshots/{snapshot_id}")
async def create(snapshot_id: str, request: Request, who: Caller = Depends(operator)) -> Response:
    body = await map_body(request, FLAGS)
    flags = {name: given_flag(body, name, True) for name in ("include_events", "include_logs", "include_credentials")}

    def work(engine):
        row = make_snapshot(_snapshots(engine), _new_id(snapshot_id), who.user, flags["include_events"],
                            flags["include_logs"])
        return execution_view(engine.store, who.project, row["execution_id"])

    return await run(request, who, work, status=201)


@routes.delete("/snapshots/{snapshot_id}")
async def delete(snapshot_id: str, request: Request, who: Caller = Depends(operator)) -> Response:
    return await run(request, who, lambda engine: views.snapshot(_snapshots(engine).delete(snapshot_id)))


@routes.patch("/snapshots/{snapshot_id}")
async def update_status(snapshot_id: str, request: Request, who: Caller = Depends(operator)) -> Response:
    """``client.snapshots.update_status(ID, STATUS, error)``: the operator's (Cloudify's sys_admin's) mark of a
    snapshot's state; an error not sent is cleared, as Cloudify's."""
    body = await map_body(request, "send {\"status\": STATUS, \"error\": TEXT}")
    if "status" not in body:
        raise bad("Missing status in json request body")
    if body["status"] not in STATES:
        raise bad(f"Invalid status: {str(body['status'])[:100]}. Valid statuses are: {list(STATES)}")
    error = body.get("error") or ""
    if not isinstance(error, str):
        raise bad(f"error parameter is expected to be of type str but is of type {type(error).__name__}")
    return await run(request, who, lambda engine: views.snapshot(
        _snapshots(engine).set_status(snapshot_id, body["status"], error)))


@routes.get("/snapshots/{snapshot_id}/archive")
async def download(snapshot_id: str, request: Request, who: Caller = Depends(operator)) -> Response:
    def work(engine):
        return Response(_snapshots(engine).archive(snapshot_id), media_type="application/zip",
                        headers={"Content-Disposition": f'attachment; filename="{snapshot_id}.zip"'})

    return await run(request, who, work)


@routes.put("/snapshots/{snapshot_id}/archive")
async def upload(snapshot_id: str, request: Request, who: Caller = Depends(operator)) -> Response:
    snapshot_id = _new_id(snapshot_id)
    data = await read_body(request, limit("max_backup_size"), "max_backup_size", "snapshot archive")
    return await run(request, who, lambda engine: views.snapshot(keep_upload(_snapshots(engine), snapshot_id, who.user,
                                                                             data)), status=201)


@routes.post("/snapshots/{snapshot_id}/restore")
async def restore(snapshot_id: str, request: Request, who: Caller = Depends(operator)) -> Response:
    force = given_flag(await map_body(request, FLAGS), "force")

    def work(engine):
        row = restore_snapshot(_snapshots(engine), snapshot_id, force)
        return execution_view(engine.store, who.project, row["restore_execution_id"])

    return await run(request, who, work)
