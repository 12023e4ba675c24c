"""The error a workflow that cannot run raises (before anything ran)."""

from __future__ import annotations

from stoker.blueprint.blueprint_errors import BlueprintError


class WorkflowError(BlueprintError):
    """A workflow that cannot run with these parameters on this deployment."""

    def __init__(self, message: str):
        super().__init__(message, code="invalid-workflow")
