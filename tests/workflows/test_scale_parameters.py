"""The scale workflow's parameters, as cloudify-common's ``scale_entity`` takes them, through ``stoker execution start
scale -d DEP -p ...``: ``rollback_if_failed`` (a failed scale out uninstalls what it added and rolls its deployment
modification back; false: both stay), ``include_instances`` / ``exclude_instances`` (which instances a scale in
removes, and Cloudify's refusals), ``abort_started`` (a started modification rolled back first), ``ignore_failure``
(a scale in's failed delete passed over) and a dry run (rows changed, no script run, as Cloudify's)."""

from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner

from stoker.cli import main

from .conftest import deploy

#: web's create fails while the file ``fail`` names exists, its delete while ``fail_delete`` does; both write
#: "<operation> <instance>" to ``trace``; the load balancer is connected to every web
BLUEPRINT = """
inputs:
  trace: {type: string}
  fail: {type: string}
  fail_delete: {type: string}
  webs: {type: integer, default: 1}
node_templates:
  lb:
    type: cloudify.nodes.Root
    relationships: [{type: cloudify.relationships.connected_to, target: web}]
  web:
    type: cloudify.nodes.Root
    interfaces:
      cloudify.interfaces.lifecycle:
        create: {implementation: scripts/op.sh, inputs: {TRACE: {get_input: trace}, FAIL: {get_input: fail}}}
        delete: {implementation: scripts/op.sh, inputs: {TRACE: {get_input: trace}, FAIL: {get_input: fail_delete}}}
    capabilities: {scalable: {properties: {default_instances: {get_input: webs}, max_instances: 5}}}
"""
SCRIPTS = {"scripts/op.sh": """
    echo "$(ctx operation name | sed 's/.*\\.//') $(ctx instance id)" >> "$TRACE"
    if [ -e "$FAIL" ]; then echo "refused: $FAIL exists" >&2; exit 1; fi
"""}


class Deployed:
    """Deployment ``dep`` of ``BLUEPRINT``, installed, and the ``stoker`` command on its database."""

    def __init__(self, engine, tmp_path, webs: int):
        self.engine = engine
        self.trace, self.fail, self.fail_delete = tmp_path / "trace", tmp_path / "fail", tmp_path / "fail-delete"
        self.env = {"STOKER_HOME": os.environ["STOKER_HOME"], "STOKER_DB_URL": f"sqlite:///{tmp_path / 'stoker.db'}"}
        deploy(engine, tmp_path / "bp", BLUEPRINT, SCRIPTS, inputs={
            "trace": str(self.trace), "fail": str(self.fail), "fail_delete": str(self.fail_delete), "webs": webs})
        assert engine.executions.start("install", "dep")["status"] == "terminated"
        self.trace.write_text("")

    def stoker(self, *args: str):
        return CliRunner().invoke(main, list(args), env=self.env, catch_exceptions=False)

    def scale(self, *parameters: str, ok: bool = True) -> str:
        """``stoker execution start scale -d dep -p ...``: what it printed."""
        args = [a for p in parameters for a in ("-p", p)]
        done = self.stoker("execution", "start", "scale", "-d", "dep", *args)
        assert (done.exit_code == 0) == ok, done.output
        return done.output

    def json(self, *args: str):
        done = self.stoker(*args, "-f", "json")
        assert done.exit_code == 0, done.output
        return json.loads(done.stdout)

    def webs(self) -> list[str]:
        return [i["id"] for i in self.json("node-instance", "list", "-d", "dep") if i["node_id"] == "web"]

    def lb_targets(self) -> list[str]:
        [lb] = [i for i in self.engine.blueprints.deployments.node_instances("dep") if i["node_id"] == "lb"]
        return [r["target_id"] for r in lb["relationships"]]

    def modifications(self) -> list[dict]:
        """The deployment's modifications, oldest first, as ``stoker deployment modifications get`` shows each."""
        return [self.json("deployment", "modifications", "get", m["id"])
                for m in self.json("deployment", "modifications", "list", "dep")]

    def last_scale(self) -> dict:
        return [e for e in self.json("execution", "list", "-d", "dep") if e["workflow_id"] == "scale"][-1]

    def lines(self) -> list[str]:
        return self.trace.read_text().splitlines()


