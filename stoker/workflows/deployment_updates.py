"""Deployment updates (``stoker deployment update``, ``cfy deployments update``): a deployment moved onto a new
blueprint and/or new inputs, by an ``update`` execution (``updating``) on the deployment.

``plan_update`` makes the new deployment plan (the new blueprint's, with the old inputs under the new ones),
the steps between the plans (``plan_diff``), the instances kept, added and removed (``relayout``), and the
rows' changes before and after the execution (``DeploymentRowChanges``); a preview stops there.  Otherwise the
execution starts as any other, so it is refused while the deployment runs one, and its memo carries the plan.
"""

from __future__ import annotations

import copy
import uuid
from typing import Any, Callable

from stoker import secretbox
from stoker.blueprint.deployment import prepare
from stoker.blueprint.deployments import hides_inputs, seal_if, stored_nodes, stored_plan
from stoker.blueprint.namespaces import SEPARATOR, prefix_operation
from stoker.blueprint.plan_diff import by_name, match_relationships, modified_entity_ids, nodes_to_reinstall, plan_steps
from stoker.blueprint.relayout import relayout
from stoker.blueprint.secrets import MASK
from stoker.blueprint.state import readable_secret, tenant_of
from stoker.errors import NotFound
from stoker.started import Started, in_thread
from stoker.store.deployment_updates import DeploymentUpdateRecords
from stoker.store.models import utcnow
from stoker.workflows.updating import WORKFLOW

#: the flags cfy sends, with Cloudify's defaults; those the workflow reads: skip_install, skip_uninstall,
#: skip_reinstall, skip_drift_check, skip_heal, force_reinstall, ignore_failure, install_first (and
#: reinstall_list, force: beside a running execution); the others are accepted and kept as the execution's
#: parameters
FLAGS = {"skip_install": False, "skip_uninstall": False, "skip_reinstall": False, "skip_drift_check": False,
         "skip_heal": False, "force_reinstall": False, "ignore_failure": False, "install_first": False,
         "update_plugins": True, "auto_correct_types": False, "reevaluate_active_statuses": False}
#: the namespace a removed node's scripts are read from while the update runs (the old blueprint's files)
OLD_FILES = "stoker-update-old"
#: an update's state, by its execution's status
STATES = {"terminated": "successful", "failed": "failed", "cancelled": "failed"}


