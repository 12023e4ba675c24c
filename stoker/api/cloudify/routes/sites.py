"""``/sites`` (``cfy sites create|get|update|list|delete``) and ``/deployments/<id>/set-site``
(``cfy deployments set-site DEP --site-name S`` or ``--detach-site``)."""

from __future__ import annotations

from fastapi import Depends, Request
from fastapi.responses import Response

from stoker.api.cloudify import views
from stoker.api.cloudify.identity import Caller, caller, requiring
from stoker.api.cloudify.routes.deployments import deployment_view
from stoker.api.cloudify.routing import bad, global_for_operator, map_body, router, run

routes = router("sites")


#: what a site's body holds
SITE = "send {\"location\": \"LATITUDE,LONGITUDE\", \"visibility\": ..., \"new_name\": ...}"


@routes.get("/sites")
async def list_(request: Request, who: Caller = Depends(caller)) -> Response:
    return await run(request, who, lambda engine: views.page(request, [
        views.site(row, who.project) for row in engine.blueprints.sites.list()], searched="name"))


@routes.get("/sites/{name}")
async def get(name: str, request: Request, who: Caller = Depends(caller)) -> Response:
    return await run(request, who, lambda engine: views.one(request, views.site(engine.blueprints.sites.get(name),
                                                                                 who.project)))


@routes.put("/sites/{name}")
async def create(name: str, request: Request, who: Caller = Depends(requiring("user"))) -> Response:
    body = await map_body(request, SITE)
    global_for_operator(request, who, body.get("visibility"), "site")
    return await run(request, who, lambda engine: views.site(engine.blueprints.sites.create(
        name, body.get("location"), body.get("visibility"), who.user), who.project))


@routes.post("/sites/{name}")
async def update(name: str, request: Request, who: Caller = Depends(requiring("user"))) -> Response:
    body = await map_body(request, SITE)
    global_for_operator(request, who, body.get("visibility"), "site")
    return await run(request, who, lambda engine: views.site(engine.blueprints.sites.update(
        name, body.get("location"), body.get("visibility"), body.get("new_name")), who.project))


@routes.delete("/sites/{name}")
async def delete(name: str, request: Request, who: Caller = Depends(requiring("user"))) -> Response:
    return await run(request, who, lambda engine: engine.blueprints.sites.delete(name))


@routes.post("/deployments/{deployment_id}/set-site")
async def set_site(deployment_id: str, request: Request, who: Caller = Depends(requiring("user"))) -> Response:
    body = await map_body(request, SITE)
    site_name, detach = body.get("site_name"), body.get("detach_site") in (True, "true", "True")
    if bool(site_name) == detach:
        raise bad("Must provide either a `site_name` of a valid site or `detach_site` with true value for "
                  "detaching the current site of the given deployment")

    def work(engine):
        engine.blueprints.sites.set_site(deployment_id, site_name or None)
        return deployment_view(engine, deployment_id, who.project)

    return await run(request, who, work)
