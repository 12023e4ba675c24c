"""Install, uninstall and operation graphs, as Cloudify orders them, for the engine's walker.

Each graph node is a ``Step``: one instance's lifecycle operation with the
states set around it, or one side (source/target) of one relationship
instance's operation.  An instance's steps form a chain; relationship
operations of one target node run together, target nodes one after the
other; and an instance waits for the instances it has relationships to
(uninstall: the other way round).  What an instance has done already (its
state) is not done again, so running install after a failure continues.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field, replace
from typing import Callable, Iterable

from stoker.engine.graph import Graph
from stoker.workflows.model import LIFECYCLE, RELATIONSHIP_LIFECYCLE, Deployment, Instance, has_implementation

CREATED_OR_LATER = {"created", "configuring", "configured", "starting", "started"}
NOT_RUNNING = {"stopped", "deleting", "deleted", "uninitialized", "configured"}


@dataclass(frozen=True, slots=True)  # one or more per instance: no __dict__ each
class Step:
    phase: str  # install, uninstall, operation...: the same instance may take part in two phases
    instance: str
    name: str
    operation: str | None = None
    before: str | None = None  # the state set before the operation
    after: str | None = None  # ...and after it succeeded
    relationship: int | None = None  # index into the instance's relationships
    side: str | None = None  # source | target
    #: set the states even when the operation is a no-op (stopping/stopped); otherwise, as in
    #: Cloudify, a no-op's states are skipped (a no-op instance goes uninitialized -> started)
    sure: bool = False
    #: names a condition the step runs on, decided when it is reached (``acting.GUARDS``: heal's and an
    #: update's steps for the instances their checks chose); else the step is passed over
    when: str | None = None
    #: names what the step does instead of an operation (``acting.ACTIONS``: decide, mark, clean)
    act: str | None = None
    _hash: int = field(init=False, repr=False, compare=False, default=0)

    def __post_init__(self) -> None:
        # the walker hashes each step a dozen times (graph sets, its counters): hashed once here
        object.__setattr__(self, "_hash", hash((self.phase, self.instance, self.name, self.relationship, self.side)))

    def __hash__(self) -> int:
        return self._hash

    @property
    def key(self) -> str:
        """Names the step within its execution (resume skips the keys that finished)."""
        parts = [self.phase, self.instance, self.name]
        if self.relationship is not None:
            parts += [str(self.relationship), self.side]
        return ":".join(parts)


class Chains:
    """Per-instance chains of step groups in one graph; ``first``/``last`` for edges between instances."""

    def __init__(self, graph: Graph | None = None):
        self.graph = graph or Graph()
        self.first: dict[str, list[Step]] = {}
        self.last: dict[str, list[Step]] = {}

    def chain(self, instance: str, groups: Iterable[list[Step]]) -> None:
        previous: list[Step] = []
        for group in groups:
            if not group:
                continue
            for step in group:
                self.graph.add(step, previous)
            if instance not in self.first:
                self.first[instance] = group
            previous = group
        if previous:
            self.last[instance] = previous

    def after(self, later: str, earlier: str) -> None:
        """Every first step of ``later`` waits for every last step of ``earlier``."""
        for step in self.first.get(later, []):
            self.graph.add(step, self.last.get(earlier, []))


def _relationship_groups(deployment: Deployment, instance: Instance, phase: str, operation: str,
                         reverse: bool = False) -> list[list[Step]]:
    full = f"{RELATIONSHIP_LIFECYCLE}.{operation}"
    if not deployment.implements_between(instance, full):
        return []
    groups = []
    indexed = list(enumerate(instance.relationships))
    for _target, members in itertools.groupby(indexed, key=lambda item: item[1].get("target_name")):
        group = [Step(phase, instance.id, operation, full, relationship=index, side=side)
                 for index, _rel in members for side in ("source", "target")
                 if has_implementation(deployment.relationship_operation(instance, index, side, full))]
        if group:
            groups.append(group)
    return groups[::-1] if reverse else groups


def _optional(deployment: Deployment, instance: Instance, phase: str, name: str, before: str | None = None,
              after: str | None = None) -> list:
    """The step of lifecycle operation ``name``, none when the node does not implement it: a no-op's
    states are skipped anyway, so its step would do nothing (a no-op instance is one step)."""
    full = f"{LIFECYCLE}.{name}"
    if not deployment.implements(instance, full):
        return []
    return [[Step(phase, instance.id, name, full, before=before, after=after)]]


def install_steps(deployment: Deployment, instance: Instance, phase: str = "install") -> list[list[Step]]:
    state, groups = instance.state, []
    if state not in CREATED_OR_LATER:
        if state != "creating":
            groups += _optional(deployment, instance, phase, "precreate")
        groups += _optional(deployment, instance, phase, "create", "creating", "created")
    if state not in ("started", "starting", "configured"):
        groups += _relationship_groups(deployment, instance, phase, "preconfigure")
        groups += _optional(deployment, instance, phase, "configure", "configuring", "configured")
    if state != "started":
        groups += _relationship_groups(deployment, instance, phase, "postconfigure")
        groups += _optional(deployment, instance, phase, "start", "starting")
        groups += _optional(deployment, instance, phase, "poststart")
        groups += _relationship_groups(deployment, instance, phase, "establish")
    groups.append([Step(phase, instance.id, "started", after="started")])
    return groups


def uninstall_steps(deployment: Deployment, instance: Instance, phase: str = "uninstall") -> list[list[Step]]:
    state, groups = instance.state, []
    if state not in NOT_RUNNING:
        prestop = _optional(deployment, instance, phase, "prestop", before="stopping")
        groups += prestop
        groups.append([Step(phase, instance.id, "stop", f"{LIFECYCLE}.stop",
                            None if prestop else "stopping", "stopped", sure=True)])
    elif state not in ("stopped", "deleting", "deleted"):
        groups.append([Step(phase, instance.id, "stopped", after="stopped")])
    if state not in ("deleted", "uninitialized"):
        groups += _relationship_groups(deployment, instance, phase, "unlink", reverse=True)
        groups += _optional(deployment, instance, phase, "delete", "deleting")
        groups += _optional(deployment, instance, phase, "postdelete")
    groups.append([Step(phase, instance.id, "deleted", after="deleted")])
    return groups


def rollback_steps(deployment: Deployment, instance: Instance, phase: str = "rollback") -> list[list[Step]]:
    """Back to the resolved state before the one it was cut short in, as Cloudify's rollback: a
    starting instance stops (configured), a creating or configuring one is deleted (uninitialized)."""
    state, groups = instance.state, []
    if state == "starting":
        prestop = _optional(deployment, instance, phase, "prestop", before="stopping")
        groups += prestop
        groups.append([Step(phase, instance.id, "stop", f"{LIFECYCLE}.stop", None if prestop else "stopping",
                            "configured", sure=True)])
    elif state in ("creating", "configuring"):
        groups += _relationship_groups(deployment, instance, phase, "unlink", reverse=True)
        groups += _optional(deployment, instance, phase, "delete", "deleting")
        groups += _optional(deployment, instance, phase, "postdelete")
        groups.append([Step(phase, instance.id, "uninitialized", after="uninitialized")])
    return groups


def install_graph(deployment: Deployment, ids: Iterable[str], phase: str = "install") -> Chains:
    return _lifecycle_graph(deployment, list(ids), install_steps, phase, reverse=False)


def uninstall_graph(deployment: Deployment, ids: Iterable[str], phase: str = "uninstall") -> Chains:
    return _lifecycle_graph(deployment, list(ids), uninstall_steps, phase, reverse=True)


def rollback_graph(deployment: Deployment, ids: Iterable[str], phase: str = "rollback") -> Chains:
    return _lifecycle_graph(deployment, list(ids), rollback_steps, phase, reverse=True)


def _lifecycle_graph(deployment: Deployment, ids: list[str], steps, phase: str, reverse: bool) -> Chains:
    chains = Chains()
    shapes: dict[tuple[str, str], list] = {}
    for instance_id in ids:
        chains.chain(instance_id, _steps_of(deployment, deployment.instances[instance_id], steps, phase, shapes))
    order(deployment, ids, chains, reverse)
    return chains


def _steps_of(deployment: Deployment, instance: Instance, steps, phase: str, shapes: dict) -> list[list[Step]]:
    """``steps(deployment, instance, phase)``: worked out once per node and state and copied for each
    instance when the node's relationships run no operation (its instances' steps then differ by
    their id only: 100,000 instances of one node cost one look at its operations)."""
    if deployment.runs_relationship_operations(instance):
        return steps(deployment, instance, phase)
    shape = shapes.get((instance.node_id, instance.state))
    if shape is None:
        groups = steps(deployment, instance, phase)
        shapes[(instance.node_id, instance.state)] = [
            [(s.name, s.operation, s.before, s.after, s.relationship, s.side, s.sure) for s in group]
            for group in groups]
        return groups
    return [[Step(phase, instance.id, *fields) for fields in group] for group in shape]


def operation_graph(deployment: Deployment, operation: str, ids: Iterable[str], by_dependency_order: bool,
                    phase: str = "operation") -> Chains:
    """``operation`` on each of ``ids`` that has it; with ``by_dependency_order``, a relationship's target
    before its source (whatever the operation: Cloudify's ``execute_operation`` knows one order)."""
    chains = Chains()
    wanted = set(ids)
    everyone = list(deployment.instances) if by_dependency_order else list(ids)
    for instance_id in everyone:
        instance = deployment.instances[instance_id]
        if instance_id in wanted and has_implementation(deployment.operation(instance, operation)):
            step = Step(phase, instance_id, operation, operation)
        elif by_dependency_order:
            step = Step(phase, instance_id, "pass")  # keeps indirect dependencies in order
        else:
            continue
        chains.chain(instance_id, [[step]])
    if by_dependency_order:
        order(deployment, everyone, chains, reverse=False)
    return chains


def order(deployment: Deployment, ids: list[str], chains: Chains, reverse: bool) -> None:
    members = set(ids)
    for instance_id in ids:
        for rel in deployment.instances[instance_id].relationships:
            target = rel.get("target_id")
            if target in members and target != instance_id:
                if reverse:
                    chains.after(target, instance_id)
                else:
                    chains.after(instance_id, target)


def intact_links(deployment: Deployment, ids: Iterable[str]) -> list[list]:
    """``[source, index]`` of every relationship from an instance outside ``ids`` to one inside."""
    inside = set(ids)
    return [[instance.id, index] for instance in deployment.instances.values() if instance.id not in inside
            for index, rel in enumerate(instance.relationships) if rel.get("target_id") in inside]


def link_steps(deployment: Deployment, chains: Chains, links: list, name: str, phase: str) -> None:
    """Relationship operation ``name`` (establish or unlink) of ``links`` into ``chains``' graph:
    establish after its target is installed, unlink before its target is uninstalled."""
    full = f"{RELATIONSHIP_LIFECYCLE}.{name}"
    for source, index in links:
        instance = deployment.instances[source]
        target = instance.relationships[index]["target_id"]
        for side in ("source", "target"):
            if not has_implementation(deployment.relationship_operation(instance, index, side, full)):
                continue
            step = Step(phase, source, name, full, relationship=index, side=side)
            if name == "establish":
                chains.graph.add(step, chains.last.get(target, []))
            else:
                chains.graph.add(step)
                for first in chains.first.get(target, []):
                    chains.graph.add(first, [step])


def acting(phase: str, act: str) -> Graph:
    """A graph of one deployment-level step doing ``act`` (``Step.act``: deciding, marking, cleaning)."""
    graph = Graph()
    graph.add(Step(phase, "", act, act=act))
    return graph


def guarded(graph: Graph, when: Callable[[Step], str | None]) -> Graph:
    """The same graph, each step run on the condition ``when(step)`` names (``Step.when``)."""
    renamed = {step: replace(step, when=when(step)) for step in graph.requires}
    return Graph({renamed[step]: {renamed[r] for r in requires} for step, requires in graph.requires.items()})


def then(first: Chains, second: Chains) -> Graph:
    """One graph: every step of ``second`` after every step of ``first`` (restart, heal)."""
    graph = Graph({step: set(requires) for step, requires in first.graph.requires.items()})
    ends = [step for steps in first.last.values() for step in steps]
    for step, requires in second.graph.requires.items():
        graph.add(step, requires)
        if not requires:
            graph.add(step, ends)
    return graph


def in_order(stages: list[Graph]) -> Graph:
    """One graph running ``stages`` one after the other: each stage's first steps wait for the last of the
    stages before it."""
    result, last = Graph(), []
    for stage in stages:
        if not stage.requires:
            continue
        needed = {step for requires in stage.requires.values() for step in requires}
        for step, requires in stage.requires.items():
            result.add(step, requires or last)
        last = [step for step in stage.requires if step not in needed]
    return result
