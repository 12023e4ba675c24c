"""Install/uninstall/operation graphs run by the Runner on a deployment held in memory."""

from __future__ import annotations

import asyncio

import pytest

from stoker.engine.graph import WalkFailed
from stoker.workflows.lifecycle import install_graph, operation_graph, then, uninstall_graph
from stoker.workflows.model import Deployment, Instance
from stoker.workflows.operations import RetryPolicy
from stoker.workflows.execution_runner import Runner, StepFailed, first_failure
from stoker.workflows.writer import BatchWriter

LC = "cloudify.interfaces.lifecycle"
RL = "cloudify.interfaces.relationship_lifecycle"
CONTAINED = ["cloudify.relationships.depends_on", "cloudify.relationships.contained_in"]
CONNECTED = ["cloudify.relationships.depends_on", "cloudify.relationships.connected_to"]


class Plain:
    def node_properties(self, instance):
        return {}

    def operation_inputs(self, inputs, instance, target):
        return dict(inputs)


class Store:
    def __init__(self):
        self.instances: dict[str, dict] = {}
        self.events: list[dict] = []

    def commit(self, changes, events, edits):
        for instance_id, fields in changes.items():
            self.instances.setdefault(instance_id, {}).update(fields)
        for instance_id, instance_edits in edits.items():
            properties = self.instances.setdefault(instance_id, {}).setdefault("runtime_properties", {})
            for edit in instance_edits:
                edit(properties)
        self.events.extend(events)


def _op(path):
    return {"implementation": "script.script_runner.tasks.run", "inputs": {"script_path": path}}


def _deployment(tmp_path, ops: dict[str, list[str]], rel_ops: list[str] = ()) -> Deployment:
    """host <-contained_in- app -connected_to-> db; every listed operation appends to trace.txt."""
    trace = tmp_path / "trace.txt"
    script = tmp_path / "op.sh"
    script.write_text(f'echo "$(ctx operation name | sed "s/.*\\.//") $WHO" >> {trace}\n')

    def operations(who):
        return {f"{LC}.{name}": {**_op("op.sh"), "inputs": {"script_path": "op.sh", "WHO": who}}
                for name in ops.get(who, [])}

    def rel(target, hierarchy):
        return {"target_id": target, "type": hierarchy[-1], "type_hierarchy": hierarchy,
                "source_operations": {f"{RL}.{n}": {"implementation": "script.script_runner.tasks.run",
                                                    "inputs": {"script_path": "op.sh", "WHO": f"app->{target}:src"}}
                                      for n in rel_ops},
                "target_operations": {f"{RL}.{n}": {"implementation": "script.script_runner.tasks.run",
                                                    "inputs": {"script_path": "op.sh", "WHO": f"app->{target}:tgt"}}
                                      for n in rel_ops}}

    nodes = {
        "host": {"type": "cloudify.nodes.Compute", "operations": operations("host"), "relationships": []},
        "db": {"type": "cloudify.nodes.Root", "operations": operations("db"), "relationships": []},
        "app": {"type": "cloudify.nodes.Root", "operations": operations("app"),
                "relationships": [rel("host", CONTAINED), rel("db", CONNECTED)]},
    }
    instances = {
        "host_1": Instance("host_1", "host"), "db_1": Instance("db_1", "db"),
        "app_1": Instance("app_1", "app", relationships=[
            {"target_id": "host_1", "target_name": "host", "type": CONTAINED[-1]},
            {"target_id": "db_1", "target_name": "db", "type": CONNECTED[-1]}]),
    }
    return Deployment("dep", "bp", tmp_path, nodes, instances)


def _run(deployment, graph, done=frozenset(), policy=RetryPolicy()):
    store = Store()

    async def main():
        writer = BatchWriter(store.commit)
        try:
            return await Runner(deployment, writer, Plain(), "ex", "install", policy, done).run(graph)
        finally:
            writer.close()

    return asyncio.run(main()), store


def _states(store, instance_id):
    return [e["context"]["state"] for e in store.events
            if e["node_instance_id"] == instance_id and e["event_type"] == "workflow_node_event"]


