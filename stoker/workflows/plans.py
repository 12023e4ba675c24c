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


def going(instance: Instance, execution_id: str, action: str, failure: str | None = None) -> bool:
    """Whether the instance takes ``action`` and its ``failure`` mark (heal_failed...) does not stop it."""
    return takes(instance, execution_id, action) and not (failure and health.marked(instance, failure, execution_id))


def mark(runner: Any, actions: dict[str, list[str]]) -> None:
    """Keep ``actions[id]`` as each instance's decision."""
    runner.change_system([(instance_id, (PLAN,), {"execution_id": runner.execution_id, "actions": wanted})
                          for instance_id, wanted in actions.items()])


def change(runner: Any, changes: dict[str, tuple[list[str], list[str]]]) -> None:
    """Add the first actions to each instance's decision and take the second away."""
    marked = {}
    for instance_id, (added, taken) in changes.items():
        had = planned(runner.deployment.instances[instance_id], runner.execution_id) or []
        marked[instance_id] = [a for a in had if a not in taken] + [a for a in added if a not in had]
    mark(runner, marked)


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
