"""A deployment update's changed instances, updated or reinstalled as Cloudify 7's update workflow decides
(its ``update_or_reinstall_instances``), between the update's uninstalling and installing.

The instances considered are those started before the update and neither added nor removed by it.  Unless
``skip_drift_check``, their ``check_drift`` runs (failures kept and passed over); a failed check reinstalls
the instance with what it contains; an instance of a changed node (a property or operation) whose node has no
``check_drift`` counts as drifted.  A drifted instance whose node has an update operation (``update``,
``update_config`` or ``update_apply``) or whose drift is only its relationships' is updated, any other is
reinstalled with what it contains; ``force_reinstall`` reinstalls them all.  Before updating, unless
``skip_heal``, their status is checked and the failing ones heal (or are reinstalled) as heal does.  An update
runs ``preupdate``, ``update``, ``postupdate``, ``update_config``, ``update_apply``, ``update_postapply`` (those
the node has, when the instance itself drifted) and the relationships' ``update`` where they drifted; a
failed one reinstalls the instance.  ``skip_reinstall`` reinstalls none but those ``reinstall_list`` names
(Stoker's: with what they contain).  The reinstalled instances and those marked drifted lose their drift.

As heal, one graph of guarded steps (``healing``): each ``act`` step decides from the checks' results.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from stoker.engine.graph import Graph
from stoker.store.instance_health import DRIFTS
from stoker.workflows import health, plans
from stoker.workflows.healing import guarded_reinstall, heal_graph, split
from stoker.workflows.lifecycle import Chains, Step, acting, guarded, in_order, operation_graph, order
from stoker.workflows.maintenance import VALIDATION, drift_graph
from stoker.workflows.model import LIFECYCLE, RELATIONSHIP_LIFECYCLE, Deployment, has_implementation
from stoker.workflows.workflow_error import WorkflowError

#: the phases of the checks (failures kept and passed over), heal and update operations (a failure marks the
#: instance and is passed over), and the reinstall's prefix
CHECK_DRIFT, CHECK_STATUS, HEAL, UPDATE, REINSTALL = ("update-check-drift", "update-check-status", "update-heal",
                                                      "update-update", "update-reinstall")
UPDATE_OPERATIONS = ("preupdate", "update", "postupdate", "update_config", "update_apply", "update_postapply")
#: an instance whose node has one of these can be updated in place
UPDATING = ("update", "update_config", "update_apply")
#: the memo key of the update (``updating.WORKFLOW``)
MEMO = "update"


def graph(deployment: Deployment, decided: dict, params: dict) -> Graph:
    """The checks, heals, updates and reinstalls of the instances the update may change; what it considers is
    kept in ``decided`` (the execution's memo) for the deciding steps."""
    fresh = {row["id"] for row in decided["before"]["added"]} | set(decided["removed"])
    considered = [i.id for i in deployment.instances.values() if i.state == "started" and i.id not in fresh]
    decided["considered"] = considered
    decided["forced"] = _forced(deployment, params, fresh)
    stages = []
    if not params.get("skip_drift_check"):
        stages.append(drift_graph(deployment, [i for i in considered if i not in decided["forced"]
                                               and not _not_run(deployment, i, f"{LIFECYCLE}.check_drift")],
                                  True, CHECK_DRIFT).graph)
    stages.append(acting(UPDATE, "update-decide"))
    if not params.get("skip_heal"):
        check = operation_graph(deployment, f"{VALIDATION}.check_status", considered, False, phase=CHECK_STATUS)
        stages += [guarded(check.graph, lambda step: "update"), acting(UPDATE, "update-heal-decide"),
                   guarded(heal_graph(deployment, considered, HEAL).graph, lambda step: "heal"),
                   acting(UPDATE, "update-healed")]
    stages += [update_graph(deployment, considered), acting(UPDATE, "update-updated"),
               guarded_reinstall(deployment, considered, REINSTALL, considered), acting(UPDATE, "update-clean")]
    return in_order(stages)


def _not_run(deployment: Deployment, instance_id: str, name: str) -> bool:
    """The instance's ``name`` is one of the manager's own that Stoker does not run: not checked at all."""
    instance = deployment.instances[instance_id]
    return deployment.implements(instance, name) and not deployment.runs(instance, name)


def _forced(deployment: Deployment, params: dict, fresh: set[str]) -> list[str]:
    """``reinstall_list``'s instances with what they contain (Stoker's), those not added or removed."""
    found: list[str] = []
    for instance_id in params.get("reinstall_list") or []:
        if instance_id not in deployment.instances:
            raise WorkflowError(f"reinstall_list: node instance {instance_id} is not in deployment {deployment.id}")
        found += [i for i in deployment.contained(instance_id) if i not in found and i not in fresh]
    return found


def update_graph(deployment: Deployment, ids: list[str]) -> Graph:
    """Each instance's update operations and its relationships' ``update`` (both sides), then its mark of
    success, in relationship order; each runs where the instance is to be updated and drifted there."""
    chains = Chains()
    full = f"{RELATIONSHIP_LIFECYCLE}.update"
    for instance_id in ids:
        instance = deployment.instances[instance_id]
        own = [[Step(UPDATE, instance_id, name, f"{LIFECYCLE}.{name}", when="update-own")] for name in UPDATE_OPERATIONS
               if deployment.runs(instance, f"{LIFECYCLE}.{name}")]
        between = [[Step(UPDATE, instance_id, "update", full, relationship=index, side=side, when=f"update-{side}")]
                   for index in range(len(instance.relationships)) for side in ("source", "target")
                   if has_implementation(deployment.relationship_operation(instance, index, side, full))]
        if own or between:
            chains.chain(instance_id, own + between + [[Step(UPDATE, instance_id, "updated", when="update",
                                                             act="updated")]])
    order(deployment, [i for i in ids if i in chains.first], chains, reverse=False)
    return chains.graph


# -- the deciding steps -------------------------------------------------------------------------------------
def _memo(runner: Any) -> dict:
    return runner.memo[MEMO]


def decide(runner: Any, step: Step) -> None:
    """Which considered instances update and which reinstall, from their drift checks (once per execution)."""
    deployment, params, memo, execution_id = runner.deployment, runner.workflow_parameters, _memo(runner), \
        runner.execution_id
    considered = memo["considered"]
    if any(plans.planned(deployment.instances[i], execution_id) is not None for i in considered):
        return
    inside, forced = set(considered), set(memo["forced"])
    reinstall, drifted, checked = set(forced), set(), set()
    if not params.get("skip_drift_check"):
        for instance_id in considered:
            instance = deployment.instances[instance_id]
            if instance_id in forced:
                continue
            if deployment.runs(instance, f"{LIFECYCLE}.check_drift"):
                checked.add(instance_id)
            if health.failed_drift_check(instance):
                reinstall |= set(deployment.contained(instance_id))
            elif health.has_drift(instance):
                drifted.add(instance_id)
    changed = {i for i in considered if deployment.instances[i].node_id in memo["reinstall_nodes"]}
    fake = changed - checked
    runner.change_system([(i, (DRIFTS[0],), {"ok": True, "result": True, "task": None}) for i in sorted(fake)])
    drifted |= fake
    for instance_id in [i for i in considered if i in drifted and i not in reinstall]:
        instance = deployment.instances[instance_id]
        if health.own_drift(instance) and not any(deployment.runs(instance, f"{LIFECYCLE}.{name}")
                                                  for name in UPDATING):
            reinstall |= set(deployment.contained(instance_id))
    update = drifted - reinstall
    if params.get("force_reinstall"):
        reinstall, update = reinstall | update, set()
    plans.mark(runner, {i: [a for a, chosen in (("update", i in update), ("reinstall", i in reinstall & inside),
                                                ("fake-drift", i in fake)) if chosen] for i in considered})


def heal_decide(runner: Any, step: Step) -> None:
    """The instances to update that fail their status check heal where they can, else are reinstalled with what
    they contain (instead of updated)."""
    deployment, execution_id = runner.deployment, runner.execution_id
    considered = _memo(runner)["considered"]
    updating = [i for i in considered if plans.takes(deployment.instances[i], execution_id, "update")]
    if any(plans.takes(deployment.instances[i], execution_id, "status-checked") for i in updating):
        return  # decided already (a resume)
    healthy = {i for i in updating if health.healthy(deployment.instances[i], require_task=False)}
    to_heal, to_reinstall = split(deployment, updating, healthy)
    plans.change(runner, {i: (["heal", "status-checked"], []) for i in to_heal}
            | {i: (["status-checked"], []) for i in set(updating) - to_heal - to_reinstall}
            | {i: (["reinstall"], ["update"]) for i in to_reinstall & set(considered)})


def healed(runner: Any, step: Step) -> None:
    """Those whose heal failed are reinstalled instead of updated (their heal_failed mark goes)."""
    _fall_back(runner, "heal_failed")


def updated(runner: Any, step: Step) -> None:
    """Those whose update failed are reinstalled; with ``skip_reinstall`` none is but ``reinstall_list``'s."""
    _fall_back(runner, "update_failed")
    if runner.workflow_parameters.get("skip_reinstall"):
        forced = set(_memo(runner)["forced"])
        plans.change(runner, {i: ([], ["reinstall"]) for i in _memo(runner)["considered"] if i not in forced})


def _fall_back(runner: Any, mark: str) -> None:
    failed = [i for i in _memo(runner)["considered"]
              if health.marked(runner.deployment.instances[i], mark, runner.execution_id)]
    runner.change_system([(i, (mark,), health.GONE) for i in failed])
    plans.change(runner, {i: (["reinstall"], ["update"]) for i in failed})


def succeeded(runner: Any, step: Step) -> None:
    """An update that ran removes the instance's drift (as Cloudify's ``_on_update_success``)."""
    instance = runner.deployment.instances[step.instance]
    own = health.own_drift(instance) and any(runner.deployment.runs(instance, f"{LIFECYCLE}.{name}")
                                             for name in UPDATE_OPERATIONS)
    full = f"{RELATIONSHIP_LIFECYCLE}.update"
    between = any(_updates_between(runner, replace(step, relationship=index, side=side))
                  for index in range(len(instance.relationships)) for side in ("source", "target")
                  if has_implementation(runner.deployment.relationship_operation(instance, index, side, full)))
    if own or between:
        runner.change_system([(step.instance, (DRIFTS[0],), None)])


def clean(runner: Any, step: Step) -> None:
    """The reinstalled instances (unless the drift check was skipped) and those marked drifted lose their drift;
    the execution's marks go."""
    deployment, execution_id = runner.deployment, runner.execution_id
    considered = _memo(runner)["considered"]
    checked = not runner.workflow_parameters.get("skip_drift_check")
    changes = []
    for instance_id in considered:
        instance = deployment.instances[instance_id]
        if plans.takes(instance, execution_id, "fake-drift") or (
                checked and plans.takes(instance, execution_id, "reinstall")):
            changes += [(instance_id, (key,), health.GONE) for key in DRIFTS if key in instance.system_properties]
    runner.change_system(changes)
    plans.clean(runner, considered)


def _updates_own(runner: Any, step: Step) -> bool:
    instance = runner.deployment.instances[step.instance]
    return plans.going(instance, runner.execution_id, "update", "update_failed") and health.own_drift(instance)


def _updates_between(runner: Any, step: Step) -> bool:
    """A relationship's update runs where that side's drift was found (kept on the source by target, on the
    target by source)."""
    source = runner.deployment.instances[step.instance]
    target_id = source.relationships[step.relationship]["target_id"]
    if not plans.going(source, runner.execution_id, "update", "update_failed"):
        return False
    if step.side == "source":
        return target_id in (source.system_properties.get(DRIFTS[1]) or {})
    target = runner.deployment.instances.get(target_id)
    return target is not None and source.id in (target.system_properties.get(DRIFTS[2]) or {})


#: by ``Step.when``
GUARDS = {"update-own": _updates_own, "update-source": _updates_between, "update-target": _updates_between}
#: by ``Step.act``
ACTIONS = {"update-decide": decide, "update-heal-decide": heal_decide, "update-healed": healed,
           "update-updated": updated, "update-clean": clean, "updated": succeeded}
