"""The rest of Cloudify's API on one server: plugins (``cfy plugins upload`` into Stoker's plugin catalog),
queued executions, ``cfy blueprints validate``, and creation-time checks of environment capabilities."""

from __future__ import annotations

import json
import tarfile
import time
import zipfile

import pytest

from .conftest import cfy_on, cloudify_server, rest_client

pytest.importorskip("cloudify_rest_client")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cfy-more")
    started = cloudify_server(tmp, [("admin", "default_tenant", "manager"), ("eve", "default_tenant", "viewer")],
                              extra=("--allow-local-resources",))
    started.home = tmp
    yield started
    started.stop()


def _client(server, user: str = "admin"):
    return rest_client(server, user)


@pytest.fixture
def cfy(server, tmp_path):
    return cfy_on(server, tmp_path)


def _wagon(folder, version: str):
    """A wagon (a tar.gz with <name>/package.json) and its plugin YAML declaring a node type."""
    (folder / "my_plugin").mkdir(exist_ok=True)
    (folder / "my_plugin" / "package.json").write_text(json.dumps({"package_name": "my-plugin",
                                                                   "package_version": version}))
    path = folder / f"my_plugin-{version}-py3-none-any.wgn"
    with tarfile.open(path, "w:gz") as archive:
        archive.add(folder / "my_plugin", "my_plugin")
    yaml = folder / "plugin.yaml"
    yaml.write_text("plugins:\n  mine:\n    executor: central_deployment_agent\n    package_name: my-plugin\n"
                    f"    package_version: '{version}'\nnode_types:\n  my.Thing:\n    derived_from: cloudify.nodes.Root\n")
    return path, yaml


def test_plugins_upload_list_get_delete_on_the_catalog_blueprints_import(server, cfy, tmp_path):
    from cloudify_rest_client.exceptions import CloudifyClientError

    wagon, yaml = _wagon(tmp_path, "1.2")
    assert "Plugin uploaded" in cfy("plugins", "upload", str(wagon), "-y", str(yaml))
    listed = json.loads(cfy("plugins", "list", "--json"))
    assert [(p["package_name"], p["package_version"]) for p in listed] == [("my-plugin", "1.2")]
    assert listed[0]["yaml_url_path"] == "plugin:my-plugin?version=1.2"
    shown = json.loads(cfy("plugins", "get", listed[0]["id"], "--json"))
    assert shown["id"] == listed[0]["id"] and shown["package_version"] == "1.2"
    assert _client(server).plugins.get(shown["id"]).archive_name == wagon.name
    # the uploaded plugin is in the catalog plugin: imports read: a blueprint using its type uploads
    blueprint = tmp_path / "bp" / "blueprint.yaml"
    blueprint.parent.mkdir()
    blueprint.write_text("tosca_definitions_version: cloudify_dsl_1_4\nimports: [cloudify/types/types.yaml, "
                         "'plugin:my-plugin']\nnode_templates:\n  thing: {type: my.Thing}\n")
    client = _client(server)
    client.blueprints.upload(str(blueprint), "uses-plugin")
    assert "thing" in [n["id"] for n in client.blueprints.get("uses-plugin").plan["nodes"]]
    with pytest.raises(CloudifyClientError) as refused:  # a viewer reads plugins, only a manager uploads
        _client(server, "eve").plugins.upload(str(wagon))
    assert refused.value.status_code == 403
    assert [p.id for p in _client(server, "eve").plugins.list()] == [listed[0]["id"]]
    client.blueprints.delete("uses-plugin")
    cfy("plugins", "delete", listed[0]["id"])
    assert client.plugins.list().items == []
    with pytest.raises(CloudifyClientError) as gone:
        client.plugins.get(listed[0]["id"])
    assert gone.value.status_code == 404


def test_a_plugin_upload_that_is_not_a_wagon_and_yaml_is_refused(server, tmp_path):
    from cloudify_rest_client.exceptions import CloudifyClientError

    lone = tmp_path / "lone.zip"
    with zipfile.ZipFile(lone, "w") as archive:
        archive.writestr("plugin.yaml", "plugins: {}\n")
    for path in (lone, _wagon(tmp_path, "1.0")[0]):
        with pytest.raises(CloudifyClientError) as refused:
            _client(server).plugins.upload(str(path))
        assert refused.value.status_code == 400 and "cfy plugins upload" in str(refused.value)
    escaping = tmp_path / "escaping.zip"
    with zipfile.ZipFile(escaping, "w") as archive:
        archive.writestr("../plugin.yaml", "plugins: {}\n")
    with pytest.raises(CloudifyClientError) as refused:
        _client(server).plugins.upload(str(escaping))
    assert refused.value.status_code == 400 and "outside the archive" in str(refused.value)
    assert not (tmp_path.parent / "plugin.yaml").exists() and _client(server).plugins.list().items == []


def test_an_environment_capability_without_its_parent_fails_creation_over_the_api(server, tmp_path):
    from cloudify_rest_client.exceptions import CloudifyClientError

    (tmp_path / "child.yaml").write_text("tosca_definitions_version: cloudify_dsl_1_4\n"
                                         "outputs:\n  region: {value: {get_environment_capability: region}}\n")
    client = _client(server)
    client.blueprints.upload(str(tmp_path / "child.yaml"), "child")
    with pytest.raises(CloudifyClientError) as refused:
        client.deployments.create("child", "orphan")
    assert refused.value.status_code == 400 and "csys-obj-parent" in str(refused.value)
    assert [d.id for d in client.deployments.list()] == []
    client.blueprints.delete("child")


