"""Which graph each workflow runs: the built-in ones by their Cloudify mapping, custom ones as scripts.

A workflow function takes the deployment (its instances in the states the
execution started from) and the execution's parameters and returns the
graph; the same call on resume rebuilds the same graph.
"""

from __future__ import annotations

import re
from typing import Callable

from stoker.engine.graph import Graph
from stoker.workflows import healing, maintenance, services
from stoker.workflows.workflow_error import WorkflowError, unknown_value
from stoker.workflows.lifecycle import (Chains, Step, install_graph, intact_links, link_steps, operation_graph, then,
                                       uninstall_graph)
from stoker.workflows.model import LIFECYCLE, Deployment
from stoker.workflows.scaling import ignored_phases, scale
from stoker.workflows import update_checks, updating

#: ``build(deployment, params, memo)``: what it decides (e.g. new instance ids) goes into ``memo``
Builder = Callable[[Deployment, dict, dict], Graph]
#: ``<plugin>.cloudify.plugins.workflows.<name>``: cloudify-common's own workflow ``name``, under
#: whichever plugin the mapping names (types.yaml says default_workflows, some blueprints builtin)
BUILTIN_MAPPING = re.compile(r"^[^.]+\.cloudify\.plugins\.workflows\.(\w+)$")
SCRIPT_WORKFLOW_TASKS = ("script.script_runner.tasks.execute_workflow", "script_runner.tasks.execute_workflow")


def _install(deployment: Deployment, params: dict, memo: dict) -> Graph:
    """The chosen instances; the others' relationships to them establish after them, as Cloudify's."""
    ids = _chosen(deployment, params)
    chains = install_graph(deployment, ids)
    link_steps(deployment, chains, intact_links(deployment, ids), "establish", "install-establish")
    return chains.graph


def _uninstall(deployment: Deployment, params: dict, memo: dict) -> Graph:
    """The chosen instances; the others' relationships to them unlink first, as Cloudify's; with ``recursive``,
    after the service deployments' uninstall (``services``)."""
    ids = _chosen(deployment, params)
    chains = uninstall_graph(deployment, ids)
    link_steps(deployment, chains, intact_links(deployment, ids), "unlink", "uninstall-unlink")
    return services.first(chains) if params.get("recursive") else chains.graph


def _chosen(deployment: Deployment, params: dict) -> list[str]:
    """Instances filtered by ``node_ids`` / ``node_instance_ids`` / ``type_names`` (all when none given)."""
    node_ids = set(_list(params, "node_ids"))
    instance_ids = set(_list(params, "node_instance_ids"))
    type_names = set(_list(params, "type_names"))
    for name in sorted(node_ids - set(deployment.nodes)):
        raise unknown_value("node_ids", name, "node_id")
    for name in sorted(instance_ids - set(deployment.instances)):
        raise unknown_value("node_instance_ids", name, "node_instance")
    types = {name for node in deployment.nodes.values() for name in node.get("type_hierarchy") or []}
    for name in sorted(type_names - types):  # Cloudify's manager knows the nodes' own types only
        raise unknown_value("type_names", name, "node_type")
    chosen = []
    for instance in deployment.instances.values():
        hierarchy = set(deployment.node_of(instance).get("type_hierarchy") or [])
        if ((not node_ids or instance.node_id in node_ids) and (not instance_ids or instance.id in instance_ids)
                and (not type_names or hierarchy & type_names)):
            chosen.append(instance.id)
    return chosen


def _list(params: dict, key: str) -> list:
    value = params.get(key) or []
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        raise WorkflowError(f"parameter {key} must be a list, not {value!r}")
    return value


def _execute_operation(deployment: Deployment, params: dict, memo: dict) -> Graph:
    operation = params.get("operation")
    if not isinstance(operation, str) or not operation:
        raise WorkflowError("execute_operation needs the parameter operation (e.g. cloudify.interfaces.lifecycle.start)")
    if not deployment.declares(operation):  # Cloudify's manager checks the deployment's nodes, not the chosen
        raise unknown_value("operation", operation, "operation_name")
    ids = _chosen(deployment, params)
    return operation_graph(deployment, operation, ids, bool(params.get("run_by_dependency_order"))).graph


def _lifecycle_operation(name: str, deployment: Deployment, params: dict) -> Chains:
    """``name`` on the chosen instances; with ``run_by_dependency_order``, a relationship's target before its
    source, stop as well as start: cloudify-common's both run ``execute_operation``'s one order (a host
    stops before what it contains)."""
    return operation_graph(deployment, f"{LIFECYCLE}.{name}", _chosen(deployment, params),
                           bool(params.get("run_by_dependency_order")), phase=name)


def _start(deployment: Deployment, params: dict, memo: dict) -> Graph:
    return _lifecycle_operation("start", deployment, params).graph


def _stop(deployment: Deployment, params: dict, memo: dict) -> Graph:
    return _lifecycle_operation("stop", deployment, params).graph


def _restart(deployment: Deployment, params: dict, memo: dict) -> Graph:
    """Stop then start, each in that one order (cloudify-common's ``restart`` runs its ``stop``, then its ``start``)."""
    return then(_lifecycle_operation("stop", deployment, params), _lifecycle_operation("start", deployment, params))


def _script_workflow(path: str) -> Builder:
    def graph(deployment: Deployment, params: dict, memo: dict) -> Graph:
        result = Graph()
        result.add(Step("workflow", "", path, path))
        return result
    return graph


