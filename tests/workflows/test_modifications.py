"""Deployment modifications run here: a scale's modification, ``stoker deployment modifications list|get|rollback``,
and a modification started and rolled back through the Python API."""

from __future__ import annotations

import json
import os
import sys

import pytest
from click.testing import CliRunner
from modification_blueprints import folder

from stoker.cli import main
from stoker.store.modification_records import ModificationRefused


def _deployed(engine, tmp_path):
    """Deployment ``dep`` installed: (the engine, the file whose presence fails a host's create)."""
    mark = tmp_path / "fail-create"
    engine.blueprints.upload(folder(tmp_path), "bp")
    engine.blueprints.deployments.create("dep", "bp", {"mark": str(mark)})
    assert engine.executions.start("install", "dep")["status"] == "terminated"
    return engine, mark


@pytest.fixture
def deployed(engine, tmp_path):
    return _deployed(engine, tmp_path)


def _ids(engine, node_id: str) -> list[str]:
    return [i["id"] for i in engine.blueprints.deployments.node_instances("dep") if i["node_id"] == node_id]


def test_stoker_deployment_modifications_list_get_and_rollback(deployed, tmp_path):
    engine, mark = deployed
    env = {"STOKER_HOME": os.environ["STOKER_HOME"], "STOKER_DB_URL": f"sqlite:///{tmp_path / 'stoker.db'}"}

    def stoker(*args: str):
        return CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)

    [host], [app], [lb] = _ids(engine, "host"), _ids(engine, "app"), _ids(engine, "lb")
    assert engine.executions.start("scale", "dep", {"scalable_entity_name": "app"})["status"] == "terminated"
    mark.write_text("")
    failed = engine.executions.start("scale", "dep", {"scalable_entity_name": "host", "rollback_if_failed": False})
    assert failed["status"] == "failed" and "create refused" in failed["error"]

    listed = stoker("deployment", "modifications", "list", "dep", "-f", "json")
    assert listed.exit_code == 0, listed.output
    done, started = json.loads(listed.stdout)
    assert (done["status"], started["status"]) == ("finished", "started")
    shown = json.loads(stoker("deployments", "modifications", "get", started["id"], "-f", "json").stdout)
    assert shown["context"] == {"blueprint_id": "bp", "deployment_id": "dep", "execution_id": failed["id"],
                                "workflow_id": "scale"}
    added = {i["id"] for i in shown["node_instances"]["added_and_related"] if i.get("modification") == "added"}
    assert added and added <= set(_ids(engine, "host") + _ids(engine, "app"))

    rolled = stoker("deployment", "modifications", "rollback", started["id"], "-f", "json")
    assert rolled.exit_code == 0, rolled.output
    assert json.loads(rolled.stdout)["status"] == "rolledback"
    assert (_ids(engine, "host"), len(_ids(engine, "app"))) == ([host], 2)
    lb_row = engine.blueprints.deployments.node_instance(lb)
    assert len(lb_row["relationships"]) == 2 and app in [r["target_id"] for r in lb_row["relationships"]]
    again = stoker("deployment", "modifications", "rollback", started["id"])
    assert again.exit_code == 1 and "It is already in rolledback status." in again.output
    unknown = stoker("deployment", "modifications", "get", "nope")
    assert unknown.exit_code == 1 and "Requested `DeploymentModification` with ID `nope` was not found" in unknown.output


def test_a_started_modification_refuses_another_until_it_is_rolled_back(any_engine, tmp_path):
    engine, _mark = _deployed(any_engine, tmp_path)
    modifications = engine.executions.modifications
    started = modifications.start("dep", {"host": {"instances": 2}}, {"by": "test"})
    assert len(_ids(engine, "host")) == 2 and started["status"] == "started"
    with pytest.raises(ModificationRefused, match="existing started deployment modifications") as refused:
        modifications.start("dep", {"app": {"instances": 2}})
    assert refused.value.error_code == "existing_started_deployment_modification_error"
    scale = engine.executions.start("scale", "dep", {"scalable_entity_name": "app"})
    assert scale["status"] == "failed" and started["id"] in scale["error"]
    assert modifications.rollback(started["id"])["status"] == "rolledback"
    assert len(_ids(engine, "host")) == 1
    assert [m["status"] for m in modifications.list("dep")] == ["rolledback"]
    engine.blueprints.deployments.delete("dep")  # its modifications go with it
    assert modifications.list() == []


#: an app whose create rolls back the deployment's started modification (from another process, as a user's
#: ``cfy deployments modifications rollback`` while the scale runs)
ROLLING_BACK = """tosca_definitions_version: cloudify_dsl_1_4
imports: [cloudify/types/types.yaml]
inputs:
  py: {type: string}
  db: {type: string}
node_templates:
  app:
    type: cloudify.nodes.Root
    interfaces:
      cloudify.interfaces.lifecycle:
        create: {implementation: scripts/create.sh, inputs: {PY: {get_input: py}, DB: {get_input: db}}}
"""
ROLLBACK_SCRIPT = """#!/bin/bash
"$PY" -c '
import sys
from stoker.engine.engine import Engine
modifications = Engine(db_url=sys.argv[1]).executions.modifications
for found in modifications.list("dep"):
    if found["status"] == "started":
        modifications.rollback(found["id"])
' "$DB"
"""


def test_a_scale_whose_modification_is_rolled_back_while_it_runs_fails(engine, tmp_path):
    home = tmp_path / "rolling"
    (home / "scripts").mkdir(parents=True)
    (home / "scripts" / "create.sh").write_text(ROLLBACK_SCRIPT)
    (home / "blueprint.yaml").write_text(ROLLING_BACK)
    engine.blueprints.upload(str(home / "blueprint.yaml"), "rolling")
    engine.blueprints.deployments.create("dep", "rolling", {"py": sys.executable,
                                                            "db": f"sqlite:///{tmp_path / 'stoker.db'}"})
    assert engine.executions.start("install", "dep")["status"] == "terminated"
    scaled = engine.executions.start("scale", "dep", {"scalable_entity_name": "app"})
    [modification] = engine.executions.modifications.list("dep")
    assert modification["status"] == "rolledback"
    assert scaled["status"] == "failed"
    assert scaled["error"] == (f"Cannot finish deployment modification: {modification['id']}. It is already in "
                               "rolledback status.")
    assert len(_ids(engine, "app")) == 1
