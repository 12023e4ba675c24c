"""The steps of a graph that act on what its checks found (``Step.when``, ``Step.act``): the conditions
guarded steps run on, read from each instance's decision (``plans``), the actions of deciding and marking
steps, and the failure marks of the phases whose failed operations fall back to a reinstall."""

from __future__ import annotations

from typing import Any, Callable

from stoker.workflows import healing, plans, update_checks
from stoker.workflows.lifecycle import Step


def _going(action: str, failure: str | None = None) -> Callable[[Any, Step], bool]:
    """The step's instance takes ``action`` (and its ``failure`` mark does not stop it)."""
    return lambda runner, step: plans.going(runner.deployment.instances[step.instance], runner.execution_id, action,
                                            failure)


def _relinks(runner: Any, step: Step) -> bool:
    """A relationship of an instance not reinstalled to one that is (its unlink, or its establish)."""
    source = runner.deployment.instances[step.instance]
    target = runner.deployment.instances.get(source.relationships[step.relationship]["target_id"])
    return target is not None and plans.takes(target, runner.execution_id, "reinstall") and not plans.takes(
        source, runner.execution_id, "reinstall")


#: by ``Step.when``: whether the step runs
GUARDS: dict[str, Callable[[Any, Step], bool]] = {
    "heal": _going("heal", "heal_failed"), "update": _going("update", "update_failed"),
    "reinstall": _going("reinstall"), "relink": _relinks, **update_checks.GUARDS}
#: by ``Step.act``: what the step does
ACTIONS: dict[str, Callable[[Any, Step], None]] = {**healing.ACTIONS, **update_checks.ACTIONS}
#: the phases whose failed operations mark their instance (with the execution's id), as Cloudify's heal and
#: update subgraphs' failure handlers do
FAILURE_MARKS = {healing.HEAL: "heal_failed", update_checks.HEAL: "heal_failed", update_checks.UPDATE: "update_failed"}


def failed(runner: Any, step: Step) -> None:
    """Mark the instance of a failed operation of a heal (or update) phase."""
    mark = FAILURE_MARKS.get(step.phase)
    if mark is not None and not runner.dry_run:
        runner.change_system([(step.instance, (mark,), runner.execution_id)])