@pytest.fixture
def one(engine, tmp_path):
    return Deployed(engine, tmp_path, 1)


@pytest.fixture
def three(engine, tmp_path):
    return Deployed(engine, tmp_path, 3)


def _added(modification: dict) -> list[str]:
    return [i["id"] for i in modification["node_instances"]["added_and_related"] if i.get("modification") == "added"]


def test_a_failed_scale_out_uninstalls_what_it_added_and_rolls_its_modification_back(one):
    [web] = one.webs()
    one.fail.write_text("")
    out = one.scale("scalable_entity_name=web", ok=False)
    assert "refused:" in out
    failed = one.last_scale()
    assert failed["status"] == "failed" and "cloudify.interfaces.lifecycle.create on web_" in failed["error"]
    [modification] = one.modifications()
    assert modification["status"] == "rolledback" and modification["ended_at"]
    [added] = _added(modification)
    assert one.lines() == [f"create {added}", f"delete {added}"]  # its uninstall ran before its row went
    assert one.webs() == [web] and one.lb_targets() == [web]
    assert {n["id"]: n["number_of_instances"] for n in one.json("node", "list", "-d", "dep")} == {"web": 1, "lb": 1}
    events = [e["message"] for e in one.json("event", "list", failed["id"], "--include-logs")]
    assert f"Rolling back deployment modification. [modification_id={modification['id']}]" in events
    assert events[-1].startswith("'scale' workflow execution failed:")
    resumed = one.stoker("execution", "resume", failed["id"])
    assert resumed.exit_code == 1 and f"modification {modification['id']} is rolledback" in resumed.output

    one.fail.unlink()  # nothing is left started: the deployment scales again
    one.scale("scalable_entity_name=web")
    assert len(one.webs()) == 2


def test_a_failed_rollback_uninstall_still_rolls_the_modification_back(one):
    one.fail.write_text("")
    one.fail_delete.write_text("")
    one.scale("scalable_entity_name=web", ok=False)
    [modification] = one.modifications()
    assert modification["status"] == "rolledback" and len(one.webs()) == 1
    events = [e["message"] for e in one.json("event", "list", one.last_scale()["id"], "--include-logs")]
    assert any(m.startswith("Rolling back the added instances failed: cloudify.interfaces.lifecycle.delete")
               for m in events)


def test_rollback_if_failed_false_leaves_the_added_instances_and_the_modification_started(one):
    [web] = one.webs()
    one.fail.write_text("")
    one.scale("scalable_entity_name=web", "rollback_if_failed=false", ok=False)
    [modification] = one.modifications()
    assert modification["status"] == "started"
    [added] = _added(modification)
    assert one.webs() == [web, added] and one.lb_targets() == [web, added]
    assert one.lines() == [f"create {added}"]  # no uninstall
    refused = one.scale("scalable_entity_name=web", "rollback_if_failed=maybe", ok=False)
    assert "parameter rollback_if_failed must be of type boolean" in refused


def test_abort_started_rolls_a_started_modification_back_first(one):
    [web] = one.webs()
    one.fail.write_text("")
    one.scale("scalable_entity_name=web", "rollback_if_failed=false", ok=False)
    [left] = one.modifications()
    [stale] = _added(left)
    one.fail.unlink()
    refused = one.scale("scalable_entity_name=web", ok=False)
    assert "existing started deployment modifications" in refused and left["id"] in refused

    one.trace.write_text("")
    one.scale("scalable_entity_name=web", "abort_started=true")
    first, second = one.modifications()
    assert (first["id"], first["status"], second["status"]) == (left["id"], "rolledback", "finished")
    [fresh] = _added(second)
    assert one.webs() == [web, fresh] and stale != fresh
    assert one.lines() == [f"delete {stale}", f"create {fresh}"]
    events = [e["message"] for e in one.json("event", "list", one.last_scale()["id"], "--include-logs")]
    assert f"Rolling back deployment modification. [modification_id={left['id']}]" in events


