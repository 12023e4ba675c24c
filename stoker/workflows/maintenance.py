"""The built-in workflows Cloudify's types declare beyond install/uninstall/scale: ``check_status``,
``check_drift``, ``pull``, ``reinstall`` and ``rollback`` run here; ``install_new_agents`` and
``validate_agents`` are refused (Stoker's operations run as local processes, with no agent).

Each builds its graph from the deployment as the execution starts, as the others in ``builtin`` do.
"""

from __future__ import annotations

from typing import Callable

from stoker.engine.graph import Graph
from stoker.workflows.workflow_error import WorkflowError
from stoker.workflows.lifecycle import install_graph, intact_links, link_steps, operation_graph, then, uninstall_graph
from stoker.workflows.model import LIFECYCLE, Deployment

VALIDATION = "cloudify.interfaces.validation"
#: the states an instance rests in; any other means an operation on it was cut short
RESOLVED = ("uninitialized", "started", "deleted")
#: the phase of rollback's own uninstalls, whose failed operations are reported and passed over
ROLLBACK = "rollback"

Chooser = Callable[[Deployment, dict], list]


def reinstall_graph(deployment: Deployment, ids: list[str], phase: str) -> Graph:
    """Uninstall ``ids`` then install them again; instances outside connected to them unlink first
    and establish again at the end (heal and reinstall)."""
    links = intact_links(deployment, ids)
    down = uninstall_graph(deployment, ids, phase=f"{phase}-uninstall")
    link_steps(deployment, down, links, "unlink", f"{phase}-unlink")
    states = {i: deployment.instances[i].state for i in ids}
    for i in ids:  # the install half starts from scratch: the instances are deleted by then
        deployment.instances[i].state = "deleted"
    try:
        up = install_graph(deployment, ids, phase=f"{phase}-install")
        link_steps(deployment, up, links, "establish", f"{phase}-establish")
    finally:
        for i, state in states.items():
            deployment.instances[i].state = state
    return then(down, up)


def operation_workflow(operation: str, phase: str, by_dependency_order: bool, choose: Chooser):
    """A workflow running one operation on the chosen instances (``run_by_dependency_order`` as given,
    else the workflow's default)."""
    def build(deployment: Deployment, params: dict, memo: dict) -> Graph:
        ordered = params.get("run_by_dependency_order", by_dependency_order)
        return operation_graph(deployment, operation, choose(deployment, params), bool(ordered),
                               phase=phase).graph
    return build


def reinstall(choose: Chooser):
    def build(deployment: Deployment, params: dict, memo: dict) -> Graph:
        return reinstall_graph(deployment, choose(deployment, params), "reinstall")
    return build


def rollback(choose: Chooser):
    """The chosen instances left in an unresolved state (creating, configuring, starting...) go back to
    deleted by their uninstall operations, their failures passed over (``ROLLBACK``); with
    ``full_rollback``, every other instance of the deployment is uninstalled after, failures failing it
    (as cloudify-common's, whose full rollback ignores the filters)."""
    def build(deployment: Deployment, params: dict, memo: dict) -> Graph:
        unresolved = [i for i in choose(deployment, params) if deployment.instances[i].state not in RESOLVED]
        back = uninstall_graph(deployment, unresolved, phase=ROLLBACK)
        if not params.get("full_rollback"):
            return back.graph
        rest = [i for i in deployment.instances if i not in set(unresolved)]
        return then(back, uninstall_graph(deployment, rest, phase=f"{ROLLBACK}-uninstall"))
    return build


def refused(name: str, why: str):
    def build(deployment: Deployment, params: dict, memo: dict) -> Graph:
        raise WorkflowError(f"workflow {name} is not supported by Stoker: {why}")
    return build


NO_AGENTS = "its operations run as local processes, with no agent to install or validate"


def workflows(choose: Chooser) -> dict:
    """The builders, by Cloudify's mapping name, over ``choose`` (the filter of ``node_ids``...)."""
    return {
        "check_status": operation_workflow(f"{VALIDATION}.check_status", "check_status", False, choose),
        "check_drift": operation_workflow(f"{LIFECYCLE}.check_drift", "check_drift", True, choose),
        "pull": operation_workflow(f"{LIFECYCLE}.pull", "pull", True, choose),
        "reinstall": reinstall(choose),
        "rollback": rollback(choose),
        "install_new_agents": refused("install_new_agents", NO_AGENTS),
        "validate_agents": refused("validate_agents", NO_AGENTS),
    }
