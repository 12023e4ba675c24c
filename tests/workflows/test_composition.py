"""Service composition as Cloudify's standard types run it: a Component's child deployment
installed and uninstalled with its parent, its capabilities read through the parent, a
SharedResource's link and consumers, a PasswordSecret stored hidden -- through the CLI."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from stoker import secretbox
from stoker.cli import main
from stoker.engine.engine import Engine

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
  fail: {type: boolean, default: false, description: the child's create fails}
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
    # check_status through the parent: the child's own check_status ran, and it is installed and well
    assert _json(env, "execution", "start", "check_status", "-d", "parent")["status"] == "terminated"
    assert [e["workflow_id"] for e in _json(env, "execution", "list", "-d", "child")] == ["install", "check_status"]

    uninstalled = _run(env, "uninstall", "parent")
    assert uninstalled.exit_code == 0, uninstalled.output
    gone = _run(env, "deployment", "get", "child")
    assert gone.exit_code == 1 and "child" in gone.output
    assert _run(env, "blueprint", "get", "child-bp").exit_code == 1
    [shop] = _json(env, "node-instance", "list", "-d", "parent")
    assert shop["state"] == "deleted" and "deployment" not in shop["runtime_properties"]


def test_the_parents_workflow_parameters_are_the_childs_when_it_runs_the_same_workflow(tmp_path, env):
    """As Cloudify's component: the child's install gets the parent's install parameters."""
    path = _parent_folder(tmp_path)
    assert _run(env, "blueprint", "upload", str(path), "-b", "app").exit_code == 0
    assert _run(env, "deployment", "create", "parent", "-b", "app").exit_code == 0
    installed = _json(env, "execution", "start", "install", "-d", "parent", "-p", "greeting=hello",
                      "--allow-custom-parameters")
    assert installed["status"] == "terminated", installed["error"]
    [listed] = _json(env, "execution", "list", "-d", "child")
    child_install = _json(env, "execution", "get", listed["id"])
    assert child_install["parameters"]["greeting"] == "hello"
    assert child_install["parameters"] == _json(env, "execution", "get", installed["id"])["parameters"]


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
        done = _run(env, "install", name)
        assert done.exit_code == 0, done.output[-3000:]
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


SHARED = """
node_templates:
  cluster:
    type: cloudify.nodes.Root
capabilities:
  endpoint: {value: k8s.local}
  consumers: {value: {get_consumers: ids}}
"""

CONSUMER = """
node_templates:
  k8s:
    type: cloudify.nodes.SharedResource
    properties:
      resource_config: {deployment: {id: provider}}
  app:
    type: cloudify.nodes.Root
    relationships:
      - type: cloudify.relationships.connected_to_shared_resource
        target: k8s
        target_interfaces:
          cloudify.interfaces.relationship_lifecycle:
            establish: {inputs: {workflow_id: scale_up, parameters: {by: 2}}}
            unlink: {inputs: {workflow_id: scale_up, parameters: {by: -2}}}
outputs:
  endpoint: {value: {get_attribute: [k8s, capabilities, endpoint]}}
"""