BUILTIN: dict[str, Builder] = {
    "install": _install,
    "uninstall": _uninstall,
    "execute_operation": _execute_operation,
    "start": _start,
    "stop": _stop,
    "restart": _restart,
    "auto_heal_reinstall_node_subgraph": healing.heal,
    "scale_entity": scale,
    updating.WORKFLOW: updating.update,
    **maintenance.workflows(_chosen),
}

#: workflows every deployment has though its plan does not declare them: Cloudify's system workflows
SYSTEM_WORKFLOWS = {updating.WORKFLOW: f"default_workflows.cloudify.plugins.workflows.{updating.WORKFLOW}"}


def declaration(plan: dict, workflow_id: str) -> str | dict | None:
    """Workflow ``workflow_id`` as the deployment's plan declares it, or a system workflow (None: neither)."""
    return (plan.get("workflows") or {}).get(workflow_id) or SYSTEM_WORKFLOWS.get(workflow_id)


def builtin_name(mapping: object) -> str | None:
    """``install`` for ``default_workflows.cloudify.plugins.workflows.install``; None for another mapping."""
    found = BUILTIN_MAPPING.match(mapping) if isinstance(mapping, str) else None
    return found.group(1) if found else None


def _mapping(declaration: str | dict) -> object:
    return declaration.get("mapping") if isinstance(declaration, dict) else declaration


#: per workflow, (the phases whose failures it always passes over, those its ``ignore_failure`` adds): as
#: in cloudify-common, an unlink of an instance left in place never fails an uninstall, ``ignore_failure``
#: covers the uninstalling only (reinstall and heal install again regardless), rollback ignores its own, heal
#: its status checks and heal operations (a failed heal is reinstalled), an update its checks, heal and update
#: operations (a failed one is reinstalled)
IGNORABLE = {"uninstall": ({"uninstall-unlink"}, {"uninstall"}),
             "reinstall": ({"reinstall-unlink"}, {"reinstall-uninstall"}),
             "auto_heal_reinstall_node_subgraph": ({"heal-unlink", healing.CHECK, healing.HEAL}, {"heal-uninstall"}),
             "rollback": ({maintenance.ROLLBACK}, set()),
             updating.WORKFLOW: ({update_checks.CHECK_DRIFT, update_checks.CHECK_STATUS, update_checks.HEAL,
                                  update_checks.UPDATE}, {"update-uninstall", f"{update_checks.REINSTALL}-uninstall"})}


def ignored_failures(declaration: str | dict, params: dict) -> frozenset[str]:
    """The phases whose failed operations the workflow reports and passes over (its ``ignore_failure``)."""
    name = builtin_name(_mapping(declaration))
    if name == "scale_entity":
        return ignored_phases(params)
    always, ignorable = IGNORABLE.get(name, (set(), set()))
    return frozenset(always | ignorable) if params.get("ignore_failure") else frozenset(always)


def kwargs_override_refused(declaration: str | dict, params: dict) -> frozenset[str]:
    """The phases whose keyword arguments may not redefine an operation's inputs: execute_operation's,
    unless ``allow_kwargs_override`` (start, stop, restart and pull always allow it, as in Cloudify)."""
    name = builtin_name(_mapping(declaration))
    return frozenset({"operation"}) if name == "execute_operation" and not params.get("allow_kwargs_override") \
        else frozenset()


def operation_kwargs(declaration: str | dict, params: dict) -> dict[str, dict]:
    """Per phase, the keyword arguments the workflow passes to its operations (over their inputs)."""
    name = builtin_name(_mapping(declaration))
    chosen = {"execute_operation": {"operation": "operation_kwargs"}, "start": {"start": "operation_parms"},
              "stop": {"stop": "operation_parms"},
              "restart": {"stop": "stop_parms", "start": "start_parms"}, "pull": {"pull": "operation_parms"}}.get(name)
    if chosen is not None:
        return {phase: dict(params.get(key) or {}) for phase, key in chosen.items()}
    if name is None:  # a script workflow: its parameters are its inputs
        return {"workflow": {k: v for k, v in params.items() if k not in ("task_retries", "task_retry_interval")}}
    return {}


def graph_builder(workflow_id: str, declaration: str | dict, params: dict) -> Builder:
    """The function that builds ``workflow_id``'s graph, from the blueprint's ``workflows`` entry."""
    mapping = _mapping(declaration)
    if not isinstance(mapping, str) or not mapping:
        raise WorkflowError(f"workflow {workflow_id} has no mapping")
    if builtin_name(mapping):
        builder = BUILTIN.get(builtin_name(mapping))
        if builder is None:
            raise WorkflowError(f"workflow {workflow_id} ({mapping}) is not supported by Stoker")
        return builder
    if mapping in SCRIPT_WORKFLOW_TASKS:
        path = params.get("script_path")
        if not isinstance(path, str):
            raise WorkflowError(f"workflow {workflow_id} ({mapping}) needs the parameter script_path")
        return _script_workflow(path)
    if "/" in mapping or mapping.endswith((".sh", ".py")):
        return _script_workflow(mapping)
    raise WorkflowError(f"workflow {workflow_id} maps to {mapping}: only built-in workflows and scripts in the "
                        "blueprint's folder can run (no plug-ins)")
