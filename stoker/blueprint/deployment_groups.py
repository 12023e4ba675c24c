"""Deployment groups (Cloudify's ``/deployment-groups``): named sets of a tenant's deployments, with the
blueprint, inputs and labels of the deployments the group makes.

Members join by id, by filter rules (labels, attributes), from another group, or as new deployments of
the group's default blueprint (ids from a template: ``{uuid}``, ``{count}``, ``{group_id}``,
``{blueprint_id}``, ``{site_name}``, as the manager fills them).  A group's labels are given to every
deployment that joins it, and a change of them reaches its deployments.
"""

from __future__ import annotations

import uuid
from typing import Any

from stoker.blueprint.blueprint_errors import BlueprintError
from stoker.blueprint.deployments import Deployments
from stoker.blueprint.filter_rules import checked, matches
from stoker.blueprint.saved_filters import SavedFilters
from stoker.errors import Conflict, NotFound
from stoker.store.group_records import GroupRecords
from stoker.store.locks import execution_gone

#: a new deployment's id when neither its spec nor the blueprint's ``deployment_settings.id_template`` gives one
DEFAULT_ID_TEMPLATE = "{group_id}-{uuid}"


def label_pairs(labels: Any) -> list[tuple[str, str]]:
    """``[{"key": k, "value": v}]`` or ``[{k: v}]`` as (key lower-cased, value) pairs."""
    pairs = []
    for entry in labels or []:
        items = [(entry["key"], entry["value"])] if isinstance(entry, dict) and set(entry) == {"key", "value"} \
            else list(entry.items()) if isinstance(entry, dict) else []
        if not items:
            raise BlueprintError(f"a label is {{key: value}}, not {entry!r}", code="invalid-label")
        pairs.extend((str(k).lower(), str(v)) for k, v in items)
    return list(dict.fromkeys(pairs))


def member_ids(deployments: Deployments, group_id: str) -> set[str]:
    """The ids of the deployments in the tenant's group ``group_id`` (none when it has no such group)."""
    try:
        group = GroupRecords(deployments.records).deployment_group(deployments.project_id, group_id)
    except NotFound:
        return set()
    return set(group["deployment_ids"])