def test_a_shared_resource_links_an_installed_deployment_and_lists_its_consumers(tmp_path, env):
    provider = write_blueprint(tmp_path / "provider", SHARED + """
workflows:
  scale_up:
    mapping: scripts/scale.sh
    parameters: {by: {type: integer}}
""", {"scripts/scale.sh": f'echo "$by" >> {tmp_path / "scaled"}\n'})
    assert _run(env, "blueprint", "upload", str(provider), "-b", "provider").exit_code == 0
    assert _run(env, "deployment", "create", "provider", "-b", "provider").exit_code == 0
    consumer = write_blueprint(tmp_path / "consumer", CONSUMER)
    assert _run(env, "blueprint", "upload", str(consumer), "-b", "consumer").exit_code == 0
    assert _run(env, "deployment", "create", "c1", "-b", "consumer").exit_code == 0
    refused = _run(env, "install", "c1")  # not installed, not on-demand: refused as Cloudify does
    assert refused.exit_code == 1
    [execution] = _json(env, "execution", "list", "-d", "c1")
    assert 'deployment "provider" is in an inactive state and isn\'t labeled as `csys-obj-type: on-demand-resource`' \
        in execution["error"]

    assert _run(env, "install", "provider").exit_code == 0
    assert _run(env, "uninstall", "c1").exit_code == 0
    done = _run(env, "install", "c1")
    assert done.exit_code == 0, done.output
    assert _json(env, "deployment", "outputs", "c1") == {"endpoint": "k8s.local"}
    [k8s] = [i for i in _json(env, "node-instance", "list", "-d", "c1") if i["node_id"] == "k8s"]
    assert k8s["runtime_properties"]["deployment"] == {"id": "provider"}
    assert k8s["runtime_properties"]["capabilities"]["endpoint"] == "k8s.local"
    # the consumer is labelled on the shared deployment, where get_consumers reads it
    assert {"key": "csys-consumer-id", "value": "c1"} in _json(env, "deployment", "get", "provider")["labels"]
    assert _json(env, "deployment", "capabilities", "provider")["consumers"] == ["c1"]
    # the relationship ran the shared deployment's workflow with its parameters
    assert (tmp_path / "scaled").read_text().split() == ["2"]

    assert _run(env, "uninstall", "c1").exit_code == 0
    assert (tmp_path / "scaled").read_text().split() == ["2", "-2"]
    assert _json(env, "deployment", "capabilities", "provider")["consumers"] == []
    assert _json(env, "deployment", "get", "provider")["id"] == "provider"  # a link: the shared one stays


def test_an_on_demand_shared_resource_is_installed_by_its_first_consumer_and_uninstalled_after_the_last(
        tmp_path, env):
    provider = write_blueprint(tmp_path / "provider", SHARED)
    assert _run(env, "blueprint", "upload", str(provider), "-b", "provider").exit_code == 0
    assert _run(env, "deployment", "create", "provider", "-b", "provider", "--label",
                "csys-obj-type:on-demand-resource").exit_code == 0
    consumer = write_blueprint(tmp_path / "consumer", CONSUMER.split("        target_interfaces:")[0].replace(
        "connected_to_shared_resource", "depends_on") + """
outputs:
  endpoint: {value: {get_attribute: [k8s, capabilities, endpoint]}}
""")
    assert _run(env, "blueprint", "upload", str(consumer), "-b", "consumer").exit_code == 0
    for name in ("c1", "c2"):
        assert _run(env, "deployment", "create", name, "-b", "consumer").exit_code == 0
        done = _run(env, "install", name)
        assert done.exit_code == 0, done.output[-3000:]
    [instance] = _json(env, "node-instance", "list", "-d", "provider")
    assert instance["state"] == "started"
    assert sorted(_json(env, "deployment", "capabilities", "provider")["consumers"]) == ["c1", "c2"]
    assert _run(env, "uninstall", "c1").exit_code == 0
    [instance] = _json(env, "node-instance", "list", "-d", "provider")
    assert instance["state"] == "started"  # c2 still consumes it
    assert _run(env, "uninstall", "c2").exit_code == 0
    [instance] = _json(env, "node-instance", "list", "-d", "provider")
    assert instance["state"] == "deleted"


PASSWORD = """
node_templates:
  db_password:
    type: cloudify.nodes.PasswordSecret
    properties: {length: 24, uppercase: 2, digits: 3, symbols: -1}
outputs:
  password: {value: {get_secret: {get_attribute: [db_password, secret_name]}}}
  name: {value: {get_attribute: [db_password, secret_name]}}
"""