def test_include_instances_and_exclude_instances_choose_what_a_scale_in_removes(three):
    oldest, middle, newest = three.webs()
    three.scale("scalable_entity_name=web", "delta=-1", f"include_instances={oldest}")
    assert three.webs() == [middle, newest] and three.lines() == [f"delete {oldest}"]
    [modification] = three.modifications()
    assert modification["modified_nodes"] == {"web": {"instances": 2, "removed_ids_include_hint": [oldest],
                                                      "removed_ids_exclude_hint": []}}
    three.scale("scalable_entity_name=web", "delta=2")
    webs = three.webs()
    three.trace.write_text("")
    three.scale("scalable_entity_name=web", "delta=-2", f"exclude_instances={json.dumps([webs[-1], webs[-2]])}")
    assert three.webs() == webs[2:] and sorted(three.lines()) == sorted(f"delete {i}" for i in webs[:2])
    assert three.lb_targets() == webs[2:]


def test_include_instances_and_exclude_instances_are_refused_as_cloudify_refuses_them(three):
    webs = three.webs()
    available = f"Available instances were: {', '.join(sorted(webs))}"
    for parameters, error in [
        (["delta=1", f"include_instances={webs[0]}"], "Instances cannot be included or excluded when scaling up."),
        (["delta=-1", "include_instances=web_nope"],
         f"The following included instances did not exist: web_nope. {available}"),
        (["delta=-1", "exclude_instances=web_nope"],
         f"The following excluded instances did not exist: web_nope. {available}"),
        (["delta=-1", f"include_instances={webs[0]}", f"exclude_instances={webs[0]}"],
         f"The following instances were both excluded and included: {webs[0]}. {available}"),
        (["delta=-2", f"exclude_instances={json.dumps(webs[:2])}"],
         "Target number of instances is less than excluded instance count. Target number of instances was 1. "
         f"Excluded instances were: {webs[0]}, {webs[1]}. {available}"),
        (["delta=-1", f"include_instances={webs[0]}", "scale_compute=true"],
         "Cannot include or exclude instances while scale_compute is True. Please specify the desired compute "
         f"instances and set scale_compute to False. {available}"),
        (["delta=-1", "include_instances={\"a\": 1}"], "include_instances must be a node instance id or a list"),
    ]:
        out = three.scale("scalable_entity_name=web", *parameters, ok=False)
        assert error in out, (parameters, out)
    assert three.webs() == webs and three.modifications() == [] and three.lines() == []


def test_ignore_failure_passes_a_scale_in_s_failed_delete_over(three):
    webs = three.webs()
    three.fail_delete.write_text("")
    three.scale("scalable_entity_name=web", "delta=-1", ok=False)
    [kept] = three.modifications()
    assert kept["status"] == "rolledback" and three.webs() == webs  # rollback_if_failed: the instance stays

    three.scale("scalable_entity_name=web", "delta=-1", "ignore_failure=true")
    assert three.webs() == webs[:2] and three.modifications()[-1]["status"] == "finished"
    events = [e["message"] for e in three.json("event", "list", three.last_scale()["id"], "--include-logs")]
    assert "Ignoring task cloudify.interfaces.lifecycle.delete failure" in events


def test_delta_zero_scales_nothing_and_starts_no_modification(one):
    one.scale("scalable_entity_name=web", "delta=0")
    assert one.last_scale()["status"] == "terminated" and one.modifications() == [] and len(one.webs()) == 1


def test_a_dry_run_scale_changes_the_rows_as_cloudify_s_and_runs_no_script(one):
    """Cloudify's dry run skips operations and state changes, not the deployment modification: the new instance
    stays, uninitialized."""
    [web] = one.webs()
    done = one.stoker("execution", "start", "scale", "-d", "dep", "-p", "scalable_entity_name=web", "--dry-run")
    assert done.exit_code == 0, done.output
    [modification] = one.modifications()
    [added] = _added(modification)
    assert modification["status"] == "finished" and one.webs() == [web, added]
    states = {i["id"]: i["state"] for i in one.json("node-instance", "list", "-d", "dep")}
    assert states[added] == "uninitialized" and one.lines() == []
