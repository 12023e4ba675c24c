"""``OS::Heat::ResourceGroup``: ``count`` copies of one resource definition, as a nested stack.

Members are named "0", "1", ... skipping names that removal policies took
out (they are never reused, as in Heat), so scaling by update touches only
the members that come or go.  ``rolling_update`` updates changed members in
batches; ``batch_create`` creates them in batches.
"""

from __future__ import annotations

import copy
import itertools
from typing import Any

from stoker.resources.nested_stack import NestedStackResource, nested_resource_attribute, template_from_data
from stoker.functions.references import select_path
from stoker.resources import attributes, properties
from stoker.resources.builtin.staged import StagedNested
from stoker.errors import ResourcePending
from stoker.resources.exceptions import InvalidTemplateAttribute
from stoker.resources.support import SupportStatus
from stoker.constraints import AllowedValues, Range
from stoker.template.template import Template

BLACKLIST_KEY = "removed"
S = properties.Schema


def _members(resource) -> list:
    """The members of a group-like resource's nested stack, in index order."""
    child = resource.child()
    if child is None:
        return []
    return [child.resources[n] for n in sorted(child.resources, key=_index)]


def member_attribute(resource, key: str, path: tuple) -> Any:
    """A group-like resource's attribute: ``refs``, ``refs_map``, ``attributes``,
    ``resource.N(.attr)``, ``show``, or any member attribute as a list."""
    members = _members(resource)
    if key == "refs":
        value = [m.FnGetRefId() for m in members]
    elif key == "refs_map":
        value = {m.name: m.FnGetRefId() for m in members}
    elif key == "attributes":
        if not path:
            raise InvalidTemplateAttribute(resource=resource.name, key=key)
        return {m.name: m.FnGetAtt(path[0], *path[1:]) for m in members}
    elif key.startswith("resource."):
        return nested_resource_attribute(resource, key, path)
    elif key == attributes.SHOW:
        value = {"refs": [m.FnGetRefId() for m in members]}
    else:
        return [m.FnGetAtt(key, *path) for m in members]
    return select_path(value, list(path)) if path else value


