"""Heal as Cloudify 7 heals (``auto_heal_reinstall_node_subgraph``): the failing instance's host and what it
contains (every instance, without ``node_instance_id``) have their status checked; the unhealthy ones run
their ``heal`` operations where their node has one, else they are reinstalled with what they contain, and so
are those whose heal failed; ``allow_reinstall`` false refuses a reinstall, ``force_reinstall`` reinstalls
them all without a check.

Cloudify decides between its graphs as it goes; a Stoker execution is one graph, built at its start and
again on a worker or a resume, so the steps that depend on the checks are guarded (``Step.when``): a
``decide`` step (``Step.act``) reads the checks' results and marks each instance with what it takes
(``plans``), and each guarded step runs only for the instances so marked.  The marks go at the end.
"""

from __future__ import annotations

from typing import Any

from stoker.engine.graph import Graph
from stoker.workflows import health, plans
from stoker.workflows.lifecycle import (Chains, Step, acting, guarded, in_order, install_graph, link_steps,
                                       operation_graph, order, uninstall_graph)
from stoker.workflows.maintenance import VALIDATION, as_if, reinstall_graph
from stoker.workflows.model import LIFECYCLE, Deployment
from stoker.workflows.workflow_error import WorkflowError, unknown_value

#: the workflow's phases: its status check (failures kept and passed over), its heal operations (a failure
#: marks the instance heal_failed and is passed over); its reinstall's are ``heal-uninstall``, ``heal-install``...
CHECK, HEAL = "heal-check-status", "heal"
HEAL_OPERATIONS = ("preheal", "heal", "postheal")


def candidates(deployment: Deployment, params: dict) -> list[str]:
    """The instances heal looks at: the failing one's host and what it contains (the instance itself with
    what it contains when it has no host), or every instance's (``node_instance_id`` not given)."""
    target = params.get("node_instance_id")
    if target and target not in deployment.instances:
        raise unknown_value("node_instance_id", target, "node_instance")
    found: list[str] = []
    for instance_id in [target] if target else list(deployment.instances):
        host = deployment.instances[instance_id].host_id
        found += [i for i in deployment.contained(host if host in deployment.instances else instance_id)
                  if i not in found]
    return found


def heal(deployment: Deployment, params: dict, memo: dict) -> Graph:
    """Check, decide, heal, allow, reinstall, clean: each stage after the one before."""
    ids = candidates(deployment, params)
    if params.get("force_reinstall"):
        return reinstall_graph(deployment, ids, "heal")
    check = operation_graph(deployment, f"{VALIDATION}.check_status", ids, False, phase=CHECK).graph \
        if params.get("check_status", True) else Graph()
    return in_order([check, acting(HEAL, "heal-decide"),
                     guarded(heal_graph(deployment, ids).graph, lambda step: "heal"),
                     acting(HEAL, "heal-reinstall-allowed"), guarded_reinstall(deployment, ids, "heal"),
                     acting(HEAL, "heal-clean")])


def heal_graph(deployment: Deployment, ids: list[str], phase: str = HEAL) -> Chains:
    """Each instance's preheal, heal and postheal (those its node has) and its mark of success, in the order
    of their relationships (as Cloudify's heal subgraphs)."""
    chains = Chains()
    healing = [i for i in ids if deployment.runs(deployment.instances[i], f"{LIFECYCLE}.heal")]
    for instance_id in healing:
        instance = deployment.instances[instance_id]
        chains.chain(instance_id, [[Step(phase, instance_id, name, f"{LIFECYCLE}.{name}")] for name in HEAL_OPERATIONS
                                   if deployment.runs(instance, f"{LIFECYCLE}.{name}")]
                     + [[Step(phase, instance_id, "healed", act="healed")]])
    order(deployment, healing, chains, reverse=False)
    return chains


def guarded_reinstall(deployment: Deployment, ids: list[str], phase: str, sources: list[str] | None = None) -> Graph:
    """``ids``' reinstall, each instance's steps run when its mark says reinstall; the relationships to them
    of the instances not reinstalled (of ``sources``, every instance by default) unlinked and established
    again."""
    inside = set(ids)
    links = [[source, index] for source in (deployment.instances if sources is None else sources)
             for index, rel in enumerate(deployment.instances[source].relationships)
             if rel.get("target_id") in inside]
    down = uninstall_graph(deployment, ids, phase=f"{phase}-uninstall")
    link_steps(deployment, down, links, "unlink", f"{phase}-unlink")
    with as_if(deployment, {i: "deleted" for i in ids}):
        up = install_graph(deployment, ids, phase=f"{phase}-install")
        link_steps(deployment, up, links, "establish", f"{phase}-establish")
    linking = (f"{phase}-unlink", f"{phase}-establish")
    return in_order([guarded(chains.graph, lambda step: "relink" if step.phase in linking else "reinstall")
                     for chains in (down, up)])


