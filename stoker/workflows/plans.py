"""What a heal or a deployment update decided for each instance, once its checks ran: kept in the instance's
system properties (``stoker_plan``: the execution and the instance's actions — heal, update, reinstall) so
every later step, here or on a worker, reads the same decision; removed when the execution ends well."""

from __future__ import annotations

from typing import Any

from stoker.workflows import health
from stoker.workflows.model import Instance

#: the system property holding the decision (Stoker's own: Cloudify decides in its workflow's memory)
PLAN = "stoker_plan"
#: Cloudify's marks of an instance whose heal or update operation failed in an execution (its id)
FAILED_MARKS = ("heal_failed", "update_failed")


def planned(instance: Instance, execution_id: str) -> list[str] | None:
    """The instance's actions as execution ``execution_id`` decided them (None: not decided by it)."""
    plan = instance.system_properties.get(PLAN)
    return plan.get("actions") if isinstance(plan, dict) and plan.get("execution_id") == execution_id else None


def takes(instance: Instance, execution_id: str, action: str) -> bool:
    return action in (planned(instance, execution_id) or [])


def mark_all(runner: Any, ids: list[str], actions: dict[str, list[str]]) -> None:
    """Keep ``actions[id]`` as each instance's decision (added to what it had)."""
    changes = []
    for instance_id in ids:
        had = planned(runner.deployment.instances[instance_id], runner.execution_id) or []
        wanted = had + [a for a in actions.get(instance_id, []) if a not in had]
        changes.append((instance_id, (PLAN,), {"execution_id": runner.execution_id, "actions": wanted}))
    runner.change_system(changes)


def clean(runner: Any, ids: list[str]) -> None:
    """The execution's decisions and failure marks (heal_failed, update_failed) removed from ``ids``."""
    changes = []
    for instance_id in ids:
        instance = runner.deployment.instances[instance_id]
        if planned(instance, runner.execution_id) is not None:
            changes.append((instance_id, (PLAN,), health.GONE))
        changes += [(instance_id, (key,), health.GONE) for key in FAILED_MARKS
                    if health.marked(instance, key, runner.execution_id)]
    runner.change_system(changes)
