"""The JSON shapes of Cloudify's REST API v3.1, as cloudify-rest-client and ``cfy`` read them.

Stoker's services hand out the fields ``stoker ... -f json`` shows (already
Cloudify's names); here they get the fields a manager adds (tenant,
visibility, states), and lists get Cloudify's envelope and query language:
``items`` + ``metadata.pagination``, ``_size``/``_offset``, ``_sort``
(``-`` for descending), ``_include``, and equality filters on any field.
"""

from __future__ import annotations

from typing import Any, Iterable

from fastapi import Request

from stoker.api.error_bodies import ApiError
from stoker.blueprint.environments import ENV_TYPE_LABEL
from stoker.blueprint.namespaces import is_script
from stoker.blueprint.state import tenant_of
from stoker.store.models import iso_time
from stoker.store.plugin_packages import OPERATOR_TENANT

#: the largest page a list returns (Cloudify's default ``max_results``)
MAX_PAGE = 1000
#: query parameters that are not filters on a field
NOT_FILTERS = {"_size", "_offset", "_sort", "_include", "_search", "_search_name", "_get_all_results", "_all_tenants",
               "include_logs", "type", "_range", "_filter_id", "_evaluate_functions", "_execution_id",
               "all_sub_deployments", "_include_workdir", "force", "with_logs", "recursive", "delete_db_mode",
               "delete_logs", "_group_id", "_summary", "state", "_target_field", "_sub_field"}


def common(project: str, visibility: str = "tenant", created_by: str = "admin", tenant: str | None = None) -> dict:
    return {"tenant_name": tenant or tenant_of(project), "visibility": visibility, "private_resource": visibility == "private",
            "resource_availability": visibility, "created_by": created_by}


def owned(record: dict, project: str) -> dict:
    """``common`` of a record that keeps its visibility, creator and (another tenant's global one) project or
    tenant."""
    return common(record.get("project_id") or project, record.get("visibility", "tenant"),
                  record.get("created_by") or "admin", record.get("tenant_name"))


def blueprint(record: dict, project: str, plan: dict | None = None) -> dict:
    return {**owned(record, project), "id": record["id"], "description": record["description"],
            "main_file_name": record["main_file_name"], "created_at": record["created_at"],
            "updated_at": record["created_at"], "state": "uploaded", "error": None, "error_traceback": None,
            "is_hidden": False, "labels": record.get("labels", []),
            # Stoker parses at upload, in the request: cfy waits for this "execution", ended already
            "upload_execution": {"id": f"upload_blueprint-{record['id']}", "status": "terminated",
                                 "workflow_id": "upload_blueprint"},
            # a plan stored before plans kept ``metadata`` has none: ``cfy blueprints get`` reads the key
            "requirements": None, "plan": plan if plan is None else {"metadata": None, **plan}}


def workflows(plan: dict) -> list[dict]:
    return [{"name": name, **_workflow(w), "is_cascading": False, "is_available": True}
            for name, w in sorted((plan.get("workflows") or {}).items())]


def _workflow(declared: Any) -> dict:
    """A workflow's plugin, operation and parameters; one given in short form (``hello: scripts/x.sh``, or
    ``plugin.module.task``) as dsl-parser spells it out."""
    if isinstance(declared, dict):
        return {key: declared.get(key, default) for key, default in (("plugin", ""), ("operation", ""),
                                                                     ("parameters", {}))}
    mapping = str(declared or "")
    if is_script(mapping):
        return {"plugin": "script", "operation": "script_runner.tasks.execute_workflow",
                "parameters": {"script_path": {"default": mapping}}}
    plugin, _, operation = mapping.partition(".")
    return {"plugin": plugin, "operation": operation, "parameters": {}}


def deployment(record: dict, project: str, plan: dict, inputs: dict, family: dict, site_name: str | None = None) -> dict:
    """``family``: its statuses and its sub-services' and sub-environments' (``environments.summaries``)."""
    return {**owned(record, project), **record, "updated_at": record["created_at"], "inputs": inputs,
            "outputs": plan.get("outputs", {}), "capabilities": plan.get("capabilities", {}),
            "workflows": workflows(plan), "groups": plan.get("groups", {}), "policies": plan.get("policies", {}),
            "scaling_groups": plan.get("scaling_groups", {}), "labels": record.get("labels", []),
            "site_name": site_name, **family, "is_hidden": False,
            "environment_type": next((label["value"] for label in record.get("labels", [])
                                      if label["key"] == ENV_TYPE_LABEL), "")}


def execution(record: dict, project: str) -> dict:
    return {**common(project), **record, "is_system_workflow": False, "blueprint_id": record.get("blueprint_id"),
            "total_operations": None, "finished_operations": None,
            "scheduled_for": record.get("scheduled_for"),
            "execution_group_id": record.get("execution_group_id"), "allow_custom_parameters": False,
            "resume": False, "token": None}


def event(record: dict) -> dict:
    kind = record["type"]
    return {**record, "type": kind, "reported_timestamp": record["timestamp"], "source_id": None,
            "target_id": None, "logger": None if kind == "cloudify_event" else "ctx",
            "manager_name": None, "agent_name": None, "error_causes": record.get("error_causes")}


