"""``/tasks_graphs`` and ``/operations``: an execution's graphs and operations, read back from its steps and task
events (``stoker.workflows.tasks_graphs``), for ``cfy executions graphs list`` and ``cfy executions operations
list|get``.  Stoker writes them as it runs: the rest client's create and update calls are not served."""

from __future__ import annotations

from fastapi import Depends, Request
from fastapi.responses import Response

from stoker.api.cloudify import views
from stoker.api.cloudify.identity import Caller, caller
from stoker.api.cloudify.routing import bad, router, run
from stoker.workflows.tasks_graphs import NOT_INTERNAL, TasksGraphs

routes = router("operations")

TRUE = ("true", "True", "1")


@routes.get("/tasks_graphs")
async def graphs(request: Request, who: Caller = Depends(caller)) -> Response:
    query = request.query_params
    execution_id, name = query.get("execution_id"), query.get("name")
    if not execution_id:
        raise bad("Missing required param: execution_id")

    def work(engine):
        found = TasksGraphs(engine.executions).graphs(execution_id)
        return views.page(request, [g for g in found if not name or g["name"] == name], filters=False)

    return await run(request, who, work)


@routes.get("/operations")
async def operations(request: Request, who: Caller = Depends(caller)) -> Response:
    """An execution's operations, or one graph's (``graph_id``), in ``state``; ``skip_internal`` keeps the tasks
    Cloudify runs on agents (all of Stoker's)."""
    query = request.query_params
    graph_id, execution_id, state = query.get("graph_id"), query.get("execution_id"), query.get("state")
    if graph_id and execution_id:
        raise bad("Pass either graph_id or execution_id, not both")
    if not graph_id and not execution_id:
        raise bad("Missing required param: graph_id or execution_id")
    internal = query.get("skip_internal") not in TRUE

    def work(engine):
        tasks_graphs = TasksGraphs(engine.executions)
        listed = tasks_graphs.graph_operations(graph_id) if graph_id else tasks_graphs.operations(execution_id)
        found = [op for op in listed
                 if (not state or op["state"] == state) and (internal or op["type"] in NOT_INTERNAL)]
        return views.page(request, found, filters=False)

    return await run(request, who, work)


@routes.get("/operations/{operation_id}")
async def operation(operation_id: str, request: Request, who: Caller = Depends(caller)) -> Response:
    return await run(request, who, lambda engine: views.one(request, TasksGraphs(engine.executions)
                                                            .operation(operation_id)))
