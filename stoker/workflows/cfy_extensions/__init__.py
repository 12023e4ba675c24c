"""The Cloudify manager's own operations (``cfy_extensions``: Component, SharedResource, Blueprint,
PasswordSecret), run natively on this project's deployments and executions (``table.OPERATIONS``)."""

#: the plugin the standard types name for these operations
PLUGIN = "cfy_extensions"

#: the manager's own operations Stoker does not run (a child deployment's drift check, heal and update): heal and a
#: deployment update take a node whose operation is one of them as a node without it
NOT_RUN = ("check_drift", "heal", "update")


def not_run(operation: dict | None) -> bool:
    """Whether ``operation`` is one of the manager's own that Stoker does not run (``NOT_RUN``)."""
    return bool(operation) and operation.get("plugin") == PLUGIN and str(
        operation.get("implementation") or "").rsplit(".", 1)[-1] in NOT_RUN
