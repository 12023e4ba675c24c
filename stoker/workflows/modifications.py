"""Deployment modifications: a change of a deployment's instances, started, then finished or rolled back,
as Cloudify's manager makes them (``start_deployment_modification`` and its finish and rollback).

The one place that makes them, for the ``scale`` workflow (``Executions.modify``: started as the execution
starts, finished once it ended well; when it fails, rolled back after what it added and was cut short is taken
back, or left started with ``rollback_if_failed: false``; ``abort_started`` rolls the deployment's started
ones back after uninstalling what they added, before its own starts) and for the REST routes (a plugin's or a
custom workflow's ``ctx.deployment.start_modification(nodes)``, ``cfy deployments modifications rollback``).
What changes is what ``scaling`` decided: a start adds the new instances and the relationships to them, a
finish removes the instances a scale-in takes away (and the relationships to them), a rollback removes what
the start added, puts the node counts back and every other instance as it was (state, runtime properties,
relationships).  A rollback only changes rows, as Cloudify's: the scripts that ran are not undone.

Its ``before_modification`` lists every instance of the deployment as it was, and a rollback's
``before_rollback`` every one as it is then, as Cloudify's record does.
"""

from __future__ import annotations

from typing import Any, Callable

from stoker.blueprint.state import instance_view, tenant_of
from stoker.engine.graph import WalkFailed
from stoker.errors import NotFound
from stoker.store.modification_records import (FINISHED, ROLLEDBACK, STARTED, DeploymentModificationRecords,
                                               ModificationRefused)
from stoker.store.models import iso_time, utcnow
from stoker.workflows.execution_runner import first_failure
from stoker.workflows.scaling import decide_count, roll_back_added, uninstall_added


#: what a rollback puts back of an instance (the manager's sets every attribute of its record)
RESTORED = ("state", "runtime_properties", "relationships")