class DeploymentUpdates:
    """The updates of one project's deployments, over its ``Executions``."""

    def __init__(self, executions: Any):
        self.executions = executions
        self.records = executions.records
        self.project_id = executions.project_id
        self.rows = DeploymentUpdateRecords(executions.store)

    def update(self, deployment_id: str, blueprint_id: str | None = None, inputs: dict | None = None,
               preview: bool = False, **options: Any) -> dict:
        """Run the update to its end, in this process (a preview: compute it only); the update as it ended."""
        found, started = self.begin(deployment_id, blueprint_id, inputs, preview, **options)
        if started is not None:
            started.wait()
        return self.get(found["id"]) if started is not None else found

    def begin(self, deployment_id: str, blueprint_id: str | None = None, inputs: dict | None = None,
              preview: bool = False, created_by: str = "admin", submit: Callable = in_thread,
              timeout: float | None = None, **options: Any) -> tuple[dict, Started | None]:
        """Plan the update; unless ``preview``, store it and start its execution (through ``submit``): (the
        update once its execution is stored, the execution's handle); Conflict while the deployment runs one."""
        deployment_row = self.records.get_deployment(self.project_id, deployment_id)
        blueprint = self.records.get_blueprint(self.project_id, blueprint_id or deployment_row["blueprint_id"])
        params = {**FLAGS, **{k: v for k, v in options.items() if k in FLAGS or k in ("workflow_id", "force",
                                                                                      "reinstall_list")}}
        row, decided = self.planned(deployment_row, blueprint, inputs or {}, params, created_by,
                                    options.get("runtime_only_evaluation"))
        if preview:
            return self.view({**row, "execution_id": None}, "preview"), None
        parameters = {**params, "update_id": row["id"], "blueprint_id": blueprint["id"], "inputs": inputs or {},
                      "preview": False}
        started = self.executions.begun(
            lambda service: service.start(WORKFLOW, deployment_id, parameters, force=bool(params.get("force")),
                                          allow_custom_parameters=True, decided={WORKFLOW: decided},
                                          created_by=created_by),
            submit, timeout)
        if started.id is not None:
            self.rows.add({**row, "execution_id": started.id})
            return self.get(row["id"]), started
        return self.view({**row, "execution_id": None}, "failed"), started

    def planned(self, deployment_row: dict, blueprint: dict, inputs: dict, params: dict, created_by: str,
                runtime_only: bool | None = None) -> tuple[dict, dict]:
        """(the update's row, what its execution does) of moving the deployment onto ``blueprint`` (a row, or
        one whose plan is about to be: a plugins update's) with ``inputs``; nothing stored."""
        if runtime_only is None:
            runtime_only = deployment_row["runtime_only_evaluation"]
        row, decided = plan_update(self.records, self.project_id, deployment_row, blueprint, inputs,
                                   bool(runtime_only))
        row.update(id=f"{deployment_row['id']}-{uuid.uuid4()}", project_id=self.project_id, created_by=created_by,
                   created_at=utcnow(), parameters=params, runtime_only_evaluation=bool(runtime_only),
                   state="updating")
        return row, decided

    def get(self, update_id: str) -> dict:
        found = self.rows.list([self.project_id], id=update_id)
        if not found:
            raise NotFound(f"Requested `DeploymentUpdate` with ID `{update_id}` was not found")
        return self.view(found[0])

    def list(self, deployment_id: str | None = None, project_ids: list[str] | None = None) -> list[dict]:
        equal = {"deployment_id": deployment_id} if deployment_id else {}
        return [self.view(row) for row in self.rows.list(project_ids or [self.project_id], **equal)]

    def view(self, row: dict, state: str | None = None) -> dict:
        """The update as cloudify-rest-client reads it (hidden inputs masked by their sealing)."""
        if state is None:
            state = self._state(row)
        plan = secretbox.unseal(row["deployment_plan"])
        hidden = {name for name, d in (plan.get("input_definitions") or {}).items() if d.get("hidden")}
        return {"id": row["id"], "deployment_id": row["deployment_id"], "state": state,
                "old_blueprint_id": row["old_blueprint_id"], "new_blueprint_id": row["new_blueprint_id"],
                "old_inputs": _masked(row["old_inputs"], hidden), "new_inputs": _masked(row["new_inputs"], hidden),
                "steps": row["steps"], "modified_entity_ids": row["modified_entity_ids"],
                "deployment_plan": plan, "execution_id": row["execution_id"],
                "runtime_only_evaluation": row["runtime_only_evaluation"], "created_by": row["created_by"],
                "created_at": row["created_at"].replace(tzinfo=None).isoformat(timespec="milliseconds") + "Z",
                "tenant_name": tenant_of(row["project_id"]), "visibility": "tenant", "preview": state == "preview",
                "recursive_dependencies": [], "schedules_to_create": [], "schedules_to_delete": [],
                "labels_to_create": [], "central_plugins_to_install": [], "central_plugins_to_uninstall": [],
                "deployment_update_node_instances": None, "deployment_update_nodes": None}

    def _state(self, row: dict) -> str:
        try:
            status = self.executions.get(row["execution_id"])["status"]
        except NotFound:  # a plugins update's (no execution of its own), or the deployment deleted since
            return row["state"]
        return STATES.get(status, "updating")


def _masked(values: Any, hidden: set[str]) -> dict:
    """Input values as shown: a hidden input's masked, as ``Deployments.inputs`` shows it."""
    return {k: (MASK if k in hidden else v) for k, v in (secretbox.unseal(values) or {}).items()}


