"""``cloudify.nodes.Component`` (and ``ServiceComponent``): a child deployment of an uploaded (or
reused) blueprint, installed by the parent's start and uninstalled, deleted by its stop and delete.

As Cloudify's ``cloudify_types.component``: ``upload_blueprint`` (create) stores the blueprint
named in ``resource_config.blueprint`` unless one of that id exists; ``create`` (configure) makes the
deployment (``resource_config.deployment``: id, inputs, labels, ``auto_inc_suffix``) labelled
``csys-obj-parent: <parent>``; ``execute_start`` (start and stop) runs a workflow on it and copies its
capabilities into the runtime property ``capabilities``; ``delete`` deletes the deployment and,
unless external, the blueprint.  The runtime property ``deployment.id`` names the child.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from stoker.blueprint.environments import PARENT_LABEL
from stoker.errors import Conflict, NotFound, StokerError
from stoker.workflows.cfy_extensions.call import Call, Refused
from stoker.workflows.manager import ExecutionTimedOut
from stoker.workflows.resources import ResourceRefused, resource_path

EXTERNAL_RESOURCE = "external_resource"
#: Cloudify's: how long to wait for a child's execution, how often to look, how many suffixes to try
EXECUTIONS_TIMEOUT = 1800
POLLING_INTERVAL = 1
DEPLOYMENTS_CREATE_RETRIES = 10


def upload_blueprint(call: Call) -> bool:
    upload(call, call.config().get("blueprint") or {})
    return True


def upload(call: Call, blueprint: dict) -> str:
    """Store the blueprint ``blueprint`` describes (Cloudify's ``do_upload_blueprint``); its id."""
    blueprint_id = str(blueprint.get("id") or call.instance.id)
    archive = blueprint.get("blueprint_archive")
    main_file_name = blueprint.get("main_file_name") or "blueprint.yaml"
    labels = blueprint.get("labels") or []
    call.runtime["blueprint"] = {"id": blueprint_id, "blueprint_archive": archive,
                                 "application_file_name": main_file_name, "labels": labels}
    exists = call.manager.blueprint_exists(blueprint_id)
    if blueprint.get(EXTERNAL_RESOURCE) and not exists:
        raise Refused(f'Blueprint ID "{blueprint_id}" does not exist on tenant "{call.ctx.tenant_name}", '
                      f"but {EXTERNAL_RESOURCE} is {blueprint.get(EXTERNAL_RESOURCE)}.")
    if exists:
        call.log("Using external blueprint." if blueprint.get(EXTERNAL_RESOURCE) else
                 f'Blueprint "{blueprint_id}" exists, but {EXTERNAL_RESOURCE} is '
                 f"{bool(blueprint.get(EXTERNAL_RESOURCE))}, will use the existing one.")
        return blueprint_id
    if not archive:
        raise Refused(f"No blueprint_archive supplied, but {EXTERNAL_RESOURCE} is False")
    check_labels(labels, "labels")
    try:
        call.manager.upload_blueprint(blueprint_id, archive_path(call, str(archive)), str(main_file_name))
    except Conflict:  # another Component uploaded it meanwhile: used as it is, as Cloudify does
        call.log(f'Blueprint "{blueprint_id}" exists, will use the existing one.')
        return blueprint_id
    call.log(f'Uploaded blueprint "{blueprint_id}"')
    return blueprint_id


def archive_path(call: Call, archive: str) -> Path:
    """``blueprint_archive``: a folder or an archive in the parent blueprint's files (nothing is
    fetched over the network: a URL is refused)."""
    parsed = urlparse(archive)
    if parsed.scheme and parsed.netloc:
        raise Refused(f"blueprint_archive {archive} is a URL: Stoker fetches nothing over the network; put the "
                      "blueprint (a folder or an archive) in the parent blueprint's folder and name its path")
    try:
        return resource_path(call.ctx.resource_root, archive, folder_too=True)
    except ResourceRefused as exc:
        raise Refused(f"blueprint_archive {archive}: {exc}") from None


def check_labels(labels: Any, what: str) -> None:
    if not isinstance(labels, list) or not all(isinstance(label, dict) and len(label) == 1 for label in labels):
        raise Refused(f"The provided {what} are not valid. Labels must be a list of single-entry dicts, "
                      f"e.g. [{{'foo': 'bar'}}]. This value was provided: {labels}.")


def deployment_id_of(call: Call) -> str:
    """The child's id: the runtime property, else ``resource_config.deployment.id``, else the instance's."""
    deployment = call.config().get("deployment") or {}
    return str((call.runtime.get("deployment") or {}).get("id") or deployment.get("id") or call.instance.id)


def create(call: Call) -> bool:
    set_secrets(call)
    refuse_plugins(call)
    config = call.config()
    deployment = config.get("deployment") or {}
    call.runtime.setdefault("deployment", {})
    base_id = deployment_id_of(call)
    labels = deployment.get("labels") or []
    check_labels(labels, "deployment labels")
    labels = [label for label in labels if PARENT_LABEL not in label] + [{PARENT_LABEL: call.deployment_id}]
    blueprint_id = str((config.get("blueprint") or {}).get("id") or call.instance.id)
    if deployment.get(EXTERNAL_RESOURCE):
        if not call.manager.deployment_exists(base_id):
            raise Refused(f'Deployment ID "{base_id}" does not exist on tenant "{call.ctx.tenant_name}", but '
                          f"{EXTERNAL_RESOURCE} is True.")
        call.runtime["deployment"]["id"] = base_id
        return True
    if call.runtime.get("_component_create_deployment_id"):  # made before an interruption: not again
        return True
    pairs = [(str(key), str(value)) for label in labels for key, value in label.items()]
    candidates = ([f"{base_id}-{index}" for index in range(DEPLOYMENTS_CREATE_RETRIES)]
                  if deployment.get("auto_inc_suffix") else [base_id])
    failure: Exception = Refused("Unknown error creating deployment")
    for candidate in candidates:
        try:
            call.manager.create_deployment(candidate, blueprint_id, dict(deployment.get("inputs") or {}), pairs)
        except Conflict as exc:  # taken: the next suffix
            failure = exc
            continue
        except StokerError as exc:
            raise Refused(f"Error in create: deployment {candidate} of blueprint {blueprint_id}: {exc}") from None
        call.runtime["deployment"]["id"] = candidate
        call.runtime["_component_create_deployment_id"] = candidate
        call.update()
        call.log(f'Creating "{candidate}" component deployment')
        return True
    raise Refused(f"Error in create: {failure}")


def execute_start(call: Call) -> bool:
    """Run ``workflow_id`` (start: install, stop: uninstall) on the child and wait for its end."""
    deployment_id = deployment_id_of(call)
    inputs = call.ctx.operation.inputs
    workflow_id = str(inputs.get("workflow_id") or "install")
    timeout, interval = _number(inputs, "timeout", EXECUTIONS_TIMEOUT), _number(inputs, "interval", POLLING_INTERVAL)
    if not call.manager.deployment_exists(deployment_id):
        if workflow_id == "uninstall":  # its creation failed: nothing to uninstall
            call.log(f'Didn\'t find component\'s "{deployment_id}" deployment, so nothing to do and moving on.',
                     "warning")
            return True
        raise Refused(f'Error in execute_start: component deployment "{deployment_id}" does not exist')
    if not call.manager.wait_idle(deployment_id, timeout, interval):
        raise Refused(f'The "{deployment_id}" deployment is not ready for execution.')
    args = call.config().get("executions_start_args") or {}
    parameters = args.get("parameters")
    if workflow_id == call.ctx.workflow_id:  # as Cloudify: the parent's workflow hands the child its parameters
        parameters = call.ctx.workflow_parameters
    call.log(f'Starting execution for "{deployment_id}" deployment')
    run_child(call, deployment_id, workflow_id, parameters, timeout, interval, "execute_start")
    call.log(f'Execution succeeded for "{deployment_id}" deployment')
    copy_capabilities(call, deployment_id)
    return True


def run_child(call: Call, deployment_id: str, workflow_id: str, parameters: Any, timeout: float, interval: float,
              operation: str) -> dict:
    """Run a workflow on another deployment; its failure is this operation's, with its error."""
    try:
        execution = call.manager.run_workflow(deployment_id, workflow_id, parameters if isinstance(parameters, dict)
                                              else {}, timeout, interval)
    except ExecutionTimedOut as exc:
        raise Refused(f"Error in {operation}: {exc}") from None
    except StokerError as exc:
        raise Refused(f"Error in {operation}: cannot start {workflow_id} on deployment {deployment_id}: {exc}") \
            from None
    if execution["status"] != "terminated":
        raise Refused(f"Error in {operation}: execution {execution['id']} ({workflow_id}) of deployment "
                      f"{deployment_id} {execution['status']}: {execution['error']}")
    return execution


def copy_capabilities(call: Call, deployment_id: str, into: dict | None = None) -> None:
    """The deployment's capabilities into the runtime property ``capabilities``."""
    (call.runtime if into is None else into)["capabilities"] = call.manager.capabilities(deployment_id)
    call.log(f'Fetched "{deployment_id}" deployment capabilities')


def delete(call: Call) -> bool:
    config = call.config()
    deployment_id = deployment_id_of(call)
    blueprint = config.get("blueprint") or {}
    blueprint_id = str(blueprint.get("id") or call.instance.id)
    timeout = _number(call.ctx.operation.inputs, "timeout", EXECUTIONS_TIMEOUT)
    call.manager.wait_idle(deployment_id, timeout, POLLING_INTERVAL)
    if not (config.get("deployment") or {}).get(EXTERNAL_RESOURCE):
        if call.manager.deployment_exists(deployment_id):
            call.log(f'Delete component\'s "{deployment_id}" deployment')
            _or_refuse(lambda: call.manager.delete_deployment(deployment_id), "delete")
        else:
            call.log(f'Didn\'t find component\'s "{deployment_id}" deployment, so nothing to do and moving on.',
                     "warning")
    if not blueprint.get(EXTERNAL_RESOURCE) and call.manager.blueprint_exists(blueprint_id):
        call.log(f'Delete component\'s blueprint "{blueprint_id}".')
        try:
            call.manager.delete_blueprint(blueprint_id)
        except (Conflict, NotFound) as exc:  # another deployment still uses it, or another Component deleted it
            call.log(f'Could not delete blueprint "{blueprint_id}": {exc}', "warning")
    delete_secrets(call)
    for key in ("deployment", "blueprint", "plugins", "_component_create_deployment_id"):
        call.runtime.pop(key, None)
    return True


def refresh(call: Call) -> None:
    copy_capabilities(call, deployment_id_of(call))


def check_status(call: Call) -> None:
    """Run ``check_status`` on the child, then judge it as Cloudify's ``validate_deployment_status``."""
    deployment_id = deployment_id_of(call)
    timeout = _number(call.ctx.operation.inputs, "timeout", EXECUTIONS_TIMEOUT)
    run_child(call, deployment_id, "check_status", {}, timeout, POLLING_INTERVAL, "check_status")
    check_deployment(call, deployment_id)


def installed(call: Call, deployment_id: str) -> bool:
    """Cloudify's installation_status ``active``: an install ended well and no uninstall since (dry runs aside:
    they change no instance)."""
    ended = [e for e in call.manager.executions.list(deployment_id) if not e["is_dry_run"]
             and e["workflow_id"] in ("install", "uninstall") and e["status"] == "terminated"]
    return bool(ended) and ended[-1]["workflow_id"] == "install"


def check_deployment(call: Call, deployment_id: str) -> None:
    """Refused unless the deployment is installed, its latest execution did not fail and every
    instance is started (Cloudify's ``validate_deployment_status``)."""
    if not installed(call, deployment_id):
        raise Refused(f"Expected deployment '{deployment_id}' to be installed, but got installation status: "
                      "'inactive'")
    executions = [e for e in call.manager.executions.list(deployment_id) if e["status"] != "queued"]
    if executions and executions[-1]["status"] == "failed":
        raise Refused(f"The latest execution for '{deployment_id}' failed")
    unavailable = [i for i in call.manager.deployments.node_instances(deployment_id) if i["state"] != "started"]
    if unavailable:
        raise Refused(f"There are {len(unavailable)} unavailable instances in deployment '{deployment_id}'")


def set_secrets(call: Call) -> None:
    """The ``secrets`` property: created before the child exists, refused if one already does."""
    secrets = call.input("secrets") or {}
    if not isinstance(secrets, dict):
        raise Refused(f"secrets must be a dict of names and values, not {type(secrets).__name__}")
    clash = sorted(key for key in secrets if call.manager.secret_exists(str(key)))
    if clash:
        raise Refused(f'The secrets: "{", ".join(clash)}" already exist, not updating...')
    for key, value in secrets.items():
        call.manager.create_secret(str(key), str(value), hidden=False)
        call.log(f"Created secret {str(key)!r}")


def delete_secrets(call: Call) -> None:
    for key in call.input("secrets") or {}:
        call.manager.delete_secret(str(key))
        call.log(f"Removed secret {str(key)!r}")


def refuse_plugins(call: Call) -> None:
    if call.input("plugins") and "plugins" not in call.runtime:
        raise Refused("the plugins property (wagon_path, plugin_yaml_path) is not uploaded by Stoker's Component: "
                      "upload the plugins first with `stoker plugin upload`")


def _number(inputs: dict, key: str, default: float) -> float:
    value = inputs.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise Refused(f"the input {key} must be a number of seconds, not {value!r}")
    return value


def _or_refuse(action, operation: str) -> None:
    try:
        action()
    except StokerError as exc:
        raise Refused(f"Error in {operation}: {exc}") from None
