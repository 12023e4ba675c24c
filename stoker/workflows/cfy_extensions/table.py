"""Which of the manager's own operations Stoker runs, by the task ``cfy_extensions`` names, and how
one runs: in a thread (its manager calls block), its runtime properties stored after it, whether it
succeeded or not."""

from __future__ import annotations

import asyncio
from typing import Any, Callable

from stoker.workflows.cfy_extensions import blueprint_node, component, password_secret, shared_resource
from stoker.workflows.cfy_extensions.call import Call, Refused
from stoker.errors import StokerError
from stoker.workflows.operation_context import OperationContext, OperationFailed

OPERATIONS: dict[str, Callable[[Call], Any]] = {
    "cloudify_types.component.upload_blueprint": component.upload_blueprint,
    "cloudify_types.component.create": component.create,
    "cloudify_types.component.execute_start": component.execute_start,
    "cloudify_types.component.delete": component.delete,
    "cloudify_types.component.refresh": component.refresh,
    "cloudify_types.component.check_status": component.check_status,
    "cloudify_types.shared_resource.connect_deployment": shared_resource.connect_deployment,
    "cloudify_types.shared_resource.disconnect_deployment": shared_resource.disconnect_deployment,
    "cloudify_types.shared_resource.execute_workflow": shared_resource.execute_workflow,
    "cloudify_types.shared_resource.refresh": shared_resource.refresh,
    "cloudify_types.shared_resource.check_status": shared_resource.check_status,
    "cloudify_types.blueprint.upload": blueprint_node.upload_blueprint,
    "cloudify_types.blueprint.delete": blueprint_node.delete,
    "cloudify_types.password_secret.create": password_secret.create,
    "cloudify_types.password_secret.delete": password_secret.delete,
    "cloudify_types.password_secret.creation_validation": password_secret.creation_validation,
}


async def run_manager_operation(ctx: OperationContext, implementation: str) -> Any:
    """Run ``cfy_extensions.<task>`` against the project's manager (``ctx.manager``)."""
    task = implementation.split(".", 1)[1] if "." in implementation else implementation
    operation = OPERATIONS.get(task)
    if operation is None:
        raise Refused(f"{implementation} is one of the Cloudify manager's own operations that Stoker does not run "
                      "(check_drift, heal and update: a manager's drift records and deployment updates)")
    if ctx.manager is None:
        raise Refused(f"{implementation} needs the project's manager, which this execution does not have")
    call = Call(ctx, ctx.manager, asyncio.get_running_loop())
    try:
        return await asyncio.to_thread(operation, call)
    except asyncio.CancelledError:  # the execution was force-cancelled: so are the ones it started
        await asyncio.to_thread(call.manager.cancel_children)
        raise
    except OperationFailed:
        raise
    except (StokerError, OSError, ValueError) as exc:  # as Cloudify's errors_nonrecoverable words it
        raise Refused(f"Error in {operation.__name__}: {exc}") from None
    finally:
        await call.store_changes()
