"""``/plugins-updates``: ``cfy plugins update BLUEPRINT`` moves the blueprint and its deployments to newer
plugin versions of the catalog (as the caller's tenant sees it); ``get-update``, ``history``, ``list_updates``.

As on Cloudify, the blueprint is parsed again on the new versions and each deployment moves onto it by a
deployment update that runs no operation (skip_install, skip_uninstall, skip_reinstall: listed by ``cfy
deployments history``), so types and properties the newer plugin YAML declares reach the deployments; a
deployment's plugin operations run the version its plan names (``plugin_envs.task_command``).  All of it is
written in one transaction (``store/plugins_updates.py``) that holds the deployments' execution locks:
refused while one runs an execution (none starts meanwhile), or when a creator does not see a new version (400
``plugins_update_failed``, nothing changed).  The update's execution, which cfy waits for, has ended when the
answer comes (``execution_view``).
"""

from __future__ import annotations

import uuid
from typing import Any

from fastapi import Depends, Request
from fastapi.responses import Response

from stoker.api.body import json_body
from stoker.api.cloudify import views
from stoker.api.cloudify.all_tenants import projects_listed
from stoker.api.cloudify.identity import Caller, caller, requiring
from stoker.api.cloudify.routes.plugins import plugin_catalog
from stoker.api.cloudify.routing import bad, router, run
from stoker.api.error_bodies import ApiError
from stoker.blueprint import visibility
from stoker.blueprint.plugin_versions import changes, wanted_from
from stoker.errors import Conflict, StokerError
from stoker.store.models import utcnow
from stoker.store.plugin_packages import viewer_of
from stoker.store.plugins_updates import PLUGINS_UPDATES, PluginsUpdates, with_versions
from stoker.workflows import executions
from stoker.workflows.deployment_updates import FLAGS

routes = router("plugins-updates")
#: the system workflow Cloudify runs a plugins update as
WORKFLOW = "update_plugin"


def _view(row: dict) -> dict:
    return {**views.common(row["project_id"]), "id": row["id"], "state": row["state"],
            "blueprint_id": row["blueprint_id"], "temp_blueprint_id": None, "execution_id": row["execution_id"],
            "deployments_to_update": row["deployments_to_update"], "forced": row["forced"], "all_tenants": False,
            "created_by": row["created_by"], "created_at": executions.iso_time(row["created_at"]),
            "deployments_per_tenant": {views.common(row["project_id"])["tenant_name"]: row["deployments_to_update"]},
            "plugins": {name: {"from": moved[0], "to": moved[1]} for name, moved in row["changes"].items()}}


def execution_view(store: Any, project: str, execution_id: str) -> dict | None:
    """The ended ``update_plugin`` execution of a plugins update (None: no update has that execution)."""
    row = PluginsUpdates(store).by_execution(project, execution_id)
    if row is None:
        return None
    return views.execution(executions.view({
        "id": execution_id, "workflow_id": WORKFLOW, "deployment_id": None, "status": "terminated",
        "parameters": {"plugins_update_id": row["id"], "blueprint_id": row["blueprint_id"]}, "error": "",
        "created_at": row["created_at"], "started_at": row["created_at"], "ended_at": row["created_at"],
        "project_id": project}), project)


def _refuse_unseen(engine: Any, deployment: dict, targets: list, who: Caller) -> None:
    """A deployment whose creator does not see a new version (another user's private plugin) would fail its
    tasks: 400 ``plugins_update_failed``, nothing changed."""
    creator = viewer_of(engine.store.engine, who.project, who.tenant, deployment["created_by"])
    unseen = [f"{p.name} {p.version}" for p in targets if not creator.sees(p.owner)]
    if unseen:
        raise ApiError(400, f"Deployment {deployment['id']} runs its plugins as its creator "
                       f"{deployment['created_by']!r}, who does not see plugin {unseen[0]} (private): widen its "
                       "visibility first", "plugins_update_failed")


