"""How stacks, resources and events look in Heat's API: links, key names, states."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote, urlencode

from fastapi import Request

from stoker.engine.summaries import event_summary, resource_summary, stack_summary


class Links:
    """URLs under ``{base}/v1/{tenant}`` for one request (host as the client sent it)."""

    def __init__(self, request: Request, tenant: str):
        self.root = str(request.base_url).rstrip("/")
        self.tenant = tenant
        self.prefix = f"{self.root}/v1/{quote(tenant, safe='')}"

    def stack(self, name: str, stack_id: str) -> str:
        return f"{self.prefix}/stacks/{quote(name, safe='')}/{stack_id}"

    def resource(self, name: str, stack_id: str, resource_name: str) -> str:
        return f"{self.stack(name, stack_id)}/resources/{quote(resource_name, safe='')}"

    def event(self, name: str, stack_id: str, resource_name: str, event_id: str) -> str:
        return f"{self.resource(name, stack_id, resource_name)}/events/{event_id}"


def with_query(url: str, request: Request, **overrides: Any) -> str:
    """``url`` with the request's query string (and some values replaced)."""
    params = [(k, v) for k, v in request.query_params.multi_items() if k not in overrides]
    params += [(k, v) for k, v in overrides.items() if v is not None]
    return f"{url}?{urlencode(params)}" if params else url


def stack_view(links: Links, info: dict) -> dict:
    """A stack as Heat shows it (``format_stack``): its keys plus ``links``."""
    out = {"id": info["id"], "links": [{"href": links.stack(info["stack_name"], info["id"]), "rel": "self"}]}
    out.update((k, v) for k, v in info.items() if k != "id")
    out.setdefault("stack_user_project_id", None)
    return out


def stack_record_view(links: Links, record: Any, description: str | None = None) -> dict:
    info = stack_summary(record)
    info["tags"] = list(record.tags) if record.tags else None
    if description is not None:
        info["description"] = description
    return stack_view(links, info)


#: the keys of a resource in a list, besides required_by and links (and parent_resource, simulated)
RESOURCE_KEYS = ("resource_name", "logical_resource_id", "resource_type", "resource_status", "resource_status_reason",
                 "physical_resource_id", "creation_time", "updated_time")


def resource_view(links: Links, row: Any, record: Any, required_by: list[str] | None = None,
                  nested: Any = None, parent_resource: str | None = None) -> dict:
    """One resource row as in Heat's resource list."""
    info = resource_summary(row, record)
    out = {key: info[key] for key in RESOURCE_KEYS}
    out["required_by"] = sorted(required_by or [])
    out["links"] = [{"href": links.resource(record.name, record.id, row.name), "rel": "self"},
                    {"href": links.stack(record.name, record.id), "rel": "stack"}]
    if nested is not None:
        out["links"].append({"href": links.stack(nested.name, nested.id), "rel": "nested"})
    if parent_resource is not None:
        out["parent_resource"] = parent_resource
    if info.get("simulated"):
        out["simulated"] = True
    return out


def required_by_map(rows: list) -> dict[str, list[str]]:
    needed: dict[str, set[str]] = {}
    for row in rows:
        for name in row.requires or ():
            needed.setdefault(name, set()).add(row.name)
    return {k: sorted(v) for k, v in needed.items()}


def current_rows(rows: list) -> list:
    """One row per resource name: the current one (a replacement wins over the row it replaces)."""
    chosen: dict[str, Any] = {}
    for row in rows:
        have = chosen.get(row.name)
        if have is None or (row.replaced_by is None and (have.replaced_by is not None or row.id > have.id)):
            chosen[row.name] = row
    return sorted(chosen.values(), key=lambda r: r.id)


#: the keys of an event in a list besides its links and names (Heat's summary_keys); a shown event has them all
EVENT_SUMMARY_KEYS = ("id", "event_time", "resource_status", "resource_status_reason", "physical_resource_id")


def event_view(links: Links, event: Any, record: Any, detail: bool = False,
               root: Any = None) -> dict:
    info = event_summary(event, record)
    name = info["resource_name"] or record.name
    out = {key: info[key] for key in EVENT_SUMMARY_KEYS}
    out.update(logical_resource_id=name, resource_name=name, links=[
        {"href": links.event(record.name, record.id, name, info["id"]), "rel": "self"},
        {"href": links.resource(record.name, record.id, name), "rel": "resource"},
        {"href": links.stack(record.name, record.id), "rel": "stack"}])
    if root is not None and root.id != record.id:
        out["links"].append({"href": links.stack(root.name, root.id), "rel": "root_stack"})
    if detail:
        out["resource_type"] = info["resource_type"]
        out["resource_properties"] = event.properties or {}
        out["stack_name"] = record.name
    return out