# -- what the guarded steps ask, and the steps that decide ------------------------------------------------
def decide(runner: Any, step: Step) -> None:
    """Which of the candidates heal and which reinstall, from their status checks (a targeted heal counts
    an instance never checked by a task as failing, a deployment's as passing); refused at once when
    reinstalling is not allowed.  Decided once: a resumed execution keeps what it decided."""
    deployment, params = runner.deployment, runner.workflow_parameters
    ids = candidates(deployment, params)
    if any(plans.planned(deployment.instances[i], runner.execution_id) is not None for i in ids):
        return
    target = params.get("node_instance_id")
    runner.writer.event(runner.row("cloudify_log", (
        f"Starting 'heal' workflow on {target}, Diagnosis: {params.get('diagnose_value', 'Not provided')}" if target
        else f"Starting 'heal' workflow for '{deployment.id}' deployment, Diagnosis: "
             f"{params.get('diagnose_value', 'Not provided')}"), level="info"))
    healthy = {i for i in ids if health.healthy(deployment.instances[i], require_task=bool(target))}
    to_heal, to_reinstall = split(deployment, ids, healthy)
    refuse_reinstall(params, ids, to_reinstall)
    plans.mark(runner, {i: ["heal"] if i in to_heal else ["reinstall"] if i in to_reinstall else [] for i in ids})


def split(deployment: Deployment, ids: list[str], healthy: set[str]) -> tuple[set[str], set[str]]:
    """(to heal, to reinstall), as Cloudify's ``_find_instances_to_heal``: a failing instance heals when its
    node has a heal operation, else it is reinstalled with what it contains (which then heals not)."""
    to_heal: set[str] = set()
    to_reinstall: set[str] = set()
    for instance_id in ids:
        if instance_id in healthy or instance_id in to_reinstall:
            continue
        if deployment.runs(deployment.instances[instance_id], f"{LIFECYCLE}.heal"):
            to_heal.add(instance_id)
        else:
            contained = set(deployment.contained(instance_id))
            to_reinstall |= contained
            to_heal -= contained
    return to_heal, to_reinstall


def refuse_reinstall(params: dict, ids: list[str], to_reinstall: set[str]) -> None:
    """Cloudify's refusal of a reinstall ``allow_reinstall`` false forbids, naming five instances at most."""
    if not to_reinstall or params.get("allow_reinstall", True):
        return
    named = [i for i in ids if i in to_reinstall]
    text = ", ".join(named[:5]) + (f" (and {len(named) - 5} more)" if len(named) > 5 else "")
    raise WorkflowError(f"allow_reinstall is false, but would need to reinstall instances: {text}")


def reinstall_allowed(runner: Any, step: Step) -> None:
    """After the heal operations: those that failed are reinstalled too (their heal_failed mark becomes a
    reinstall), unless reinstalling is not allowed."""
    deployment, execution_id = runner.deployment, runner.execution_id
    ids = candidates(deployment, runner.workflow_parameters)
    failed = [i for i in ids if health.marked(deployment.instances[i], "heal_failed", execution_id)]
    reinstalled = {i for i in ids if plans.takes(deployment.instances[i], execution_id, "reinstall")} | set(failed)
    refuse_reinstall(runner.workflow_parameters, ids, reinstalled)
    runner.change_system([(i, ("heal_failed",), health.GONE) for i in failed])
    plans.change(runner, {i: (["reinstall"], ["heal"]) for i in failed})


def healed(runner: Any, step: Step) -> None:
    """A heal that succeeded: the instance passes its status check (as Cloudify's ``_on_heal_success``)."""
    status = dict(runner.deployment.instances[step.instance].system_properties.get("status") or {})
    runner.change_system([(step.instance, ("status",), {**status, "ok": True, "task": None, "healed": True})])


def clean(runner: Any, step: Step) -> None:
    """The execution's marks removed (a heal's last step)."""
    plans.clean(runner, candidates(runner.deployment, runner.workflow_parameters))


#: by ``Step.act``
ACTIONS = {"heal-decide": decide, "heal-reinstall-allowed": reinstall_allowed, "heal-clean": clean, "healed": healed}