def test_a_password_secret_is_generated_hidden_and_deleted_at_uninstall(tmp_path, env, monkeypatch):
    path = write_blueprint(tmp_path / "pw", PASSWORD)
    assert _run(env, "blueprint", "upload", str(path), "-b", "pw").exit_code == 0
    assert _run(env, "deployment", "create", "pw", "-b", "pw").exit_code == 0
    installed = _run(env, "install", "pw")
    assert installed.exit_code == 0, installed.output
    [instance] = _json(env, "node-instance", "list", "-d", "pw")
    name = instance["runtime_properties"]["secret_name"]
    assert name == f"ps_pw_{instance['id']}"
    assert instance["runtime_properties"]["password"] == {"get_secret": name}
    outputs = _json(env, "deployment", "outputs", "pw")
    assert outputs == {"password": "******", "name": name}
    shown = _json(env, "secret", "get", name)
    assert shown["is_hidden_value"] is True and shown["value"] == "******"
    monkeypatch.setenv("STOKER_HOME", env["STOKER_HOME"])  # the value itself, as an operation would read it
    engine = Engine(db_url=env["STOKER_DB_URL"])
    try:
        value = secretbox.decrypt(engine.blueprints.records.get_secret(engine.project_id, name)["value"])
    finally:
        engine.close()
    assert len(value) == 24 and sum(c.isupper() for c in value) >= 2 and sum(c.isdigit() for c in value) >= 3
    assert not any(not c.isalnum() for c in value)  # symbols: -1 leaves them out
    for execution in _json(env, "execution", "list", "-d", "pw"):
        events = _run(env, "event", "list", "-e", execution["id"], "--include-logs")
        assert events.exit_code == 0 and "Created password secret." in events.output and value not in events.output
    assert _run(env, "uninstall", "pw").exit_code == 0
    assert _run(env, "secret", "get", name).exit_code == 1
    [instance] = _json(env, "node-instance", "list", "-d", "pw")
    assert "password" not in instance["runtime_properties"]


def test_a_password_secret_refuses_impossible_requirements(tmp_path, env):
    path = write_blueprint(tmp_path / "pw", PASSWORD.replace("length: 24", "length: 4"))
    assert _run(env, "blueprint", "upload", str(path), "-b", "pw").exit_code == 0
    assert _run(env, "deployment", "create", "pw", "-b", "pw").exit_code == 0
    done = _run(env, "execution", "start", "execute_operation", "-d", "pw", "-p",
                "operation=cloudify.interfaces.validation.create")
    assert done.exit_code == 1
    [execution] = _json(env, "execution", "list", "-d", "pw")
    assert "Password length is required to be at least 6 characters" in execution["error"]


LIBRARY = """
inputs:
  port: {type: integer, default: 80}
node_types:
  web.Server:
    derived_from: cloudify.nodes.Root
    properties:
      port: {type: integer}
    interfaces:
      cloudify.interfaces.lifecycle:
        create: scripts/serve.sh
node_templates:
  server:
    type: web.Server
    properties: {port: {get_input: port}}
"""

USER = """
imports:
  - lib--blueprint:library
node_templates:
  app:
    type: lib--web.Server
    properties: {port: 8080}
outputs:
  served: {value: {get_attribute: [app, served]}}
  library_server: {value: {get_attribute: [lib--server, served]}}
"""


def test_blueprint_imports_read_an_uploaded_blueprint_into_its_namespace_and_run_its_scripts(tmp_path, env):
    library = write_blueprint(tmp_path / "library", LIBRARY, {
        "scripts/serve.sh": 'ctx instance runtime-properties served "port-$(ctx node properties port)"\n'})
    assert _run(env, "blueprint", "upload", str(library), "-b", "library").exit_code == 0
    user = write_blueprint(tmp_path / "user", USER)  # no scripts of its own: they are the library's
    uploaded = _run(env, "blueprint", "upload", str(user), "-b", "user")
    assert uploaded.exit_code == 0, uploaded.output
    assert _run(env, "deployment", "create", "user", "-b", "user", "-i", "lib--port=81").exit_code == 0
    installed = _run(env, "install", "user")
    assert installed.exit_code == 0, installed.output
    assert _json(env, "deployment", "outputs", "user") == {"served": "port-8080", "library_server": "port-81"}
    refused = _run(env, "blueprint", "delete", "library")  # as Cloudify: not while another blueprint imports it
    assert refused.exit_code == 1 and "Blueprint library is currently in use: blueprint user imports it" in \
        refused.output
    assert _run(env, "uninstall", "user").exit_code == 0
    assert _run(env, "deployment", "delete", "user").exit_code == 0
    assert _run(env, "blueprint", "delete", "user").exit_code == 0
    assert _run(env, "blueprint", "delete", "library").exit_code == 0


