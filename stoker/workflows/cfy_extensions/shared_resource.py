"""``cloudify.nodes.SharedResource``: a link to an existing deployment, and the
``*_shared_resource`` relationships that run workflows on it.

As Cloudify's ``cloudify_types.shared_resource``: ``connect_deployment`` (create) checks the
deployment exists, keeps its id (runtime property ``deployment.id``) and capabilities
(``capabilities``), installs it first if it is inactive and labelled ``csys-obj-type:
on-demand-resource`` (refused otherwise), and records this deployment as its consumer (label
``csys-consumer-id``, which ``get_consumers`` reads); ``disconnect_deployment`` (delete) removes the
consumer and uninstalls an on-demand resource nobody consumes any more; ``execute_workflow`` (a
relationship's establish/unlink) runs a workflow on the target's deployment.
"""

from __future__ import annotations

from stoker.blueprint.environments import CONSUMER_LABEL, TYPE_LABEL
from stoker.workflows.cfy_extensions.call import Call, Refused
from stoker.workflows.cfy_extensions.component import check_deployment, copy_capabilities, installed, run_child

ON_DEMAND = "on-demand-resource"
SHARED_RESOURCE_TYPE = "cloudify.nodes.SharedResource"
WORKFLOW_EXECUTION_TIMEOUT = 1800
POLLING_INTERVAL = 1


def _target_id(call: Call) -> str:
    deployment = call.config().get("deployment") or {}
    if not isinstance(deployment, dict):
        raise Refused(f"resource_config.deployment must be a dict with an id, not {deployment!r}")
    return str(deployment.get("id") or "")


def _values(labels: list[dict], key: str) -> list[str]:
    return [label["value"] for label in labels if label["key"] == key]


def connect_deployment(call: Call) -> bool:
    deployment_id = _target_id(call)
    call.log(f'Validating that "{deployment_id}" SharedResource\'s deployment exists on tenant '
             f'"{call.ctx.tenant_name}"...')
    if not deployment_id or not call.manager.deployment_exists(deployment_id):
        raise Refused(f'SharedResource\'s deployment ID "{deployment_id}" does not exist on tenant '
                      f'"{call.ctx.tenant_name}", please verify the given ID.')
    call.runtime["deployment"] = {"id": deployment_id}
    copy_capabilities(call, deployment_id)
    if not installed(call, deployment_id):
        if ON_DEMAND not in _values(call.manager.labels(deployment_id), TYPE_LABEL):
            raise Refused(f'SharedResource\'s deployment "{deployment_id}" is in an inactive state and isn\'t '
                          f"labeled as `{TYPE_LABEL}: {ON_DEMAND}`. Please install the deployment first")
        run_child(call, deployment_id, "install", {}, WORKFLOW_EXECUTION_TIMEOUT, POLLING_INTERVAL,
                  "connect_deployment")
        copy_capabilities(call, deployment_id)
    call.manager.add_label(deployment_id, CONSUMER_LABEL, call.deployment_id)
    return True


def disconnect_deployment(call: Call) -> bool:
    deployment_id = str((call.runtime.get("deployment") or {}).get("id") or _target_id(call))
    call.log(f'Removing inter-deployment dependency between this deployment ("{call.deployment_id}") and '
             f'"{deployment_id}" SharedResource\'s deployment...')
    if not call.manager.deployment_exists(deployment_id):
        call.log(f'SharedResource\'s deployment "{deployment_id}" is gone: nothing to disconnect', "warning")
        return True
    labels = call.manager.labels(deployment_id)
    if call.deployment_id not in _values(labels, CONSUMER_LABEL):
        call.log(f'Source deployment "{call.deployment_id}" is not a consumer of shared resource deployment '
                 f'"{deployment_id}"!', "warning")
    call.manager.remove_label(deployment_id, CONSUMER_LABEL, call.deployment_id)
    types = _values(labels, TYPE_LABEL)
    consumers = _values(call.manager.labels(deployment_id), CONSUMER_LABEL)
    if ON_DEMAND in types and "on-demand-uninstall-off" not in types and not consumers \
            and installed(call, deployment_id):
        run_child(call, deployment_id, "uninstall", {}, WORKFLOW_EXECUTION_TIMEOUT, POLLING_INTERVAL,
                  "disconnect_deployment")
    return True


def execute_workflow(call: Call) -> bool:
    """A relationship operation: ``workflow_id`` with ``parameters`` on the target SharedResource's deployment."""
    target = call.ctx.target
    inputs = call.ctx.operation.inputs
    workflow_id = inputs.get("workflow_id")
    if target is None or target.node.type != SHARED_RESOURCE_TYPE and SHARED_RESOURCE_TYPE not in \
            target.node.type_hierarchy:
        name = target.node.id if target is not None else "(none)"
        raise Refused(f'Error in execute_workflow: Tried to execute "{workflow_id}" workflow on a non '
                      f'SharedResource node "{name}"')
    if not isinstance(workflow_id, str) or not workflow_id:
        raise Refused("Error in execute_workflow: the input workflow_id names the workflow to run")
    deployment_id = str(((target.node.properties.get("resource_config") or {}).get("deployment") or {}).get("id"))
    timeout = inputs.get("timeout", WORKFLOW_EXECUTION_TIMEOUT)
    if not call.manager.wait_idle(deployment_id, timeout, POLLING_INTERVAL):
        raise Refused(f'The "{deployment_id}" deployment is not ready for workflow execution.')
    call.log(f'Starting execution of "{workflow_id}" workflow for "{deployment_id}" SharedResource deployment')
    run_child(call, deployment_id, workflow_id, inputs.get("parameters") or {}, timeout, POLLING_INTERVAL,
              "execute_workflow")
    call.log(f'Execution succeeded for "{deployment_id}" SharedResource deployment of "{workflow_id}" workflow')
    copy_capabilities(call, deployment_id)
    return True


def refresh(call: Call) -> None:
    copy_capabilities(call, _target_id(call))


def check_status(call: Call) -> None:
    check_deployment(call, str((call.runtime.get("deployment") or {}).get("id") or _target_id(call)))
