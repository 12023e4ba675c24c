"""The built-in workflows Cloudify's types declare beyond install/uninstall/scale: ``check_status``,
``check_drift``, ``pull``, ``reinstall`` and ``rollback`` run here; ``install_new_agents`` and
``validate_agents`` are refused (Stoker's operations run as local processes, with no agent).

Each builds its graph from the deployment as the execution starts, as the others in ``builtin`` do.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Callable, Iterator

from stoker.engine.graph import Graph
from stoker.workflows.workflow_error import WorkflowError
from stoker.workflows.lifecycle import (Chains, Step, install_graph, intact_links, link_steps, operation_graph,
                                       rollback_graph, then, uninstall_graph)
from stoker.workflows.model import LIFECYCLE, RELATIONSHIP_LIFECYCLE, Deployment, has_implementation

VALIDATION = "cloudify.interfaces.validation"
#: the states an operation was cut short in, which rollback takes back (stopping, deleting: uninstall)
UNRESOLVED = ("creating", "configuring", "starting")
#: the phase of rollback's own uninstalls, whose failed operations are reported and passed over
ROLLBACK = "rollback"

Chooser = Callable[[Deployment, dict], list]


def reinstall_graph(deployment: Deployment, ids: list[str], phase: str) -> Graph:
    """Uninstall ``ids`` then install them again; instances outside connected to them unlink first
    and establish again at the end (heal and reinstall)."""
    links = intact_links(deployment, ids)
    down = uninstall_graph(deployment, ids, phase=f"{phase}-uninstall")
    link_steps(deployment, down, links, "unlink", f"{phase}-unlink")
    with as_if(deployment, {i: "deleted" for i in ids}):  # the install half starts from scratch
        up = install_graph(deployment, ids, phase=f"{phase}-install")
        link_steps(deployment, up, links, "establish", f"{phase}-establish")
    return then(down, up)


@contextmanager
def as_if(deployment: Deployment, states: dict[str, str]) -> Iterator[None]:
    """The instances in ``states`` (as a first half of a graph leaves them) while the second half is built."""
    before = {i: deployment.instances[i].state for i in states}
    for i, state in states.items():
        deployment.instances[i].state = state
    try:
        yield
    finally:
        for i, state in before.items():
            deployment.instances[i].state = state


def operation_workflow(operation: str, phase: str, by_dependency_order: bool, choose: Chooser):
    """A workflow running one operation on the chosen instances (``run_by_dependency_order`` as given,
    else the workflow's default)."""
    def build(deployment: Deployment, params: dict, memo: dict) -> Graph:
        ordered = params.get("run_by_dependency_order", by_dependency_order)
        return operation_graph(deployment, operation, choose(deployment, params), bool(ordered),
                               phase=phase).graph
    return build


def drift_graph(deployment: Deployment, ids: list[str], by_dependency_order: bool, phase: str) -> Chains:
    """Each instance's ``check_drift``, then both sides' of each of its relationships, as Cloudify's check_drift
    runs them (their results kept on the instances: ``health``)."""
    chains = operation_graph(deployment, f"{LIFECYCLE}.check_drift", ids, by_dependency_order, phase=phase)
    full = f"{RELATIONSHIP_LIFECYCLE}.check_drift"
    for instance_id in ids:
        instance = deployment.instances[instance_id]
        for index in range(len(instance.relationships)):
            for side in ("source", "target"):
                if has_implementation(deployment.relationship_operation(instance, index, side, full)):
                    chains.graph.add(Step(phase, instance_id, "check_drift", full, relationship=index, side=side),
                                     chains.last.get(instance_id, []))
    return chains


def check_drift(choose: Chooser):
    def build(deployment: Deployment, params: dict, memo: dict) -> Graph:
        return drift_graph(deployment, choose(deployment, params), bool(params.get("run_by_dependency_order", True)),
                           "check_drift").graph
    return build


def reinstall(choose: Chooser):
    def build(deployment: Deployment, params: dict, memo: dict) -> Graph:
        return reinstall_graph(deployment, choose(deployment, params), "reinstall")
    return build


def rollback(choose: Chooser):
    """The chosen instances left in an unresolved state go back to the resolved state before it
    (``rollback_steps``), their failures passed over (``ROLLBACK``); with ``full_rollback``, every
    instance of the deployment is then uninstalled, failures failing it (as cloudify-common's, whose
    full rollback ignores the filters)."""
    def build(deployment: Deployment, params: dict, memo: dict) -> Graph:
        unresolved = [i for i in choose(deployment, params) if deployment.instances[i].state in UNRESOLVED]
        back = rollback_graph(deployment, unresolved, phase=ROLLBACK)
        if not params.get("full_rollback"):
            return back.graph
        left = {i: "configured" if deployment.instances[i].state == "starting" else "uninitialized" for i in unresolved}
        with as_if(deployment, left):
            return then(back, uninstall_graph(deployment, list(deployment.instances), phase=f"{ROLLBACK}-uninstall"))
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
        "check_drift": check_drift(choose),
        "pull": operation_workflow(f"{LIFECYCLE}.pull", "pull", True, choose),
        "reinstall": reinstall(choose),
        "rollback": rollback(choose),
        "install_new_agents": refused("install_new_agents", NO_AGENTS),
        "validate_agents": refused("validate_agents", NO_AGENTS),
    }
