"""``OS::Heat::Stack``: a nested stack from a template given inline; in another region
(``context.region_name`` naming one of ``[regions]`` in stoker.conf), a stack made there
over the Heat v1 API, as Heat's remote stacks."""

from __future__ import annotations

import asyncio
from typing import Any

from stoker.resources.nested_stack import OUTPUTS_KEY, NestedStackFailed, NestedStackResource
from stoker.engine.regions import HeatEndpoint, RegionError, local_region, region
from stoker.errors import ResourcePending, ValidationFailed
from stoker.heat_words import REGION_CODE, heat_words
from stoker.resources import attributes, properties
from stoker.resources.support import SupportStatus
from stoker.template.template import Template

S = properties.Schema
#: resource data key: the region a remote stack lives in and its path there
REMOTE_KEY = "stoker:remote"


class StackResource(NestedStackResource):
    """Creates a nested stack from the ``template`` property (template text).

    ``context.region_name`` naming this engine's region (``[regions] local``, RegionOne by
    default) or none: a nested stack here.  Naming another configured region: the stack is
    created, updated, suspended, resumed, checked and deleted there, its state polled and its
    outputs read back.  Attributes: ``outputs`` (every output of the stack) and ``stack_name``.
    """

    support_status = SupportStatus(version="2014.2")

    properties_schema = {
        "template": S(S.STRING, "The nested stack's template (YAML or JSON text).", required=True,
                      update_allowed=True),
        "parameters": S(S.MAP, "Parameter values for the nested stack.", default={}, update_allowed=True),
        "timeout": S(S.NUMBER, "Timeout in minutes for the nested stack.", update_allowed=True),
        "context": S(S.MAP, "Where to create the stack: region_name, a region of [regions] in stoker.conf.",
                     default={}),
    }
    attributes_schema = {
        "outputs": attributes.Schema("A map of the nested stack's outputs.", type=attributes.Schema.MAP),
        "stack_name": attributes.Schema("The nested stack's name.", type=attributes.Schema.STRING),
    }

    # -- where the stack lives ------------------------------------------------------------------
    def _region_name(self) -> str | None:
        """The other region the context names; None: this one."""
        name = (self.properties["context"] or {}).get("region_name")
        return name if name and name != local_region() else None

    def _remote(self) -> tuple[HeatEndpoint, str] | None:
        """The endpoint and path of the stack made in another region, once it is made."""
        kept = self._data.get(REMOTE_KEY)
        return (HeatEndpoint(region(kept["region"])), kept["path"]) if kept else None

    def validate(self) -> None:
        name = self._region_name()
        if name is None:
            return
        try:
            HeatEndpoint(region(name)).validate(self.properties["template"], self._files())
        except RegionError as exc:
            raise ValidationFailed.single(("resources", self.name), REGION_CODE, str(exc)) from None

    def validate_nested_stack(self) -> None:
        """Another region checks its stack itself (``validate``); this region, named in the
        context, refuses in the words Heat's remote stack gives for its own endpoint."""
        named = (self.properties["context"] or {}).get("region_name")
        if not named:
            return super().validate_nested_stack()
        if self._region_name() is not None:
            return None
        try:
            self.define_probe(self.child_template(), self.child_parameters())
        except ResourcePending:
            return None
        except ValidationFailed as exc:
            first = exc.problems[0]
            raise ValidationFailed.single(("resources", self.name), REGION_CODE, (
                f'Failed validating stack template using Heat endpoint at region "{named}" due to '
                f'"ERROR: {heat_words(first) or first.message}"')) from None
        return None

    def child(self):
        return None if self._data.get(REMOTE_KEY) else super().child()

    def child_template(self) -> Template:
        return Template.from_text(self.properties["template"], f"{self.name}.template", files=self._files())

    def _files(self) -> dict:
        return self.stack.definition.template.files if self.stack.definition else {}

    def child_parameters(self) -> dict:
        return dict(self.properties["parameters"] or {})

    # -- actions: here, or in the other region -------------------------------------------------
    async def handle_create(self) -> Any:
        name = self._region_name()
        if name is None:
            return await super().handle_create()
        endpoint = HeatEndpoint(region(name))
        path = await asyncio.to_thread(endpoint.create, self.child_stack_name(), self.properties["template"],
                                       self._files(), self.child_parameters(), self.properties["timeout"])
        self.resource_id_set(path.rsplit("/", 1)[1])
        self.data_set(REMOTE_KEY, {"region": name, "path": path})
        return path

    async def check_create_complete(self, token: Any) -> bool:
        return await self._remote_done("CREATE") if self._data.get(REMOTE_KEY) else \
            super().check_create_complete(token)

    async def handle_update(self, json_snippet: Any, tmpl_diff: dict, prop_diff: dict) -> Any:
        remote = self._remote()
        if remote is None:
            return await super().handle_update(json_snippet, tmpl_diff, prop_diff)
        endpoint, path = remote
        await asyncio.to_thread(endpoint.update, path, self.properties["template"], self._files(),
                                self.child_parameters())
        return path

    async def check_update_complete(self, token: Any) -> bool:
        return await self._remote_done("UPDATE") if self._data.get(REMOTE_KEY) else \
            super().check_update_complete(token)

    async def handle_delete(self) -> Any:
        remote = self._remote()
        if remote is None:
            return await super().handle_delete()
        await asyncio.to_thread(remote[0].delete, remote[1])
        return remote[1]

    async def check_delete_complete(self, token: Any) -> bool:
        remote = self._remote()
        if remote is None:
            return super().check_delete_complete(token)
        shown = await asyncio.to_thread(remote[0].show, remote[1])
        if shown is None or shown["stack_status"] == "DELETE_COMPLETE":
            return True
        if shown["stack_status"] == "DELETE_FAILED":
            raise NestedStackFailed(f"remote stack {remote[1]} failed to delete: {shown['stack_status_reason']}")
        return False

    async def handle_suspend(self) -> Any:
        return await self._remote_action("SUSPEND") if self._data.get(REMOTE_KEY) else await super().handle_suspend()

    async def handle_resume(self) -> Any:
        return await self._remote_action("RESUME") if self._data.get(REMOTE_KEY) else await super().handle_resume()

    async def handle_check(self) -> Any:
        return await self._remote_action("CHECK") if self._data.get(REMOTE_KEY) else await super().handle_check()

    async def check_suspend_complete(self, token: Any) -> bool:
        return await self._remote_done("SUSPEND") if self._data.get(REMOTE_KEY) else \
            super().check_suspend_complete(token)

    async def check_resume_complete(self, token: Any) -> bool:
        return await self._remote_done("RESUME") if self._data.get(REMOTE_KEY) else \
            super().check_resume_complete(token)

    async def check_check_complete(self, token: Any) -> bool:
        return await self._remote_done("CHECK") if self._data.get(REMOTE_KEY) else \
            super().check_check_complete(token)

    async def _remote_action(self, action: str) -> Any:
        endpoint, path = self._remote()
        await asyncio.to_thread(endpoint.action, path, action)
        return path

    async def _remote_done(self, action: str) -> bool:
        """Has the remote stack's ``action`` ended?  Its outputs are kept when it has."""
        endpoint, path = self._remote()
        shown = await asyncio.to_thread(endpoint.show, path)
        status = shown["stack_status"] if shown else f"{action}_FAILED"
        if status == f"{action}_FAILED":
            reason = shown["stack_status_reason"] if shown else "the stack is gone"
            raise NestedStackFailed(f"remote stack {path} in region {self._data[REMOTE_KEY]['region']}: {reason}")
        if status != f"{action}_COMPLETE":
            return False
        self.data_set(OUTPUTS_KEY, {o["output_key"]: o.get("output_value") for o in shown.get("outputs") or []})
        return True

    # -- attributes ---------------------------------------------------------------------------
    def _resolve_attribute(self, name: str) -> Any:
        if name == "outputs":
            return self.child_outputs()
        if name == "stack_name":
            kept = self._data.get(REMOTE_KEY)
            if kept:
                return kept["path"].split("/")[2]
            child = self.child()
            return child.name if child is not None else None
        return None


def resource_mapping() -> dict:
    return {"OS::Heat::Stack": StackResource}
