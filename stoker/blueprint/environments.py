"""Environments and services: deployments linked by ``csys-obj-parent`` labels, as Cloudify's manager links
them (its "label dependencies").

A label naming a parent needs the parent to exist and to be no descendant of the child; the parent then
carries a ``csys-consumer-id`` label naming the child (what ``get_consumers`` reads) until the link goes
(the label removed, the child deleted). A parent is not deleted while it has children. A deployment's
status sums up its children's: each child counts as a sub-environment (label ``csys-obj-type:
environment``) or a sub-service, with its own children's counts, and the worst status wins.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Callable, Iterable

from stoker.errors import Conflict, NotFound, StokerError

PARENT_LABEL = "csys-obj-parent"
TYPE_LABEL = "csys-obj-type"
CONSUMER_LABEL = "csys-consumer-id"
#: what a deployment shows as its ``environment_type``
ENV_TYPE_LABEL = "csys-env-type"
#: how many of a parent's children a refused delete names (as Cloudify's manager)
NAMED_CHILDREN = 3
#: an execution's status -> what Cloudify calls a deployment's latest execution status
EXECUTION_SUMMARY = {"terminated": "completed", "failed": "failed", "cancelled": "cancelled"}
#: deployment statuses, worst last
RANK = {None: 0, "good": 1, "in_progress": 2, "requires_attention": 3}


class ParentNotFound(NotFound):
    cloudify_code = "deployment_parent_not_found_error"


class CyclicParents(Conflict):
    cloudify_code = "conflict_error"


class HasChildren(StokerError):
    code = "dependent-exists"
    cloudify_code = "dependent_exists_error"


def parents_in(labels: Iterable[tuple[str, str]]) -> list[str]:
    return sorted({value for key, value in labels if key == PARENT_LABEL and value})


def check_parents(records: Any, project_id: str, deployment_id: str, parents: list[str]) -> None:
    """Each parent exists in the tenant, and none is the deployment or one of its descendants."""
    if not parents:
        return
    missing = [parent for parent in parents if not records.deployment_exists(project_id, parent)]
    if missing:
        raise ParentNotFound(f"Environment referenced by `{PARENT_LABEL}` not found: {','.join(missing)}")
    up = defaultdict(set)
    for child, parent in records.labelled(project_id, PARENT_LABEL):
        up[child].add(parent)
    ancestors, todo = set(), list(parents)
    while todo:
        current = todo.pop()
        if current not in ancestors:
            ancestors.add(current)
            todo.extend(up[current])
    if deployment_id in ancestors:
        raise CyclicParents(f"cyclic dependencies: {deployment_id}")


def link(records: Any, project_id: str, child: str, parents: list[str]) -> None:
    """Each parent now counts ``child`` among its consumers."""
    for parent in parents:
        records.add_labels(records.get_deployment(project_id, parent)["pk"], [(CONSUMER_LABEL, child)])


def unlink(records: Any, project_id: str, child: str, parents: list[str]) -> None:
    """The parents (those still there) no longer count ``child`` among their consumers."""
    for parent in parents:
        if records.deployment_exists(project_id, parent):
            records.delete_labels(records.get_deployment(project_id, parent)["pk"], CONSUMER_LABEL, child)


def children_of(records: Any, project_id: str, deployment_id: str) -> list[str]:
    return [child for child, parent in records.labelled(project_id, PARENT_LABEL) if parent == deployment_id]


def check_childless(records: Any, project_id: str, deployment_id: str) -> None:
    """Refuse to delete a parent: its children would be orphans (Cloudify's ``dependent_exists_error``)."""
    children = children_of(records, project_id, deployment_id)
    if children:
        named = "\n".join(f"[{n}] Deployment `{deployment_id}` is the parent of deployment {child}"
                          for n, child in enumerate(children[:NAMED_CHILDREN], 1))
        raise HasChildren(f"Can't delete deployment {deployment_id} - the following existing installations "
                          f"depend on it:\n{named}")


def worst(*statuses: str | None) -> str | None:
    return max(statuses, key=RANK.__getitem__, default=None)


def own_status(latest_execution_status: str | None, installation_status: str) -> str:
    """A deployment's status by itself: in progress while its latest execution runs; needing attention
    when that failed or not all its node instances are started; good otherwise."""
    if latest_execution_status not in (None, *EXECUTION_SUMMARY.values()):
        return "in_progress"
    if latest_execution_status == "failed" or installation_status == "inactive":
        return "requires_attention"
    return "good"


def summaries(records: Any, project_id: str, wanted: Iterable[str],
              latest_of: Callable[[str], dict | None]) -> dict[str, dict]:
    """Per deployment of ``wanted``: its latest execution, its and its installation's status, its counts of
    sub-services and sub-environments (all generations), their worst statuses and its own status summed up
    with theirs; ``latest_of(id)``: a deployment's latest execution (None: none)."""
    children = defaultdict(list)
    for child, parent in records.labelled(project_id, PARENT_LABEL):
        children[parent].append(child)
    environments = {d for d, value in records.labelled(project_id, TYPE_LABEL) if value == "environment"}
    inactive = records.not_all_started(project_id)
    found: dict[str, dict] = {}

    def of(deployment_id: str, seen: frozenset) -> dict:
        if deployment_id in found:
            return found[deployment_id]
        latest = latest_of(deployment_id)
        execution = EXECUTION_SUMMARY.get(latest["status"], "in_progress") if latest else None
        installation = "inactive" if deployment_id in inactive else "active"
        counts = {"environments": 0, "services": 0}
        statuses: dict[str, list] = {"environments": [], "services": []}
        for child in children.get(deployment_id, ()):
            if child in seen:
                continue  # (links made before cycles were refused)
            sub = of(child, seen | {child})
            for kind in ("environments", "services"):
                counts[kind] += sub[f"sub_{kind}_count"]
                statuses[kind].append(sub[f"sub_{kind}_status"])
            kind = "environments" if child in environments else "services"
            counts[kind] += 1
            statuses[kind].append(sub["deployment_status"])
        services, envs = worst(*statuses["services"]), worst(*statuses["environments"])
        found[deployment_id] = {
            "latest_execution": latest["id"] if latest else None, "latest_execution_status": execution,
            "latest_execution_workflow_id": latest["workflow_id"] if latest else None, "installation_status": installation,
            "deployment_status": worst(own_status(execution, installation), services, envs),
            "sub_services_count": counts["services"], "sub_environments_count": counts["environments"],
            "sub_services_status": services, "sub_environments_status": envs,
            "has_sub_deployments": bool(counts["services"] or counts["environments"])}
        return found[deployment_id]

    return {deployment_id: of(deployment_id, frozenset({deployment_id})) for deployment_id in wanted}
