"""Cloudify's own results for the blueprint functions, replayed through ``Engine.blueprints``.

Each line of ``data/cloudify-functions.jsonl`` (recorded from Cloudify's DSL
parser, see ``data/CLOUDIFY.md``) is a blueprint, its inputs, a runtime state
and what Cloudify made of it.  Every case goes through the public API: the
blueprint is uploaded, secrets are created and other deployments (for their
capabilities) made first, the deployment is created with the case's labels,
runtime properties are written with the store's own call, and then outputs,
capabilities, node properties and operation inputs are read back.

Instance ids are random: ``{ni:NODE:K}`` and ``{sg:GROUP:K}`` in the
expectations stand for the K-th instance in creation order.  Lists from
get_attributes_list compare as multisets, and so do relationship instances.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from stoker.blueprint.functions.table import FUNCTIONS
from stoker.engine.engine import Engine
from stoker.errors import StokerError, ValidationFailed

CASES_FILE = Path(__file__).with_name("data") / "cloudify-functions.jsonl"
CASES = [json.loads(line) for line in CASES_FILE.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture(scope="module")
def shared_engine(tmp_path_factory):
    """One database for the cases; each case works in a project of its own."""
    home = tmp_path_factory.mktemp("cfy-home")
    engine = Engine(db_url=f"sqlite:///{home / 'stoker.db'}")
    yield engine
    engine.close()


def _service(case: dict, index: int, shared_engine, tmp_path, monkeypatch):
    """get_sys reads the tenant: cases that set it run in the default project of a fresh database."""
    monkeypatch.setenv("STOKER_HOME", str(tmp_path / "home"))
    if (case["state"] or {}).get("sys"):
        engine = Engine(db_url=f"sqlite:///{tmp_path / 'own.db'}")
        return engine, engine.blueprints
    return None, shared_engine.for_project(f"case{index}").blueprints


def _messages(exc: Exception) -> str:
    if isinstance(exc, ValidationFailed):
        return "\n".join(str(p) for p in exc.problems)
    return str(exc)


class _Run:
    """One case played through the service; ``names`` maps real ids to ``{ni:...}`` placeholders."""

    def __init__(self, case: dict, service, tmp_path: Path):
        self.case, self.service, self.tmp_path = case, service, tmp_path
        state = case["state"] or {}
        self.sys = state.get("sys") or {}
        self.blueprint_id = self.sys.get("blueprint_id", "bp")
        self.deployment_id = self.sys.get("deployment_id", "dep")
        self.names: dict[str, str] = {}

    def upload(self, blueprint_id: str, text: str) -> None:
        path = self.tmp_path / f"{blueprint_id}.yaml"
        path.write_text(text, encoding="utf-8")
        for script in re.findall(r"implementation: ([\w./-]+\.(?:py|sh))\b", text):
            (self.tmp_path / script).touch()  # a blueprint's scripts are beside it, or its upload is refused
        self.service.upload(path, blueprint_id)

    def prepare_world(self) -> None:
        state = self.case["state"] or {}
        for name, value in (state.get("secrets") or {}).items():
            self.service.secrets.create(name, value)
        for other, capabilities in (state.get("capabilities") or {}).items():
            blueprint = {"tosca_definitions_version": "cloudify_dsl_1_5", "node_templates": {},
                         "capabilities": {k: {"value": v} for k, v in capabilities.items()}}
            self.upload(f"{other}-bp", yaml.safe_dump(blueprint))
            self.service.deployments.create(other, f"{other}-bp")

    def create(self) -> None:
        state = self.case["state"] or {}
        self.upload(self.blueprint_id, self.case["blueprint"])
        labels = [(key, value) for key, values in (state.get("labels") or {}).items() for value in values]
        self.service.deployments.create(self.deployment_id, self.blueprint_id, inputs=self.case["inputs"],
                                        labels=labels, display_name=self.sys.get("deployment_name"),
                                        runtime_only_evaluation=bool(self.case.get("runtime_only_evaluation")),
                                        check_environment=False)  # the cases are dsl-parser's: no manager check
        counts: dict[str, int] = {}
        for instance in self.instances():
            counts[instance["node_id"]] = counts.get(instance["node_id"], 0) + 1
            self.names[instance["id"]] = f"{{ni:{instance['node_id']}:{counts[instance['node_id']]}}}"
            for group in instance["scaling_groups"]:
                if group["id"] not in self.names:
                    counts[group["name"] + "/sg"] = counts.get(group["name"] + "/sg", 0) + 1
                    self.names[group["id"]] = f"{{sg:{group['name']}:{counts[group['name'] + '/sg']}}}"
        self.write_runtime_properties(state.get("runtime_properties") or {})

    def instances(self) -> list[dict]:
        return self.service.deployments.node_instances(self.deployment_id)

    def write_runtime_properties(self, wanted: dict) -> None:
        seen: dict[str, int] = {}
        for instance in self.instances():
            node = instance["node_id"]
            if node not in wanted:
                continue
            value = wanted[node]
            k = seen[node] = seen.get(node, 0) + 1
            if isinstance(value, list):
                value = value[k - 1] if k <= len(value) else {}
            self.service.deployments.update_node_instance(instance["id"], self.deployment_id,
                                                          expected_version=instance["version"],
                                                          runtime_properties=value)

    def named(self, value):
        """Real ids replaced by their placeholders, everywhere in ``value``."""
        if isinstance(value, dict):
            return {self.names.get(k, k): self.named(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.named(v) for v in value]
        if isinstance(value, str):
            return self.names.get(value, value)
        return value


def _same(got, expected, multiset: bool = False) -> bool:
    """Equal, with lists compared as multisets when asked (instance order is not promised)."""
    if multiset and isinstance(got, list) and isinstance(expected, list):
        key = lambda v: json.dumps(v, sort_keys=True)  # noqa: E731
        return sorted(map(key, got)) == sorted(map(key, expected))
    if isinstance(got, dict) and isinstance(expected, dict):
        return got.keys() == expected.keys() and all(_same(got[k], expected[k], multiset) for k in got)
    return got == expected


def _evaluated(fn):
    try:
        return fn()
    except StokerError as exc:
        assert str(exc), "an error needs a message"
        return {"error": str(exc)}


def _check_errors_match(got, expected) -> None:
    """Where Cloudify failed, Stoker fails too (with its own words); elsewhere values match."""
    if isinstance(expected, dict) and set(expected) == {"error"} and isinstance(expected["error"], dict):
        assert isinstance(got, dict) and "error" in got, f"expected an error like {expected['error']}, got {got}"
        return
    assert not (isinstance(got, dict) and set(got) == {"error"}), f"unexpected error {got}, expected {expected}"
    assert _same(got, expected, multiset=True), f"{got}\n  != {expected}"


def _node_operations(node: dict) -> dict:
    return {name: op["inputs"] for name, op in node["operations"].items() if op["implementation"]}


def _check_static(run: _Run, expected: dict) -> None:
    deployments = run.service.deployments
    plan = deployments.plan(run.deployment_id)
    if "outputs" in expected:
        assert {k: v["value"] for k, v in plan["outputs"].items()} == expected["outputs"]
    if "capabilities" in expected:
        assert {k: v["value"] for k, v in plan["capabilities"].items()} == expected["capabilities"]
    if "inputs" in expected:
        assert deployments.inputs(run.deployment_id) == expected["inputs"]
    if "labels" in expected:
        assert plan["labels"] == expected["labels"]
    if "deployment_settings" in expected:
        assert plan["deployment_settings"] == expected["deployment_settings"]
    nodes = {node["id"]: node for node in deployments.nodes(run.deployment_id)}
    for name, wanted in (expected.get("nodes") or {}).items():
        node = nodes[name]
        if "properties" in wanted:
            assert node["properties"] == wanted["properties"]
        if "operations" in wanted:
            assert _node_operations(node) == wanted["operations"]
        if "relationships" in wanted:
            got = [{"type": r["type"], "target": r["target_id"], "source_operations": _node_operations(
                {"operations": r["source_operations"]}), "target_operations": _node_operations(
                {"operations": r["target_operations"]})} for r in node["relationships"]]
            assert got == wanted["relationships"]
    if "node_instances" in expected:
        got = [run.named({key: i[key] for key in ("id", "node_id", "host_id", "scaling_groups", "relationships")})
               for i in run.instances()]
        assert len(got) == len(expected["node_instances"])
        for mine, theirs in zip(got, expected["node_instances"]):
            assert _same(mine, theirs, multiset=True), f"{mine}\n  != {theirs}"


def _check_runtime(run: _Run, expected: dict) -> None:
    deployments = run.service.deployments
    if "outputs" in expected:
        _check_errors_match(run.named(_evaluated(lambda: deployments.outputs(run.deployment_id))), expected["outputs"])
    if "capabilities" in expected:
        _check_errors_match(_evaluated(lambda: deployments.capabilities(run.deployment_id)),
                            expected["capabilities"])
    for name, wanted in (expected.get("nodes") or {}).items():
        _check_errors_match(_evaluated(lambda: deployments.node_properties(run.deployment_id, name)),
                            wanted["properties"])
    nodes = {node["id"]: node for node in deployments.nodes(run.deployment_id)}
    for instance in run.instances():
        wanted = (expected.get("node_instances") or {}).get(run.names[instance["id"]])
        if wanted is None:
            continue
        node = nodes[instance["node_id"]]
        assert (instance["index"], instance["node_id"]) == (wanted["index"], wanted["node_id"])
        for operation, inputs in wanted["operations"].items():
            got = _evaluated(lambda: deployments.operation_inputs(run.deployment_id, instance["id"], operation))
            _check_errors_match(run.named(got), inputs)
        relationships = []
        for link in instance["relationships"]:
            rel = next(r for r in node["relationships"]
                       if r["target_id"] == link["target_name"] and r["type"] == link["type"])
            sides = {}
            for side in ("source", "target"):
                sides[f"{side}_operations"] = {
                    operation: run.named(_evaluated(lambda: deployments.operation_inputs(
                        run.deployment_id, instance["id"], operation, link["target_id"], side)))
                    for operation in _node_operations({"operations": rel[f"{side}_operations"]})}
            relationships.append({"type": link["type"], "target": run.names[link["target_id"]], **sides})
        assert len(relationships) == len(wanted["relationships"])
        for mine, theirs in zip(sorted(relationships, key=str), sorted(wanted["relationships"], key=str)):
            for key in ("type", "target"):
                assert mine[key] == theirs[key]
            for side in ("source_operations", "target_operations"):
                assert mine[side].keys() == theirs[side].keys()
                for operation in mine[side]:
                    _check_errors_match(mine[side][operation], theirs[side][operation])


@pytest.mark.parametrize("index", range(len(CASES)), ids=[case["id"] for case in CASES])
def test_case(index, shared_engine, tmp_path, monkeypatch):
    case = CASES[index]
    own_engine, service = _service(case, index, shared_engine, tmp_path, monkeypatch)
    try:
        run = _Run(case, service, tmp_path)
        run.prepare_world()
        expected = case["expected"]
        if "error" in expected:
            with pytest.raises(StokerError) as failure:
                run.create()
            message = _messages(failure.value)
            assert message.strip(), "a failure needs a message"
            assert "Traceback" not in message
            function = case["id"].split(".")[0]
            if function in FUNCTIONS and function in expected["error"]["message"]:
                assert function in message, f"the message should name {function}: {message}"
            return
        run.create()
        _check_static(run, expected.get("static") or {})
        _check_runtime(run, expected.get("runtime") or {})
    finally:
        if own_engine is not None:
            own_engine.close()