def plan_update(records: Any, project_id: str, deployment_row: dict, blueprint: dict, inputs: dict,
                runtime_only: bool) -> tuple[dict, dict]:
    """(the update's row less its ids, what its execution does: ``updating``'s memo) of moving the deployment
    onto ``blueprint`` with ``inputs`` over its own; nothing is stored."""
    old_plan = secretbox.unseal(deployment_row["plan"])
    old_inputs = secretbox.unseal(deployment_row["inputs"])
    old_nodes = {row["id"]: secretbox.unseal(row["definition"]) for row in records.nodes(deployment_row["pk"])}
    new_plan = blueprint["plan"]
    kept_inputs = {k: v for k, v in old_inputs.items() if k in new_plan["inputs"]}
    creator = deployment_row["created_by"]
    secret_exists = lambda name: readable_secret(records, project_id, name, creator) is not None  # noqa: E731
    dep = prepare(new_plan, {**kept_inputs, **inputs}, runtime_only, secret_exists)
    hidden = hides_inputs(new_plan)
    steps = plan_steps({**old_plan, "nodes": list(old_nodes.values())}, dep)
    instances = records.node_instances(deployment_row["pk"])
    layout = relayout(instances, dep["node_instances"])
    had = {row["id"]: row["relationships"] or [] for row in instances}
    final_nodes = {row["id"]: row for row in stored_nodes(dep, hidden)}
    final_plan = stored_plan(dep, new_plan)
    moving = blueprint["pk"] != deployment_row["blueprint_pk"]
    removed_nodes = sorted(set(old_nodes) - set(final_nodes))
    during = copy.deepcopy(final_plan)
    if moving:  # the removed nodes' scripts are the old blueprint's
        during["namespaces_mapping"] = {**(during.get("namespaces_mapping") or {}),
                                        OLD_FILES: deployment_row["blueprint_id"]}
    model_nodes = _model_nodes(old_nodes, by_name(dep["nodes"]), removed_nodes, moving)
    lost: dict[str, list] = {}
    for source, rel in layout["unlinked"]:
        lost.setdefault(source, []).append(rel)
    relinked, unlinked = {}, []  # only the instances whose relationships change are written
    for instance_id, relationships in layout["relationships"].items():
        gone = lost.get(instance_id, [])
        if relationships + gone != had[instance_id]:
            relinked[instance_id] = relationships + gone
        unlinked += [[instance_id, len(relationships) + n] for n in range(len(gone))]
    final = {i: rels for i, rels in layout["relationships"].items() if rels != had[i]}
    deployment = {"blueprint_pk": blueprint["pk"], "inputs": seal_if(dep["inputs"], hidden),
                  "runtime_only_evaluation": runtime_only}
    before = {"added": layout["added"], "removed": [], "relinked": relinked, "counts": {},
              "nodes": {name: {**final_nodes.get(name, {"type": node["type"], "host_id": None,
                                                         "number_of_instances": 0}),
                               "definition": seal_if(node, hidden)} for name, node in model_nodes.items()},
              "removed_nodes": [], "deployment": {**deployment, "plan": seal_if(during, hidden)}}
    after = {"added": [], "removed": layout["removed"], "relinked": final, "counts": {},
             "nodes": final_nodes, "removed_nodes": removed_nodes,
             "deployment": {**deployment, "plan": seal_if(final_plan, hidden)}}
    decided = {"before": before, "after": after, "removed": layout["removed"], "unlinked": unlinked,
               "established": layout["established"], "reinstall_nodes": sorted(nodes_to_reinstall(steps)),
               # the deployment as planned on: its update is refused if it changed before the execution starts
               "planned_on": str(deployment_row["updated_at"])}
    row = {"deployment_id": deployment_row["id"], "old_blueprint_id": deployment_row["blueprint_id"],
           "new_blueprint_id": blueprint["id"], "old_inputs": deployment_row["inputs"],
           "new_inputs": seal_if(dep["inputs"], hidden), "steps": steps,
           "modified_entity_ids": modified_entity_ids(steps),
           "deployment_plan": seal_if({**final_plan, "nodes": dep["nodes"]}, hidden)}
    return row, decided


def _model_nodes(old: dict, new: dict, removed: list[str], moving: bool) -> dict[str, dict]:
    """The node definitions while the update runs: the new ones, each with the old relationships it loses
    (their unlink operations), and the removed ones (their scripts from the old blueprint's files)."""
    nodes = {}
    for name, node in new.items():
        before = (old.get(name) or {}).get("relationships") or []
        matched = match_relationships(before, node.get("relationships") or [])
        lost = [_old_files({"relationships": [rel]}, moving)["relationships"][0]
                for index, rel in enumerate(before) if index not in matched]
        nodes[name] = {**node, "relationships": list(node.get("relationships") or []) + lost} if lost else node
    for name in removed:
        nodes[name] = _old_files(old[name], moving)
    return nodes


def _old_files(node: dict, moving: bool) -> dict:
    """A copy of ``node`` whose scripts run from the old blueprint's files (when the blueprint changes)."""
    node = copy.deepcopy(node)
    if moving:
        operations = list((node.get("operations") or {}).values()) + [
            op for rel in node.get("relationships") or [] for side in ("source_operations", "target_operations")
            for op in (rel.get(side) or {}).values()]
        for operation in operations:
            prefix_operation(operation, OLD_FILES + SEPARATOR)
    return node