class ResourceGroup(StagedNested, NestedStackResource):
    """Creates ``count`` identically configured resources in a nested stack.

    ``%index%`` (or ``index_var``) in the member properties becomes each
    member's index.  Attributes: ``refs``, ``refs_map``, ``attributes``,
    ``removed_rsrc_list``, ``resource.N`` and ``resource.N.attr``, and any
    member attribute as a list over the members.
    """

    support_status = SupportStatus(version="2014.1")

    properties_schema = {
        "count": S(S.INTEGER, "The number of resources to create.", default=1,
                   constraints=[Range(min=0)], update_allowed=True),
        "index_var": S(S.STRING, "A variable replaced with the member's index in its properties.",
                       default="%index%", update_allowed=True),
        "resource_def": S(S.MAP, "The definition of each member.", required=True, update_allowed=True,
                          schema={
                              "type": S(S.STRING, "The member's resource type.", required=True),
                              "properties": S(S.MAP, "The member's properties."),
                              "metadata": S(S.MAP, "The member's metadata."),
                          }),
        "removal_policies": S(S.LIST, "Members to remove first when scaling down.", default=[],
                              update_allowed=True,
                              schema=S(S.MAP, schema={
                                  "resource_list": S(S.LIST, "Member names or physical ids.", default=[]),
                              })),
        "removal_policies_mode": S(S.STRING, "append: add to the removed list; update: replace it.",
                                   default="append", update_allowed=True,
                                   constraints=[AllowedValues(["append", "update"])]),
    }
    update_policy_schema = {
        "rolling_update": S(S.MAP, "How an update replaces changed members, in batches.", schema={
            "min_in_service": S(S.INTEGER, "Members kept in service during the update.", default=0,
                                constraints=[Range(min=0)]),
            "max_batch_size": S(S.INTEGER, "Members updated at once.", default=1, constraints=[Range(min=1)]),
            "pause_time": S(S.NUMBER, "Seconds between two batches.", default=0, constraints=[Range(min=0)]),
        }),
        "batch_create": S(S.MAP, "How a create makes the members, in batches.", schema={
            "max_batch_size": S(S.INTEGER, "Members created at once.", default=1, constraints=[Range(min=1)]),
            "pause_time": S(S.NUMBER, "Seconds between two batches.", default=0, constraints=[Range(min=0)]),
        }),
    }
    attributes_schema = {
        "refs": attributes.Schema("The members' reference ids.", type=attributes.Schema.LIST),
        "refs_map": attributes.Schema("Member name to reference id.", type=attributes.Schema.MAP),
        "attributes": attributes.Schema("Member name to the given attribute.", type=attributes.Schema.MAP),
        "removed_rsrc_list": attributes.Schema("Names removed by removal policies.",
                                               type=attributes.Schema.LIST),
    }

    @classmethod
    def has_attribute(cls, name: str) -> bool:
        return True  # any member attribute may be asked for, as a list

    # -- the members ---------------------------------------------------------------------
    def _blacklist(self) -> list[str]:
        props = self.properties
        current = list(self._data.get(BLACKLIST_KEY, []))
        listed = [str(item) for policy in props["removal_policies"] or []
                  for item in policy.get("resource_list") or []]
        refs = {}
        child = self.child() if listed else None
        if child is not None:  # policies may name members by physical id
            refs = {str(_quiet_ref(r)): n for n, r in child.resources.items()}
        named = {refs.get(item, item) for item in listed}
        if props["removal_policies_mode"] == "update":
            return sorted(named, key=_index)
        return sorted(set(current) | named, key=_index)

    def member_names(self) -> list[str]:
        blacklist = set(self._blacklist())
        names = (str(i) for i in itertools.count() if str(i) not in blacklist)
        return list(itertools.islice(names, self.properties["count"]))

    def _member(self, index: str) -> dict:
        definition = self.properties["resource_def"]
        index_var = self.properties["index_var"]
        member: dict[str, Any] = {"type": definition["type"]}
        if definition.get("properties"):
            member["properties"] = _substitute(definition["properties"], index_var, index)
        if definition.get("metadata"):
            member["metadata"] = copy.deepcopy(definition["metadata"])
        return member

    def group_template(self, names: list[str]) -> dict:
        return {"heat_template_version": "2015-04-30",
                "resources": {name: self._member(name) for name in names}}

    def child_template(self, names: list[str] | None = None) -> Template:
        if names is None and self._fixed_template is not None:
            return self._fixed_template  # one batch of a batched create or rolling update
        data = self.group_template(self.member_names() if names is None else names)
        return template_from_data(data, self.stack.definition.template.files, self.name)

    def child_parameters(self) -> dict:
        return {}

    def validation_template(self) -> Template:
        """As Heat: a group of one member."""
        return self.child_template(["0"])

    def nested_validation_template(self) -> Template | None:
        """As Heat: member "0" only, and nothing when the group is empty (size 0 turns a
        feature off without its member being checked); while the member's values wait for
        other resources, its type at least."""
        if self.properties["count"] <= 0:
            return None
        try:
            return self.validation_template()
        except ResourcePending:
            self.validate_member_type("resource_def")
            raise

    # -- life cycle ------------------------------------------------------------------------
    async def handle_create(self) -> Any:
        self.data_set(BLACKLIST_KEY, self._blacklist())
        policy = (self._resolve(self.t.update_policy) or {}).get("batch_create")
        names = self.member_names()
        if not policy or not names:
            return await super().handle_create()
        size = max(1, int(policy.get("max_batch_size", 1)))
        pause = float(policy.get("pause_time", 0))
        # the first batch creates the nested stack, each one after it updates it to one batch more
        stages = [(pause if end > size else 0, [(n, self._member(n)) for n in names[:end]])
                  for end in range(size, len(names) + size, size)]
        return await self.run_stages(stages, create=True)

    async def handle_update(self, json_snippet: Any, tmpl_diff: dict, prop_diff: dict) -> Any:
        self.data_set(BLACKLIST_KEY, self._blacklist())
        self.forget_stages()
        rolling = (self._resolve(self.t.update_policy) or {}).get("rolling_update")
        child = self.child()
        if not rolling or child is None or child.definition is None:
            return await super().handle_update(json_snippet, tmpl_diff, prop_diff)
        names = self.member_names()
        new = self.group_template(names)["resources"]
        old = (child.definition.template.data.get("resources") or {})
        changed = [n for n in names if n in old and old[n] != new[n]]
        size = max(1, int(rolling.get("max_batch_size", 1)))
        in_service = int(rolling.get("min_in_service", 0))
        size = max(1, min(size, len(names) - in_service)) if names else size
        pause = float(rolling.get("pause_time", 0))
        # after each batch: the members of it and of the batches before it (and the new ones) as
        # defined now, the others as the nested stack has them
        stages = [(pause if start else 0,
                   [(n, new[n] if n in changed[:start + size] or n not in old else old[n]) for n in names])
                  for start in range(0, len(changed), size)]
        return await self.run_stages(stages or [(0, list(new.items()))])

    async def apply_stage(self, members: list, create: bool = False) -> Any:
        data = {"heat_template_version": "2015-04-30", "resources": dict(members)}
        self._fixed_template = template_from_data(data, self.stack.definition.template.files, self.name)
        try:
            return await (self.create_child() if create else self.update_child())
        finally:
            self._fixed_template = None

    _fixed_template: Template | None = None

    # -- attributes ------------------------------------------------------------------------
    def FnGetAtt(self, key: str, *path: Any) -> Any:  # noqa: N802 - Heat's name
        if key == "removed_rsrc_list":
            value = list(self._data.get(BLACKLIST_KEY, []))
            return select_path(value, list(path)) if path else value
        return member_attribute(self, key, path)

    def get_reference_id(self) -> Any:
        return self.resource_id if self.resource_id is not None else self.name


def _substitute(value: Any, index_var: str, index: str) -> Any:
    if isinstance(value, str):
        return value.replace(index_var, index)
    if isinstance(value, dict):
        return {k: _substitute(v, index_var, index) for k, v in value.items()}
    if isinstance(value, list):
        return [_substitute(v, index_var, index) for v in value]
    return value


def _index(name: str) -> tuple:
    return (0, int(name), "") if name.isdigit() else (1, 0, name)


def _quiet_ref(resource) -> Any:
    try:
        return resource.FnGetRefId()
    except Exception:  # a member that cannot answer is matched by name only
        return None


def resource_mapping() -> dict:
    return {"OS::Heat::ResourceGroup": ResourceGroup}