class DeploymentGroups:
    """A tenant's deployment groups, over its deployments."""

    def __init__(self, deployments: Deployments, created_by: str = "admin"):
        self.deployments = deployments
        self.project_id = deployments.project_id
        self.records = GroupRecords(deployments.records)
        self.created_by = created_by

    def get(self, group_id: str) -> dict:
        return self._view(self.records.deployment_group(self.project_id, group_id))

    def list(self) -> list[dict]:
        return [self._view(row) for row in self.records.deployment_groups(self.project_id)]

    def put(self, group_id: str, spec: dict) -> dict:
        """Create the group or change it: its attributes, labels, and (``deployment_ids``, ``filter_id``,
        ``filter_rules`` or ``deployments_from_group`` given) members set anew; ``new_deployments`` added."""
        fields = {name: spec[key] for key, name in (("description", "description"), ("blueprint_id",
                  "default_blueprint_id"), ("default_inputs", "default_inputs")) if spec.get(key) is not None}
        if "default_blueprint_id" in fields:
            self.deployments.records.get_blueprint(self.project_id, fields["default_blueprint_id"])
        old = self._labels_of(group_id)
        if spec.get("labels") is not None:
            fields["labels"] = [{"key": k, "value": v} for k, v in label_pairs(spec["labels"])]
        group = self.records.put_deployment_group(self.project_id, group_id, self.created_by, **fields)
        if "labels" in fields:
            self._relabel(group, old, label_pairs(fields["labels"]))
        replace = spec.get("deployment_ids") is not None or spec.get("filter_id") is not None \
            or bool(spec.get("deployments_from_group"))  # the manager's rule: filter_rules add
        self._add(group, spec, replace)
        return self.get(group_id)

    def change(self, group_id: str, add: dict | None, remove: dict | None) -> dict:
        """Extend the group (``add``: the members of a ``put``) and shrink it (``remove``: ids, filters, group)."""
        group = self.records.deployment_group(self.project_id, group_id)
        if add:
            self._add(group, add, replace=False)
        if remove:
            self.records.set_members(group["pk"], remove=self._chosen(remove))
        return self.get(group_id)

    def delete(self, group_id: str, delete_deployments: bool = False) -> None:
        """Delete the group (with ``delete_deployments``, its deployments first: none may be running)."""
        group = self.records.deployment_group(self.project_id, group_id)
        if delete_deployments:
            self.records.check_idle(group["deployment_pks"], execution_gone)  # none deleted while one runs
            for deployment_id in group["deployment_ids"]:
                self.deployments.delete(deployment_id)
        self.records.delete_deployment_group(group["pk"])

    # -- members ----------------------------------------------------------------------------------
    def _add(self, group: dict, spec: dict, replace: bool) -> None:
        chosen = self._chosen(spec)
        labels = label_pairs(group["labels"])
        if labels:
            for pk in chosen:
                self.deployments.records.add_labels(pk, labels)
        self.records.set_members(group["pk"], add=chosen, replace=replace)
        made = [self._make(group, new) for new in spec.get("new_deployments") or []]
        if made:
            self.records.set_members(group["pk"], add=made)

    def _chosen(self, spec: dict) -> list[int]:
        """The pks of the deployments ``spec`` names: by id, by filter, from another group."""
        records = self.deployments.records
        chosen = [records.get_deployment(self.project_id, d)["pk"] for d in spec.get("deployment_ids") or []]
        rules = checked(spec.get("filter_rules") or [])
        if spec.get("filter_id") is not None:
            rules += SavedFilters(records, self.project_id).rules(spec["filter_id"])
        if rules:
            chosen += [row["pk"] for row in records.list_deployments(self.project_id)
                       if matches(rules, {**row, "site_name": None},
                                  [(label["key"], label["value"]) for label in records.labels(row["pk"])])]
        if spec.get("deployments_from_group"):
            chosen += self.records.deployment_group(self.project_id, spec["deployments_from_group"])["deployment_pks"]
        return list(dict.fromkeys(chosen))

    def _make(self, group: dict, spec: dict) -> int:
        """A new deployment of the group's default blueprint (its inputs over the group's, its labels and
        the group's); its pk."""
        if not group["default_blueprint_id"]:
            raise Conflict(f"Cannot create deployments: group {group['id']} has no default blueprint set")
        blueprint = self.deployments.records.get_blueprint(self.project_id, group["default_blueprint_id"])
        deployment_id = self._new_id(group, blueprint, spec)
        inputs = {**(group["default_inputs"] or {}), **(spec.get("inputs") or {})}
        labels = label_pairs(spec.get("labels")) + label_pairs(group["labels"])
        self.deployments.create(deployment_id, blueprint["id"], inputs, labels, spec.get("display_name"),
                                bool(spec.get("runtime_only_evaluation")), created_by=self.created_by)
        return self.deployments.records.get_deployment(self.project_id, deployment_id)["pk"]

    def _new_id(self, group: dict, blueprint: dict, spec: dict) -> str:
        """The id template filled as the manager fills it; refused when nothing in it varies."""
        template = spec.get("id") or ((blueprint["plan"].get("deployment_settings") or {}).get("id_template")) \
            or DEFAULT_ID_TEMPLATE
        varies = bool(spec.get("id"))
        count = self.records.count_created(group["pk"]) if "{count}" in template else None
        for name, value, variable in (("{group_id}", group["id"], False), ("{uuid}", uuid.uuid4(), True),
                                      ("{blueprint_id}", blueprint["id"], False), ("{count}", count, True),
                                      ("{site_name}", spec.get("site_name", ""), False)):
            if name in template:
                template = template.replace(name, str(value))
                varies = varies or variable
        if not varies:
            raise Conflict("When creating new deployments in a group, deployment ID template must contain a "
                           "variable part, eg. `{uuid}`")
        return template

    # -- labels -----------------------------------------------------------------------------------
    def _labels_of(self, group_id: str) -> list[tuple[str, str]]:
        try:
            return label_pairs(self.records.deployment_group(self.project_id, group_id)["labels"])
        except NotFound:
            return []

    def _relabel(self, group: dict, old: list[tuple[str, str]], new: list[tuple[str, str]]) -> None:
        """The group's deployments gain its new labels and lose those it dropped."""
        records = self.deployments.records
        for pk in group["deployment_pks"]:
            records.add_labels(pk, [pair for pair in new if pair not in old])
            for key, value in old:
                if (key, value) not in new:
                    records.delete_labels(pk, key, value)

    @staticmethod
    def _view(row: dict) -> dict:
        return {"id": row["id"], "description": row["description"],
                "default_blueprint_id": row["default_blueprint_id"], "default_inputs": row["default_inputs"] or {},
                "labels": row["labels"] or [], "deployment_ids": row["deployment_ids"],
                "created_at": row["created_at"].isoformat(), "created_by": row["created_by"],
                "creation_counter": row["creation_counter"]}
