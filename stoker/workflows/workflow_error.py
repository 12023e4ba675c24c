"""The error a workflow that cannot run raises (before anything ran)."""

from __future__ import annotations

from stoker.blueprint.blueprint_errors import BlueprintError


class WorkflowError(BlueprintError):
    """A workflow that cannot run with these parameters on this deployment."""

    def __init__(self, message: str):
        super().__init__(message, code="invalid-workflow")


class IllegalParameters(WorkflowError):
    """A parameter's value the deployment does not have (an unknown node id...), refused as Cloudify's
    manager refuses it before the workflow starts."""
    cloudify_code = "illegal_execution_parameters_error"


def unknown_value(parameter: str, value: object, data_type: str) -> IllegalParameters:
    """Cloudify's words for a ``node_id`` / ``node_instance`` / ``node_type`` value not in the deployment."""
    return IllegalParameters(f'Parameter "{parameter}" does not meet its constraints: Value \'{value}\' of '
                             f"'{parameter}' is not a valid value for data type '{data_type}'.")