def _trace(tmp_path):
    return (tmp_path / "trace.txt").read_text().splitlines()


def test_install_orders_instances_by_relationships_and_runs_each_lifecycle(tmp_path):
    all_ops = ["create", "configure", "start"]
    deployment = _deployment(tmp_path, {"host": all_ops, "db": all_ops, "app": all_ops + ["poststart"]},
                             ["preconfigure", "postconfigure", "establish"])
    complete, store = _run(deployment, install_graph(deployment, deployment.instances).graph)
    assert complete
    trace = _trace(tmp_path)
    app = [line.split()[0] for line in trace if "app" in line]
    assert app == ["create"] + ["preconfigure"] * 4 + ["configure"] + ["postconfigure"] * 4 + \
        ["start", "poststart"] + ["establish"] * 4
    # app waits for both its targets to be started
    assert trace.index("create app") > max(trace.index("start host"), trace.index("start db"))
    # source and target sides of one target node run together; target nodes one after the other
    assert max(trace.index("preconfigure app->host:src"), trace.index("preconfigure app->host:tgt")) < \
        min(trace.index("preconfigure app->db:src"), trace.index("preconfigure app->db:tgt"))
    assert _states(store, "app_1") == ["creating", "created", "configuring", "configured", "starting", "started"]
    assert {i: f["state"] for i, f in store.instances.items()} == {"host_1": "started", "db_1": "started",
                                                                   "app_1": "started"}


def test_noop_operations_skip_their_states_as_cloudify_does(tmp_path):
    deployment = _deployment(tmp_path, {"app": ["configure"]})
    _complete, store = _run(deployment, install_graph(deployment, deployment.instances).graph)
    assert _states(store, "app_1") == ["configuring", "configured", "started"]
    assert _states(store, "db_1") == ["started"]


def test_a_noop_instance_is_one_install_step_and_keeps_its_order_and_uninstall_states(tmp_path):
    deployment = _deployment(tmp_path, {"app": ["create"]})
    graph = install_graph(deployment, deployment.instances).graph
    steps = {}
    for step in graph.requires:
        steps.setdefault(step.instance, []).append(step.name)
    assert steps == {"host_1": ["started"], "db_1": ["started"], "app_1": ["create", "started"]}
    create = next(step for step in graph.requires if step.name == "create")
    assert {step.instance for step in graph.requires[create]} == {"host_1", "db_1"}  # still after its targets
    _complete, store = _run(deployment, graph)
    assert _trace(tmp_path) == ["create app"]
    assert _states(store, "app_1") == ["creating", "created", "started"]

    uninstall = uninstall_graph(deployment, deployment.instances).graph
    assert sorted(step.name for step in uninstall.requires if step.instance == "db_1") == ["deleted", "stop"]
    _complete, store = _run(deployment, uninstall)
    assert _states(store, "db_1") == ["stopping", "stopped", "deleted"]  # as Cloudify: stop's states are sure


def test_uninstall_runs_in_reverse_order(tmp_path):
    ops = ["stop", "delete"]
    deployment = _deployment(tmp_path, {"host": ops, "db": ops, "app": ops}, ["unlink"])
    for instance in deployment.instances.values():
        instance.state = "started"
    _complete, store = _run(deployment, uninstall_graph(deployment, deployment.instances).graph)
    trace = _trace(tmp_path)
    assert trace.index("delete app") < min(trace.index("stop host"), trace.index("stop db"))
    assert trace[0] == "stop app" and {trace[1], trace[2]} == {"unlink app->db:src", "unlink app->db:tgt"}
    assert _states(store, "app_1") == ["stopping", "stopped", "deleting", "deleted"]


def test_install_again_continues_where_instances_are(tmp_path):
    ops = ["create", "configure", "start"]
    deployment = _deployment(tmp_path, {"host": ops, "db": ops, "app": ops})
    deployment.instances["host_1"].state = "started"
    deployment.instances["db_1"].state = "configured"
    deployment.instances["app_1"].state = "creating"
    _run(deployment, install_graph(deployment, deployment.instances).graph)
    trace = _trace(tmp_path)
    assert "create host" not in trace and "start host" not in trace
    assert "configure db" not in trace and "start db" in trace
    assert trace[-3:] == ["create app", "configure app", "start app"]