def test_blueprint_imports_need_a_namespace_and_an_uploaded_blueprint(tmp_path, env):
    bare = write_blueprint(tmp_path / "bare", USER.replace("lib--blueprint:library", "blueprint:library"))
    refused = _run(env, "blueprint", "upload", str(bare), "-b", "bare")
    assert refused.exit_code == 1
    assert "Invalid blueprint:library: blueprint import cannot be used without namespace" in refused.output
    missing = write_blueprint(tmp_path / "missing", USER)
    refused = _run(env, "blueprint", "upload", str(missing), "-b", "missing")
    assert refused.exit_code == 1
    assert "Requested blueprint import `library` was not found, please first upload the blueprint" in refused.output
    assert "Traceback" not in refused.output


def test_a_forced_cancel_of_the_parent_cancels_the_child_it_runs(tmp_path, engine):
    import threading

    write_blueprint(tmp_path / "app" / "child", CHILD, {"scripts/create.sh": "sleep 120\n"})
    engine.blueprints.upload(write_blueprint(tmp_path / "app", PARENT), "app")
    engine.blueprints.deployments.create("parent", "app")
    ended: dict = {}
    running = threading.Thread(target=lambda: ended.update(engine.executions.start("install", "parent")))
    running.start()
    try:
        for _ in range(600):  # until the child's script runs
            made = "child" in [d["id"] for d in engine.blueprints.deployments.list()]
            states = [i["state"] for i in engine.blueprints.deployments.node_instances("child")] if made else []
            if states == ["creating"]:
                break
            running.join(0.1)
        assert states == ["creating"]
        [parent] = engine.executions.list("parent")
        engine.executions.cancel(parent["id"], force=True)
        running.join(60)
        assert not running.is_alive()
    finally:
        running.join(150)
    assert ended["status"] == "cancelled"
    [child_execution] = engine.executions.list("child")
    assert child_execution["status"] == "cancelled"


def test_components_sharing_a_blueprint_upload_it_once_and_the_last_deletes_it(tmp_path, env):
    """Four Components of one blueprint id install at once: one uploads it, the others use it (as
    Cloudify does when an upload finds it exists); at uninstall it goes once no child uses it."""
    components = "".join(f"""
  shop{i}:
    type: cloudify.nodes.Component
    properties:
      resource_config:
        blueprint: {{id: child-bp, blueprint_archive: child}}
        deployment: {{id: child{i}, inputs: {{size: {i}}}}}
""" for i in range(4))
    path = _parent_folder(tmp_path, "node_templates:" + components)
    assert _run(env, "blueprint", "upload", str(path), "-b", "app").exit_code == 0
    assert _run(env, "deployment", "create", "parent", "-b", "app").exit_code == 0
    installed = _run(env, "install", "parent")
    assert installed.exit_code == 0, installed.output[-2000:]
    assert sorted(d["id"] for d in _json(env, "deployment", "list")) == ["child0", "child1", "child2", "child3",
                                                                          "parent"]
    assert _json(env, "deployment", "capabilities", "child2")["endpoint"] == "db-2"
    uninstalled = _run(env, "uninstall", "parent")
    assert uninstalled.exit_code == 0, uninstalled.output[-2000:]
    assert [b["id"] for b in _json(env, "blueprint", "list")] == ["app"]
