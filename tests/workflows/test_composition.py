"""Service composition as Cloudify's standard types run it: a Component's child deployment
installed and uninstalled with its parent, its capabilities read through the parent, a
SharedResource's link and consumers, a PasswordSecret stored hidden -- through the CLI."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from stoker.cli import main

from .conftest import HEADER, write_blueprint

CHILD = """
inputs:
  size: {type: integer, default: 1}
  fail: {type: boolean, default: false}
node_templates:
  db:
    type: cloudify.nodes.Root
    interfaces:
      cloudify.interfaces.lifecycle:
        create:
          implementation: scripts/create.sh
          inputs: {fail: {get_input: fail}}
capabilities:
  endpoint: {value: {concat: ['db-', {get_input: size}]}}
  made: {value: {get_attribute: [db, made]}}
"""

CHILD_SCRIPT = {"scripts/create.sh": """
    if [ "$fail" = "true" ]; then echo "the disk is full" >&2; exit 3; fi
    ctx instance runtime-properties made yes
    """}

PARENT = """
inputs:
  fail: {type: boolean, default: false}
node_templates:
  shop:
    type: cloudify.nodes.Component
    properties:
      resource_config:
        blueprint:
          id: child-bp
          blueprint_archive: child
          main_file_name: blueprint.yaml
        deployment:
          id: child
          inputs: {size: 3, fail: {get_input: fail}}
          labels: [{tier: data}]
outputs:
  endpoint: {value: {get_capability: [child, endpoint]}}
  copied: {value: {get_attribute: [shop, capabilities, endpoint]}}
"""


def _run(env: dict, *args: str):
    return CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)


def _json(env: dict, *args: str):
    done = _run(env, *args, "-f", "json")
    assert done.exit_code == 0, done.output
    return json.loads(done.output[done.output.index(next(c for c in done.output if c in "[{")):])


@pytest.fixture
def env(tmp_path) -> dict:
    return {"STOKER_HOME": str(tmp_path / "home"), "STOKER_DB_URL": f"sqlite:///{tmp_path / 's.db'}"}


def _parent_folder(tmp_path: Path, parent: str = PARENT) -> Path:
    """The parent blueprint with the child blueprint's folder beside it (``blueprint_archive: child``)."""
    write_blueprint(tmp_path / "app" / "child", CHILD, CHILD_SCRIPT)
    return write_blueprint(tmp_path / "app", parent)


def test_component_installs_its_child_and_uninstalls_it(tmp_path, env):
    path = _parent_folder(tmp_path)
    assert _run(env, "blueprint", "upload", str(path), "-b", "app").exit_code == 0
    assert _run(env, "deployment", "create", "parent", "-b", "app").exit_code == 0
    installed = _run(env, "install", "parent")
    assert installed.exit_code == 0, installed.output
    # the child: uploaded, created with its inputs and labels (linked to the parent), installed
    assert _json(env, "blueprint", "get", "child-bp")["id"] == "child-bp"
    child = _json(env, "deployment", "get", "child")
    assert {"key": "csys-obj-parent", "value": "parent"} in child["labels"]
    assert {"key": "tier", "value": "data"} in child["labels"]
    [db] = _json(env, "node-instance", "list", "-d", "child")
    assert db["state"] == "started" and db["runtime_properties"]["made"] == "yes"
    # its capabilities: readable with get_capability, and copied into the parent's runtime properties
    assert _json(env, "deployment", "outputs", "parent") == {"endpoint": "db-3", "copied": "db-3"}
    [shop] = _json(env, "node-instance", "list", "-d", "parent")
    assert shop["runtime_properties"]["capabilities"] == {"endpoint": "db-3", "made": "yes"}
    assert shop["runtime_properties"]["deployment"] == {"id": "child"}
    assert shop["runtime_properties"]["blueprint"]["id"] == "child-bp"

    uninstalled = _run(env, "uninstall", "parent")
    assert uninstalled.exit_code == 0, uninstalled.output
    gone = _run(env, "deployment", "get", "child")
    assert gone.exit_code == 1 and "child" in gone.output
    assert _run(env, "blueprint", "get", "child-bp").exit_code == 1
    [shop] = _json(env, "node-instance", "list", "-d", "parent")
    assert shop["state"] == "deleted" and "deployment" not in shop["runtime_properties"]