def test_a_failure_stops_new_steps_and_names_operation_instance_and_stderr(tmp_path):
    deployment = _deployment(tmp_path, {"host": ["create"], "app": ["create"]})
    (tmp_path / "bad.sh").write_text("echo 'disk full' >&2\nexit 4\n")
    deployment.nodes["host"]["operations"][f"{LC}.create"] = _op("bad.sh")
    with pytest.raises(WalkFailed) as caught:
        _run(deployment, install_graph(deployment, deployment.instances).graph)
    message = first_failure(caught.value)
    assert message.startswith(f"{LC}.create on host_1 failed: script bad.sh exited with code 4")
    assert message.endswith("stderr (last lines):\ndisk full")
    assert deployment.instances["host_1"].state == "creating"
    assert deployment.instances["app_1"].state == "uninitialized"


def test_done_steps_do_not_run_again(tmp_path):
    ops = ["create", "configure", "start"]
    deployment = _deployment(tmp_path, {"host": ops})
    deployment.instances["host_1"].state = "creating"
    complete, _store = _run(deployment, install_graph(deployment, ["host_1"]).graph,
                            done=frozenset({"install:host_1:create"}))
    assert complete and _trace(tmp_path) == ["configure host", "start host"]


def test_operation_graph_and_then(tmp_path):
    deployment = _deployment(tmp_path, {"host": ["stop", "start"], "db": ["stop", "start"], "app": ["stop", "start"]})
    stop = operation_graph(deployment, f"{LC}.stop", list(deployment.instances), True, phase="stop")
    start = operation_graph(deployment, f"{LC}.start", list(deployment.instances), True, phase="start")
    _run(deployment, then(stop, start))
    trace = _trace(tmp_path)
    # one dependency order for every operation (cloudify-common's execute_operation): app, which depends on the
    # others, stops last and starts last
    assert trace[2] == "stop app" and trace[-1] == "start app"
    assert {line.split()[0] for line in trace[:3]} == {"stop"}


def test_step_failure_text_for_relationship_sides(tmp_path):
    deployment = _deployment(tmp_path, {}, ["preconfigure"])
    (tmp_path / "bad.sh").write_text("exit 1\n")
    deployment.nodes["app"]["relationships"][1]["target_operations"][f"{RL}.preconfigure"] = _op("bad.sh")
    with pytest.raises(WalkFailed) as caught:
        _run(deployment, install_graph(deployment, deployment.instances).graph)
    failure = next(e for e in caught.value.failures.values() if isinstance(e, StepFailed))
    assert "on app_1 (target side of its relationship #1) failed" in str(failure)


def test_instances_of_one_node_in_different_states_get_their_own_steps(tmp_path):
    # the graphs work a node's steps out once per state (its relationships run no operation): each
    # instance still gets what its own state calls for, under its own id, and runs it
    ops = ["create", "configure", "start", "stop", "delete"]
    deployment = _deployment(tmp_path, {"db": ops})
    states = {"db_1": "uninitialized", "db_2": "created", "db_3": "started", "db_4": "uninitialized"}
    for number, (instance_id, state) in enumerate(states.items()):
        deployment.instances[instance_id] = Instance(instance_id, "db", number, state)
    install = install_graph(deployment, list(states)).graph
    names = {}
    for step in install.requires:
        names.setdefault(step.instance, []).append(step.name)
    assert names == {"db_1": ["create", "configure", "start", "started"], "db_2": ["configure", "start", "started"],
                     "db_3": ["started"], "db_4": ["create", "configure", "start", "started"]}
    _complete, store = _run(deployment, install)
    assert _states(store, "db_2") == ["configuring", "configured", "starting", "started"]
    assert _states(store, "db_3") == []  # started already: nothing to set
    assert {step.instance for step in install.requires if step.name == "create"} == {"db_1", "db_4"}

    uninstall = uninstall_graph(deployment, list(states)).graph
    assert sorted(step.instance for step in uninstall.requires if step.name == "delete") == sorted(states)