def node(record: dict, project: str) -> dict:
    return {**common(project), **record, "plugins": [], "plugins_to_install": None, "actual_number_of_instances":
            record["number_of_instances"], "planned_number_of_instances": record["number_of_instances"],
            "actual_planned_number_of_instances": record["number_of_instances"], "is_hidden": False}


def node_instance(record: dict, project: str) -> dict:
    return {**common(project), "system_properties": {}, "has_configuration_drift": False, "is_status_check_ok": False,
            **record, "index": record.get("index")}


def secret(record: dict, project: str) -> dict:
    return {**owned(record, project), "key": record["key"], "value": record.get("value"),
            "is_hidden_value": record["is_hidden_value"], "created_at": record["created_at"],
            "updated_at": record["updated_at"], "schema": record.get("schema"), "provider_name": record.get("provider_name"),
            "provider_options": record.get("provider_options")}


def site(record: dict, project: str) -> dict:
    located = record["latitude"] is not None and record["longitude"] is not None
    return {**common(record["project_id"]), "name": record["name"], "visibility": record["visibility"],
            "created_by": record["created_by"], "created_at": record["created_at"],
            "location": f"{record['latitude']}, {record['longitude']}" if located else None}


def snapshot(record: dict) -> dict:
    """A manager snapshot: the server's, shown as Cloudify's (private, in the operator's tenant)."""
    return {"id": record["id"], "created_at": iso_time(record["created_at"]), "status": record["status"],
            "error": record["error"], "created_by": record["created_by"], "tenant_name": OPERATOR_TENANT,
            "visibility": "private", "private_resource": True, "resource_availability": "private"}


def schedule(record: dict, project: str, upcoming: list) -> dict:
    """An execution schedule; ``upcoming``: its next runs (``all_next_occurrences``)."""
    return {**common(project), "created_by": record["created_by"],
            **{key: record[key] for key in ("id", "deployment_id", "workflow_id", "created_at", "next_occurrence",
                                            "since", "until", "rule", "slip", "stop_on_fail", "enabled",
                                            "parameters", "execution_arguments", "latest_execution_status")},
            "latest_execution": record["latest_execution_id"],
            "all_next_occurrences": [when.strftime("%Y-%m-%d %H:%M:%S") for when in upcoming]}


def filtered(request: Request, items: Iterable[dict]) -> list[dict]:
    """``items`` whose fields equal what the query's filters ask (a parameter naming no field is no filter)."""
    query = request.query_params
    found = list(items)
    known = set().union(*found) if found else set()
    for key in {k for k in query.keys() if k not in NOT_FILTERS and k in known}:
        wanted = query.getlist(key)
        found = [i for i in found if text(i.get(key)) in wanted]
    return found


def page(request: Request, items: Iterable[dict], filters: bool = True, searched: str = "id") -> dict:
    """Cloudify's list envelope over ``items``, filtered, searched, sorted, paged and trimmed as the query asks
    (``filters`` False: the caller filtered and searched them)."""
    query = request.query_params
    found = searching(request, filtered(request, items), searched) if filters else list(items)
    for spec in reversed(query.getlist("_sort")):
        key, descending = spec.lstrip("-+"), spec.startswith("-")
        found.sort(key=lambda i: (i.get(key) is None, text(i.get(key))), reverse=descending)
    found, pagination = paged(request, found)
    include = [f for part in query.getlist("_include") for f in part.split(",") if f]
    if include:
        found = [{k: i.get(k) for k in include} for i in found]
    return {"items": found, "metadata": {"pagination": pagination, "filtered": None}}


def searching(request: Request, items: list[dict], searched: str) -> list[dict]:
    """``items`` whose ``searched`` field holds ``_search``, or whose ``display_name`` holds ``_search_name``
    (either one, as the manager's substring search: case kept; ``cfy ... list --search|--search-name``)."""
    query = request.query_params
    wanted = [(field, query[name]) for name, field in (("_search", searched), ("_search_name", "display_name"))
              if query.get(name)]
    if not wanted:
        return items
    return [i for i in items if any(pattern in text(i.get(field)) for field, pattern in wanted)]


def paged(request: Request, items: list) -> tuple[list, dict]:
    """The page of ``items`` that ``_size`` and ``_offset`` ask for, and Cloudify's pagination of it."""
    query = request.query_params
    size, offset = _number(query, "_size", MAX_PAGE), _number(query, "_offset", 0)
    return items[offset:offset + min(size, MAX_PAGE)], {"total": len(items), "size": size, "offset": offset}


def one(request: Request, item: dict) -> dict:
    """``item`` trimmed to ``_include`` when the query names fields."""
    include = [f for part in request.query_params.getlist("_include") for f in part.split(",") if f]
    return {k: item.get(k) for k in include} if include else item


def text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def _number(query: Any, name: str, default: int) -> int:
    raw = query.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        value = -1
    if value < 0:
        raise ApiError(400, f"{name} must be a whole number >= 0, not {raw!r}", "bad_parameters_error")
    return value