class Modifications:
    """The deployment modifications of one project, over its ``Executions`` (the deployments' model)."""

    def __init__(self, executions: Any):
        self.executions = executions
        self.records = executions.records
        self.project_id = executions.project_id
        self.rows = DeploymentModificationRecords(executions.store)

    # -- reading --------------------------------------------------------------------------------
    def get(self, modification_id: str) -> dict:
        return view(self._found(modification_id))

    def status(self, modification_id: str) -> str:
        return self._found(modification_id, light=True)["status"]

    def list(self, deployment_id: str | None = None, project_ids: list[str] | None = None) -> list[dict]:
        equal = {"deployment_id": deployment_id} if deployment_id else {}
        return [view(row) for row in self.rows.list(project_ids or [self.project_id], **equal)]

    def scaling_groups(self, deployment_id: str, groups: dict) -> dict:
        """The plan's scaling ``groups`` with Cloudify's counts in their properties: ``current_instances``, what the
        last finished modification of the group made it (else its ``default_instances``), and
        ``planned_instances``, what a started one makes it (else the current)."""
        shown = {}
        modifications = self.rows.list([self.project_id], light=True, deployment_id=deployment_id) if groups else []
        for name, group in groups.items():
            properties = group.get("properties") or {}
            current = properties.get("default_instances", 1)
            planned = None
            for row in modifications:
                asked = (row["modified_nodes"].get(name) or {}).get("instances")
                if asked is not None and row["status"] == FINISHED:
                    current = asked
                elif asked is not None and row["status"] == STARTED:
                    planned = asked
            shown[name] = {**group, "properties": {**properties, "current_instances": current,
                                                   "planned_instances": current if planned is None else planned}}
        return shown

    def _found(self, modification_id: str, light: bool = False) -> dict:
        """The row (``light``: without its ``node_instances``)."""
        found = self.rows.list([self.project_id], light=light, id=modification_id)
        if not found:
            raise NotFound(f"Requested `DeploymentModification` with ID `{modification_id}` was not found")
        return found[0]

    # -- starting, finishing, rolling back ------------------------------------------------------
    def start(self, deployment_id: str, nodes: Any, context: Any = None, created_by: str = "admin") -> dict:
        """Start the modification ``nodes`` asks (``{node or group: {"instances": N}}``, one entry), for user
        ``created_by``."""
        if not isinstance(nodes, dict) or len(nodes) != 1:
            raise ModificationRefused("nodes: give exactly one node or scaling group, as "
                                      "{\"NAME\": {\"instances\": N}} (Stoker modifies one per modification)",
                                      "bad_parameters_error")
        if context is not None and not isinstance(context, dict):
            raise ModificationRefused("context must be a map", "bad_parameters_error")
        [(entity, asked)] = nodes.items()
        instances = asked.get("instances") if isinstance(asked, dict) else None
        if not isinstance(instances, int) or isinstance(instances, bool) or instances < 0:
            raise ModificationRefused(f"nodes.{entity}.instances must be a whole number >= 0, not {instances!r}",
                                      "bad_parameters_error")
        hints = [asked.get(f"removed_ids_{kind}_hint") or [] for kind in ("include", "exclude")]
        if not all(isinstance(hint, list) and all(isinstance(i, str) for i in hint) for hint in hints):
            raise ModificationRefused(f"nodes.{entity}: removed_ids_include_hint and removed_ids_exclude_hint must "
                                      "be lists of node instance ids", "bad_parameters_error")
        deployment_row = self.records.get_deployment(self.project_id, deployment_id)
        decided = decide_count(self.executions.model_of(deployment_row), entity, instances, *hints)
        self.begin(deployment_row, decided, nodes, context or {}, created_by)
        return self.get(decided["modification_id"])

    def begin(self, deployment_row: dict, decided: dict, modified_nodes: dict, context: dict,
              created_by: str = "admin") -> None:
        """Store the started modification that makes ``decided`` (``scaling.decide``), with the instances it
        adds and the relationships to them, made by user ``created_by``; refused while the deployment has a
        started one."""
        counts_before = {row["id"]: row["number_of_instances"] for row in self.records.nodes(deployment_row["pk"])
                         if row["id"] in decided["counts"]}

        def make(read: Callable[[Any], list[dict]]) -> tuple[dict, dict]:
            shown = _Shown(deployment_row["id"], decided, read)
            row = {"id": decided["modification_id"], "project_id": self.project_id, "context": context,
                   "modified_nodes": modified_nodes, "created_at": utcnow(), "created_by": created_by,
                   "node_instances": shown.node_instances(),
                   "changes": {FINISHED: _finish_changes(decided),
                               ROLLEDBACK: _rollback_changes(decided, shown.before, counts_before)}}
            return row, _start_changes(decided)

        self.rows.start(deployment_row["pk"], make)

    def finish(self, modification_id: str) -> dict:
        self.end_well(modification_id)
        return self.get(modification_id)

    def end_well(self, modification_id: str) -> None:
        """Finish it: the instances it removes go (a scale's own finish, which shows nothing)."""
        found = self._found(modification_id, light=True)
        self.rows.end(found, FINISHED, found["changes"][FINISHED])

    def rollback(self, modification_id: str) -> dict:
        self.undo(modification_id)
        return self.get(modification_id)

    def undo(self, modification_id: str) -> None:
        """Roll it back: the instances it added go, node counts are put back, and every other instance is
        put back as ``before_modification`` lists it (state, runtime properties, relationships), as the
        manager's rollback restores them."""
        found = self._found(modification_id)
        listed = found["node_instances"]
        now = [{**instance_view(r), "deployment_id": found["deployment_id"]}
               for r in self.rows.instances(found["deployment_pk"], None)]
        changes = {**found["changes"][ROLLEDBACK], "restored": _restored(listed["before_modification"], now)}
        self.rows.end(found, ROLLEDBACK, changes, {**listed, "before_rollback": now})

    async def roll_back_uninstalled(self, modification_id: str, runner: Any, strict: bool) -> None:
        """Take back the instances the started modification added (by ``runner``: the execution that rolls it
        back), then roll it back, as cloudify-common's ``scale_entity`` does: a failed scale's (what was cut short
        goes back, ``scaling.roll_back_added``; a failure is reported, the rollback goes on) or, ``strict``, one
        ``abort_started`` finds (they are uninstalled, ``scaling.uninstall_added``; a failure raises
        ``WalkFailed``, the modification stays started)."""
        found = self._found(modification_id, light=True)
        runner.writer.event(runner.row("cloudify_log", "Rolling back deployment modification. "
                                       f"[modification_id={modification_id}]", level="warning"))
        added = found["changes"][ROLLEDBACK]["removed"]
        take_back = uninstall_added if strict else roll_back_added
        try:
            await runner.run(take_back(runner.deployment, added))
        except WalkFailed as failed:
            if strict:
                raise
            runner.writer.event(runner.row("cloudify_log", f"Rolling back the added instances failed: "
                                           f"{first_failure(failed)}", level="error"))
            await runner.writer.flush()
        self.undo(modification_id)