GATED = """tosca_definitions_version: cloudify_dsl_1_4
imports: [cloudify/types/types.yaml]
inputs:
  gate: {type: string}
node_templates:
  held:
    type: cloudify.nodes.Root
    interfaces:
      cloudify.interfaces.lifecycle:
        create:
          implementation: scripts/hold.sh
          inputs: {GATE: {get_input: gate}}
"""


def _wait(client, execution_id: str, until: tuple[str, ...], bound: float = 60.0) -> str:
    deadline = time.monotonic() + bound
    while (status := client.executions.get(execution_id).status) not in until and time.monotonic() < deadline:
        time.sleep(0.1)
    return status


def test_queue_true_stores_a_queued_execution_started_when_the_running_one_ends(server, tmp_path):
    (tmp_path / "bp" / "scripts").mkdir(parents=True)
    (tmp_path / "bp" / "blueprint.yaml").write_text(GATED)
    (tmp_path / "bp" / "scripts" / "hold.sh").write_text(
        'touch "$GATE.held"; while [ ! -e "$GATE" ]; do sleep 0.05; done\n')
    gate = tmp_path / "gate"
    client = _client(server)
    client.blueprints.upload(str(tmp_path / "bp" / "blueprint.yaml"), "gated")
    client.deployments.create("gated", "held", inputs={"gate": str(gate)})
    install = client.executions.start("held", "install")
    deadline = time.monotonic() + 30
    while not gate.with_suffix(".held").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert gate.with_suffix(".held").exists()
    began = time.monotonic()
    queued = client.executions.start("held", "uninstall", queue=True)
    assert queued.status == "queued" and time.monotonic() - began < 5  # answered at once, not after 60 s
    dropped = client.executions.start("held", "uninstall", queue=True)
    assert client.executions.cancel(dropped.id).status == "cancelled"
    assert [e.status for e in client.executions.list(deployment_id="held", _sort="created_at")] == [
        "started", "queued", "cancelled"]
    gate.touch()
    assert _wait(client, install.id, ("terminated", "failed")) == "terminated"
    assert _wait(client, queued.id, ("terminated", "failed")) == "terminated"  # the install's end started it
    assert {i.state for i in client.node_instances.list(deployment_id="held")} == {"deleted"}
    assert client.executions.get(dropped.id).status == "cancelled"


def test_cfy_blueprints_validate_reads_the_standard_types_from_the_server(server, cfy, tmp_path):
    """cfy parses on the client; its import rules point the types URL at the server's /resources."""
    import yaml

    config = tmp_path / "cfy" / ".cloudify" / "config.yaml"
    settings = yaml.safe_load(config.read_text()) if config.exists() else {}
    settings["import_resolver"] = {"parameters": {"rules": [
        {"https://cloudify.co/spec/cloudify/": f"{server.url}/resources/spec/cloudify/"}], "fallback": False}}
    config.write_text(yaml.safe_dump(settings))
    folder = tmp_path / "bp"
    folder.mkdir()
    for dsl in ("1_4", "1_5"):  # Cloudify's types.yaml is 1_4: newer blueprints import it too
        (folder / f"ok_{dsl}.yaml").write_text(
            f"tosca_definitions_version: cloudify_dsl_{dsl}\n"
            "imports: [https://cloudify.co/spec/cloudify/7.0.0/types.yaml]\n"
            "node_templates:\n  vm: {type: cloudify.nodes.Compute}\n"
            "  web:\n    type: cloudify.nodes.WebServer\n"
            "    relationships: [{type: cloudify.relationships.contained_in, target: vm}]\n")
        assert "Blueprint validated successfully" in cfy("blueprints", "validate", str(folder / f"ok_{dsl}.yaml"))
    (folder / "bad.yaml").write_text("tosca_definitions_version: cloudify_dsl_1_4\n"
                                     "imports: [https://cloudify.co/spec/cloudify/7.0.0/types.yaml]\n"
                                     "node_templates:\n  vm: {type: cloudify.nodes.Nowhere}\n")
    failed = cfy("blueprints", "validate", str(folder / "bad.yaml"), ok=False)
    assert "cloudify.nodes.Nowhere" in failed


def test_the_manager_file_server_path_serves_types_per_dsl_version(server, tmp_path):
    """dsl-parser asks /resources/cloudify/types/types_1_3.yaml first for a 1_3 blueprint (a manager's layout)."""
    import httpx
    from dsl_parser.parser import parse_from_path

    for dsl in ("1_3", "1_4", "1_5"):
        served = httpx.get(f"{server.url}/resources/cloudify/types/types_{dsl}.yaml", timeout=10)
        assert served.status_code == 200
        (tmp_path / f"types_{dsl}.yaml").write_text(served.text)
        (tmp_path / f"bp_{dsl}.yaml").write_text(
            f"tosca_definitions_version: cloudify_dsl_{dsl}\nimports: [types_{dsl}.yaml]\n"
            "node_templates:\n  vm: {type: cloudify.nodes.Compute}\n")
        assert "install" in parse_from_path(str(tmp_path / f"bp_{dsl}.yaml"))["workflows"]
    missing = httpx.get(f"{server.url}/resources/cloudify/types/secrets.yaml", timeout=10)
    assert missing.status_code == 404 and missing.json()["error_code"] == "not_found_error"