def test_a_failed_child_install_fails_the_parents_node_with_the_childs_error(tmp_path, env):
    path = _parent_folder(tmp_path)
    assert _run(env, "blueprint", "upload", str(path), "-b", "app").exit_code == 0
    assert _run(env, "deployment", "create", "parent", "-b", "app", "-i", "fail=true").exit_code == 0
    installed = _run(env, "install", "parent")
    assert installed.exit_code == 1
    [execution] = [e for e in _json(env, "execution", "list", "-d", "parent") if e["workflow_id"] == "install"]
    assert execution["status"] == "failed"
    assert "cloudify.interfaces.lifecycle.start on shop" in execution["error"]
    assert "of deployment child failed" in execution["error"] and "the disk is full" in execution["error"]
    [child_execution] = [e for e in _json(env, "execution", "list", "-d", "child") if e["workflow_id"] == "install"]
    assert child_execution["status"] == "failed"
    [shop] = _json(env, "node-instance", "list", "-d", "parent")
    assert shop["state"] != "started"
    # the parent's uninstall still removes the half-made child
    assert _run(env, "uninstall", "parent").exit_code == 0
    assert _run(env, "deployment", "get", "child").exit_code == 1


def test_an_existing_blueprint_is_reused_and_auto_inc_suffix_numbers_the_child(tmp_path, env):
    parent = PARENT.replace("id: child\n", "id: child\n          auto_inc_suffix: true\n")
    path = _parent_folder(tmp_path, parent)
    assert _run(env, "blueprint", "upload", str(tmp_path / "app" / "child" / "blueprint.yaml"), "-b",
                "child-bp").exit_code == 0
    assert _run(env, "blueprint", "upload", str(path), "-b", "app").exit_code == 0
    for name in ("p1", "p2"):
        assert _run(env, "deployment", "create", name, "-b", "app").exit_code == 0
        assert _run(env, "install", name).exit_code == 0
    ids = sorted(d["id"] for d in _json(env, "deployment", "list") if d["id"].startswith("child"))
    assert ids == ["child-0", "child-1"]
    [shop] = _json(env, "node-instance", "list", "-d", "p2")
    assert shop["runtime_properties"]["deployment"] == {"id": "child-1"}


def test_a_missing_external_blueprint_and_a_url_archive_are_refused(tmp_path, env):
    parent = PARENT.replace("blueprint_archive: child", "external_resource: true")
    path = _parent_folder(tmp_path, parent)
    assert _run(env, "blueprint", "upload", str(path), "-b", "app").exit_code == 0
    assert _run(env, "deployment", "create", "parent", "-b", "app").exit_code == 0
    assert _run(env, "install", "parent").exit_code == 1
    [execution] = _json(env, "execution", "list", "-d", "parent")
    assert 'Blueprint ID "child-bp" does not exist on tenant "default_tenant", but external_resource is True' \
        in execution["error"]

    parent = PARENT.replace("blueprint_archive: child", "blueprint_archive: https://example.com/child.zip")
    path = write_blueprint(tmp_path / "app2", parent)
    assert _run(env, "blueprint", "upload", str(path), "-b", "app2").exit_code == 0
    assert _run(env, "deployment", "create", "parent2", "-b", "app2").exit_code == 0
    assert _run(env, "install", "parent2").exit_code == 1
    [execution] = _json(env, "execution", "list", "-d", "parent2")
    assert "is a URL: Stoker fetches nothing over the network" in execution["error"]
    assert "Traceback" not in execution["error"]