def scale_context(execution: dict, deployment_row: dict) -> dict:
    """The context a scale's modification carries, as cloudify-common's workflow handler gives it."""
    return {"blueprint_id": deployment_row["blueprint_id"], "deployment_id": deployment_row["id"],
            "execution_id": execution["id"], "workflow_id": execution["workflow_id"]}


def scale_nodes(decided: dict) -> dict:
    """``modified_nodes`` of a scale, as cloudify-common's ``scale_entity`` asks it."""
    return {decided["entity"]: {"instances": decided["instances"],
                                "removed_ids_exclude_hint": decided.get("exclude", []),
                                "removed_ids_include_hint": decided.get("include", [])}}


class _Shown:
    """Cloudify's ``node_instances`` of a modification: the instances it adds and removes, with those they
    relate to (``extended``/``reduced``: their relationships to them; targets: none), and every instance of the
    deployment before it."""

    def __init__(self, deployment_id: str, decided: dict, read: Callable[[Any], list[dict]]):
        self.deployment_id = deployment_id
        self.decided = decided
        #: the deployment's instance rows, as they are before the modification
        self.before = {row["id"]: row for row in read(None)}
        added = {row["id"] for row in decided["added"]}
        removed = set(decided["removed"])
        targets = ({r["target_id"] for row in decided["added"] + [self.before[i] for i in removed]
                    for r in row["relationships"]} - added - removed)
        self.added, self.removed, self.targets = added, removed, targets

    def node_instances(self) -> dict:
        decided = self.decided
        added_and_related = [self._shown({**row, "version": 1}, "added") for row in decided["added"]]
        added_and_related += [self._shown(self.before[i], "extended", [r for r in relationships
                                                                      if r["target_id"] in self.added])
                              for i, relationships in decided["relinked_before"].items()]
        removed_and_related = [self._shown(self.before[i], "removed") for i in decided["removed"]]
        removed_and_related += [self._shown(self.before[i], "reduced", [r for r in self.before[i]["relationships"]
                                                                       if r["target_id"] in self.removed])
                                for i in decided["relinked_after"]]
        for target in sorted(self.targets):
            related = added_and_related if _points_at(decided["added"], target) else removed_and_related
            if all(i["id"] != target for i in related):
                related.append(self._shown(self.before[target], None, []))
        return {"added_and_related": added_and_related, "removed_and_related": removed_and_related,
                "before_modification": [self._shown(row, None) for row in self.before.values()]}

    def _shown(self, row: dict, modification: str | None, relationships: list | None = None) -> dict:
        shown = {**instance_view(row), "deployment_id": self.deployment_id}
        if relationships is not None:
            shown["relationships"] = relationships
        if modification:
            shown["modification"] = modification
        return shown


def _restored(before: list[dict], now: list[dict]) -> dict[str, dict]:
    """Per instance still there that changed since ``before``, the columns that put it back."""
    current = {row["id"]: row for row in now}
    return {row["id"]: {key: row[key] for key in RESTORED}
            for row in before if row["id"] in current and any(row[k] != current[row["id"]][k] for k in RESTORED)}


def _points_at(rows: list[dict], target: str) -> bool:
    return any(r["target_id"] == target for row in rows for r in row["relationships"])


def _start_changes(decided: dict) -> dict:
    """The rows' changes a start makes (``execution_records.modify``'s arguments)."""
    return {"added": decided["added"], "removed": [], "relinked": decided["relinked_before"],
            "counts": decided["counts"] if decided["added"] else {}}


def _finish_changes(decided: dict) -> dict:
    return {"added": [], "removed": decided["removed"], "relinked": decided["relinked_after"],
            "counts": decided["counts"] if decided["removed"] else {}}


def _rollback_changes(decided: dict, before: dict, counts_before: dict) -> dict:
    return {"added": [], "removed": [row["id"] for row in decided["added"]],
            "relinked": {i: before[i]["relationships"] for i in decided["relinked_before"]},
            "counts": counts_before if decided["added"] else {}}


def view(row: dict) -> dict:
    """A modification as cloudify-rest-client reads it."""
    return {"id": row["id"], "deployment_id": row["deployment_id"], "status": row["status"],
            "modified_nodes": row["modified_nodes"], "node_instances": row["node_instances"],
            "context": row["context"], "created_at": iso_time(row["created_at"]), "ended_at": iso_time(row["ended_at"]),
            "tenant_name": tenant_of(row["project_id"]), "visibility": "tenant", "private_resource": False,
            "resource_availability": "tenant", "created_by": row["created_by"]}