def _parsed_again(engine: Any, blueprint_id: str, moved: dict[str, list[str]]) -> dict:
    """The blueprint's plan parsed on the new plugin versions (400 ``plugins_update_failed`` if it no longer
    parses)."""
    try:
        plan = engine.blueprints.parsed_again(blueprint_id, {name: versions[1] for name, versions in moved.items()})
    except StokerError as exc:
        raise ApiError(400, f"Blueprint {blueprint_id} does not parse on the new plugin versions: {exc}",
                       "plugins_update_failed") from None
    return with_versions(plan, moved)


def _moved_onto(updates: Any, deployment: dict, blueprint: dict, row: dict, who: Caller) -> tuple[dict, dict]:
    """(what the deployment update changes, its row) moving ``deployment`` onto the updated blueprint: no
    operation runs (installed, uninstalled and reinstalled nothing, as Cloudify's plugins update asks)."""
    params = {**FLAGS, "skip_install": True, "skip_uninstall": True, "skip_reinstall": True, "update_plugins": True,
              "plugins_update_id": row["id"]}
    try:
        update_row, decided = updates.planned(deployment, blueprint, {}, params, who.user)
    except StokerError as exc:
        raise ApiError(400, f"Deployment {deployment['id']} cannot move onto the new plugin versions: {exc}",
                       "plugins_update_failed") from None
    return decided, {**update_row, "execution_id": row["execution_id"], "state": "successful"}


@routes.post("/plugins-updates/{blueprint_id}/update/initiate")
async def initiate(blueprint_id: str, request: Request, who: Caller = Depends(requiring("manager"))) -> Response:
    body = await json_body(request) if await request.body() else {}
    try:
        wanted = wanted_from(body)
    except ValueError as exc:
        raise bad(str(exc)) from None
    forced = isinstance(body, dict) and bool(body.get("force"))

    def work(engine):
        blueprint = visibility.owned(engine.blueprints.records.get_blueprint(who.project, blueprint_id), who.project,
                                     blueprint_id)  # another tenant's global one is updated from there
        seen = plugin_catalog(request, who).list()
        try:
            moved = changes(engine.blueprints.plan(blueprint_id), [(p.name, p.version) for p in seen], wanted)
        except ValueError as exc:  # a mapping's version the catalog lacks
            raise ApiError(400, str(exc), "plugins_update_failed") from None
        targets = [p for p in seen if p.owner is not None and moved.get(p.name, [None, None])[1] == p.version]
        deployments = engine.blueprints.records.list_deployments(who.project, blueprint_id) if moved else []
        for deployment in deployments:
            _refuse_unseen(engine, deployment, targets, who)
        row = {"id": str(uuid.uuid4()), "project_id": who.project, "blueprint_id": blueprint_id,
               "state": "successful" if moved else "no_changes_required", "forced": forced,
               "created_by": who.user, "created_at": utcnow(), "execution_id": str(uuid.uuid4()),
               "deployments_to_update": [d["id"] for d in deployments], "changes": moved}
        plan = _parsed_again(engine, blueprint_id, moved) if moved else None
        updates = engine.executions.updates
        planned = [(d["pk"], *_moved_onto(updates, d, {**blueprint, "plan": plan}, row, who)) for d in deployments]
        try:
            stored = PluginsUpdates(engine.store).apply(row, blueprint["pk"], plan, planned)
        except Conflict as exc:  # a deployment runs an execution: its plugins are updated once it ends
            raise ApiError(400, f"{exc}: its plugins are updated once it ends", "plugins_update_failed") from None
        return _view(stored)

    return await run(request, who, work)


@routes.get("/plugins-updates")
async def list_(request: Request, who: Caller = Depends(caller)) -> Response:
    return await run(request, who, lambda engine: views.page(request, [
        _view(row) for row in PluginsUpdates(engine.store).list(projects_listed(request, who, PLUGINS_UPDATES))]))


@routes.get("/plugins-updates/{update_id}")
async def get(update_id: str, request: Request, who: Caller = Depends(caller)) -> Response:
    def work(engine):
        row = PluginsUpdates(engine.store).get(who.project, update_id)
        if row is None:
            raise ApiError(404, f"Requested `PluginsUpdate` with ID `{update_id}` was not found", "not_found_error")
        return views.one(request, _view(row))

    return await run(request, who, work)
