"""Cloudify's own ``cfy`` (PyPI ``cloudify`` 7.0.5) and cloudify-rest-client drive a blueprint's whole life on
``stoker api``: profile, upload, secret, deployment with inputs, install of the local web app, outputs, node
instances, events, executions, uninstall, deletes."""

from __future__ import annotations

import json
import re
import os
import signal
import subprocess
import tarfile
import urllib.request

import pytest

from ..helpers import BIN, child_env, free_port
from .conftest import EXAMPLES, PASSWORD, admin_server, cfy_in, cfy_on

pytestmark = pytest.mark.slow  # each `cfy` command is a process of its own

pytest.importorskip("cloudify_rest_client")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    yield from admin_server(tmp_path_factory, "cfy")


def _port(server) -> str:
    return server.url.rsplit(":", 1)[1]


def _stop_if_left(pid: int) -> None:
    """A failing test leaves no web server behind (uninstall stops it when the test passes)."""
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        pass


def test_cfy_drives_a_blueprint_through_its_life(server, tmp_path, request):
    base = tmp_path / "apps"
    cfy = cfy_on(server, tmp_path)

    def cfy_json(*args: str):
        return json.loads(cfy(*args, "--json"))

    assert "Blueprint uploaded" in cfy("blueprints", "upload", str(EXAMPLES / "local-app" / "blueprint.yaml"),
                                       "-b", "app")
    assert [b["id"] for b in cfy_json("blueprints", "list")] == ["app"]
    cfy("blueprints", "download", "app", "-o", str(tmp_path / "app.tar.gz"))
    with tarfile.open(tmp_path / "app.tar.gz") as kept:
        assert {"blueprint.yaml", "scripts/start_server.py"} <= set(kept.getnames())
    cfy("secrets", "create", "greeting", "-s", "from a secret", "--hidden-value")
    assert cfy_json("secrets", "get", "greeting")["value"] != "from a secret"
    port = free_port()
    inputs = json.dumps({"port": port, "greeting": "Hello through cfy", "base_dir": str(base)})
    assert "Deployment `web` created" in cfy("deployments", "create", "web", "-b", "app", "-i", inputs)
    out = cfy("executions", "start", "install", "-d", "web")
    assert "'install' workflow execution succeeded" in out
    outputs = cfy_json("deployments", "outputs", "web")
    request.addfinalizer(lambda: _stop_if_left(int(outputs["pid"]["value"])))
    url = outputs["url"]["value"]
    assert url == f"http://127.0.0.1:{port}/app.conf"
    with urllib.request.urlopen(url, timeout=10) as answer:  # the installed server serves its config
        assert "Hello through cfy" in answer.read().decode()
    instances = cfy_json("node-instances", "list", "-d", "web")
    assert sorted((i["node_id"], i["state"]) for i in instances) == [("config", "started"), ("server", "started")]
    assert cfy_json("node-instances", "get", instances[0]["id"])["deployment_id"] == "web"
    assert cfy_json("deployments", "capabilities", "web") == {}
    assert cfy_json("tokens", "create")["value"].startswith("stk_")
    executions = cfy_json("executions", "list", "-d", "web")
    assert [(e["workflow_id"], e["status"]) for e in executions] == [("install", "completed")]  # status_display
    events = cfy("events", "list", executions[0]["id"])
    assert "Task succeeded 'cloudify.interfaces.lifecycle.start'" in events
    assert "Finished executing workflow install" in cfy("events", "list", executions[0]["id"], "--tail")
    assert "'uninstall' workflow execution succeeded" in cfy("uninstall", "web")
    assert not (base / "web").exists()  # the uninstall's scripts removed the app's folder
    cfy("secrets", "delete", "greeting")  # uninstall deleted the deployment and its blueprint, as cfy's does
    assert cfy_json("deployments", "list") == [] and cfy_json("blueprints", "list") == []


def test_rest_client_drives_the_same_life(server, tmp_path):
    from cloudify_rest_client import CloudifyClient
    from cloudify_rest_client.exceptions import CloudifyClientError

    client = CloudifyClient(host="127.0.0.1", port=int(_port(server)), username="admin", password=PASSWORD,
                            tenant="default_tenant")
    assert client.manager.get_status()["status"] == "OK"
    client.blueprints.validate(str(EXAMPLES / "local-app" / "blueprint.yaml"), "rc-app")  # stores nothing
    with pytest.raises(CloudifyClientError):
        client.blueprints.get("rc-app")
    client.blueprints.upload(str(EXAMPLES / "local-app" / "blueprint.yaml"), "rc-app")
    port = free_port()
    client.deployments.create("rc-app", "rc-web", inputs={"port": port, "base_dir": str(tmp_path)},
                              labels=[{"env": "test"}])
    assert [d.id for d in client.deployments.list(_labels=["env=test"])] == ["rc-web"]
    execution = client.executions.start("rc-web", "install")
    while client.executions.get(execution.id).status not in ("terminated", "failed", "cancelled"):
        pass  # polled as cfy does; each get is a request
    assert client.executions.get(execution.id).status == "terminated"
    assert client.deployments.outputs.get("rc-web").outputs["url"] == f"http://127.0.0.1:{port}/app.conf"
    events = client.events.list(execution_id=execution.id, include_logs=True, _offset=0, _size=5)
    assert len(events) == 5 and events.metadata.pagination.total > 5
    later = client.events.list(execution_id=execution.id, include_logs=True, _offset=5, _size=1000)
    assert later.items[-1]["event_type"] == "workflow_succeeded"
    instance = next(i for i in client.node_instances.list(deployment_id="rc-web") if i.node_id == "server")
    updated = client.node_instances.update(instance.id, runtime_properties={**instance.runtime_properties,
                                                                            "note": "set"}, version=instance.version)
    assert updated.runtime_properties["note"] == "set"
    with pytest.raises(CloudifyClientError) as stale:
        client.node_instances.update(instance.id, runtime_properties={}, version=instance.version)
    assert stale.value.status_code == 409
    with pytest.raises(CloudifyClientError) as busy:
        client.blueprints.delete("rc-app")
    assert busy.value.status_code == 409
    uninstall = client.executions.start("rc-web", "uninstall")
    while client.executions.get(uninstall.id).status not in ("terminated", "failed", "cancelled"):
        pass
    client.deployments.delete("rc-web")
    client.blueprints.delete("rc-app")
    with pytest.raises(CloudifyClientError) as gone:
        client.blueprints.get("rc-app")
    assert gone.value.status_code == 404 and gone.value.error_code == "not_found_error"


SLOW = b"""tosca_definitions_version: cloudify_dsl_1_4
imports: [cloudify/types/types.yaml]
node_templates:
  first:
    type: cloudify.nodes.Root
    interfaces:
      cloudify.interfaces.lifecycle:
        create: scripts/slow.sh
  second:
    type: cloudify.nodes.Root
    relationships: [{type: cloudify.relationships.depends_on, target: first}]
    interfaces:
      cloudify.interfaces.lifecycle:
        create: scripts/mark.sh
"""
def _ended(client, execution_id: str) -> dict:
    while True:
        found = client.executions.get(execution_id)
        if found.status in ("terminated", "failed", "cancelled"):
            return found


def test_executions_cancel_kill_resume_and_list_paging(server, tmp_path):
    import tarfile

    from cloudify_rest_client import CloudifyClient

    client = CloudifyClient(host="127.0.0.1", port=int(_port(server)), username="admin", password=PASSWORD,
                            tenant="default_tenant")
    go = tmp_path / "go"
    folder = tmp_path / "slow"
    (folder / "scripts").mkdir(parents=True)
    (folder / "blueprint.yaml").write_bytes(SLOW)
    (folder / "scripts" / "slow.sh").write_bytes(b'while [ ! -f "%s" ]; do sleep 0.1; done\n' % str(go).encode())
    (folder / "scripts" / "mark.sh").write_bytes(b"ctx instance runtime-properties marked yes\n")
    archive = tmp_path / "slow.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(folder, arcname="slow")
    client.blueprints._upload(str(archive), "slow", application_file_name="blueprint.yaml")  # an archive, as sent
    for name in ("s1", "s2", "s3"):
        client.deployments.create("slow", name)

    started = client.executions.start("s1", "install")
    assert started.status in ("started", "pending")
    cancelled = client.executions.cancel(started.id, kill=True)  # the waiting script is killed
    assert _ended(client, cancelled.id).status == "cancelled"
    go.write_text("go")
    client.executions.resume(started.id)
    assert _ended(client, started.id).status == "terminated"
    second = next(i for i in client.node_instances.list(deployment_id="s1") if i.node_id == "second")
    assert second.runtime_properties["marked"] == "yes" and second.state == "started"

    listed = client.deployments.list(sort="id", is_descending=True, _include=["id"])
    assert [d["id"] for d in listed] == ["s3", "s2", "s1"] and set(listed[0]) == {"id"}
    paged = client.deployments.list(sort="id", _offset=1, _size=1)
    assert [d.id for d in paged] == ["s2"] and paged.metadata.pagination.total == 3
    assert [e.workflow_id for e in client.executions.list(deployment_id="s1")] == ["install"]


#: two hosts, an app in each (a scale of the host by one adds a host and its app)
SCALED = """tosca_definitions_version: cloudify_dsl_1_4
description: counted by the summaries
imports: [cloudify/types/types.yaml]
node_templates:
  host: {type: cloudify.nodes.Root, capabilities: {scalable: {properties: {default_instances: 2}}}}
  app: {type: cloudify.nodes.Root, relationships: [{type: cloudify.relationships.contained_in, target: host}]}
"""


def test_cfy_status_summaries_and_parameters_typed_as_text(server, tmp_path):
    """``cfy status`` lists the services; ``-p delta=1`` (text) scales as Cloudify's manager reads it; the
    summaries count what the lists hold, by one field or two, paged, and name the fields they allow."""
    from cloudify_rest_client import CloudifyClient
    from cloudify_rest_client.exceptions import CloudifyClientError

    cfy = cfy_in(tmp_path)
    assert cfy("profiles", "use", "127.0.0.1", "--rest-port", _port(server), "-u", "admin", "-p", PASSWORD,
               "-t", "default_tenant").returncode == 0
    idp = cfy("idp", "get")
    assert idp.returncode == 0 and "local" in idp.stdout, idp.stdout + idp.stderr
    me = cfy("users", "get", "admin")
    assert me.returncode == 0 and "admin" in me.stdout, me.stdout + me.stderr
    agents = cfy("agents", "list")
    assert agents.returncode == 0 and "Agents:" in agents.stdout and "error" not in agents.stdout + agents.stderr
    status = cfy("status")
    assert status.returncode == 0 and "not responding" not in status.stdout + status.stderr
    assert re.search(r"Database\s+\|\s+Active", status.stdout), status.stdout

    folder = tmp_path / "scaled"
    folder.mkdir()
    (folder / "blueprint.yaml").write_text(SCALED)
    client = CloudifyClient(host="127.0.0.1", port=int(_port(server)), username="admin", password=PASSWORD,
                            tenant="default_tenant")
    client.blueprints.upload(str(folder / "blueprint.yaml"), "scaled")
    client.deployments.create("scaled", "sc1")
    client.deployments.create("scaled", "sc2")
    assert _ended(client, client.executions.start("sc1", "install").id).status == "terminated"
    scaled = cfy("executions", "start", "scale", "-d", "sc1", "-p", "scalable_entity_name=host", "-p", "delta=1")
    assert scaled.returncode == 0, scaled.stdout + scaled.stderr
    with pytest.raises(CloudifyClientError) as wrong:
        client.executions.start("sc1", "scale", parameters={"scalable_entity_name": "host", "delta": "one"})
    assert wrong.value.status_code == 400 and "delta must be of type integer" in str(wrong.value)

    by_node = client.summary.node_instances.get(_target_field="node_id", deployment_id="sc1")
    assert sorted((i["node_id"], i["node_instances"]) for i in by_node) == [("app", 3), ("host", 3)]
    by_state = client.summary.node_instances.get(_target_field="deployment_id", _sub_field="state",
                                                 node_id="host")
    mine = {i["deployment_id"]: i for i in by_state if i["deployment_id"] in ("sc1", "sc2")}
    assert mine["sc1"]["node_instances"] == 3 and mine["sc1"]["by state"] == [{"state": "started",
                                                                               "node_instances": 3}]
    assert mine["sc2"]["by state"] == [{"state": "uninitialized", "node_instances": 2}]
    executions = client.summary.executions.get(_target_field="workflow_id", _sub_field="status_display",
                                               deployment_id="sc1")
    assert [(i["workflow_id"], i["by status_display"]) for i in executions] == [
        ("install", [{"status_display": "completed", "executions": 1}]),
        ("scale", [{"status_display": "completed", "executions": 1}])]
    second = client.summary.node_instances.get(_target_field="node_id", deployment_id="sc1", _size=1, _offset=1)
    assert [i["node_id"] for i in second] == ["host"] and second.metadata.pagination.total == 2
    with pytest.raises(CloudifyClientError) as unknown:
        client.summary.deployments.get(_target_field="colour")
    assert unknown.value.status_code == 400 and "Allowed values: blueprint_id" in str(unknown.value)


def test_sites_and_the_site_a_deployment_is_set_at(server, tmp_path):
    """``cfy sites`` made, renamed, listed and deleted; a deployment set at one (at creation or later, detached),
    its ``site_name`` shown and summarized; bad locations and unknown sites refused, nothing half-made."""
    from cloudify_rest_client import CloudifyClient
    from cloudify_rest_client.exceptions import CloudifyClientError

    client = CloudifyClient(host="127.0.0.1", port=int(_port(server)), username="admin", password=PASSWORD,
                            tenant="default_tenant")
    cfy = cfy_on(server, tmp_path)
    assert "Site `lab` created" in cfy("sites", "create", "lab", "--location", "32.07,34.78")
    client.sites.create("edge")
    for location, message in (("95,10", "latitude must be a number between -90 and 90"),
                              ("abc", 'the format is expected to be "latitude,longitude"')):
        with pytest.raises(CloudifyClientError) as refused:
            client.sites.create("bad", location=location)
        assert refused.value.status_code == 400 and message in str(refused.value)
    assert client.sites.get("lab").location == "32.07, 34.78"

    folder = tmp_path / "sited"
    folder.mkdir()
    (folder / "blueprint.yaml").write_text(SCALED)
    client.blueprints.upload(str(folder / "blueprint.yaml"), "sited")
    client.deployments.create("sited", "at-lab", site_name="lab")
    with pytest.raises(CloudifyClientError) as ghost:
        client.deployments.create("sited", "at-ghost", site_name="ghost")
    assert ghost.value.status_code == 404 and "ghost" in str(ghost.value)
    assert "at-ghost" not in [d.id for d in client.deployments.list()]  # nothing half-made
    client.deployments.create("sited", "later")
    cfy("deployments", "set-site", "later", "--site-name", "edge")
    cfy("sites", "update", "lab", "--new-name", "hq")
    assert {d.id: d.site_name for d in client.deployments.list(blueprint_id="sited")} == {"at-lab": "hq",
                                                                                         "later": "edge"}
    cfy("blueprints", "labels", "add", "env:lab,tier:edge", "sited")
    cfy("blueprints", "labels", "delete", "tier", "sited")
    assert client.blueprints.get("sited").labels == [{"key": "env", "value": "lab"}]
    by_site = client.summary.deployments.get(_target_field="site_name", blueprint_id="sited")
    assert sorted((i["site_name"], i["deployments"]) for i in by_site) == [("edge", 1), ("hq", 1)]
    cfy("deployments", "set-site", "later", "--detach-site")
    cfy("sites", "delete", "hq")
    assert {d.id: d.site_name for d in client.deployments.list(blueprint_id="sited")} == {"at-lab": None,
                                                                                         "later": None}
    assert sorted(s.name for s in client.sites.list()) == ["edge"]


def test_a_workflow_given_in_short_form_is_listed_as_cloudify_spells_it(server, tmp_path):
    """``hello: scripts/hello.sh`` (and ``plugin.module.task``) in a blueprint's workflows: the deployment is
    created, listed and its workflows shown (was a 500), over REST and with ``stoker workflows list``."""
    from cloudify_rest_client import CloudifyClient

    folder = tmp_path / "short"
    (folder / "scripts").mkdir(parents=True)
    (folder / "scripts" / "hello.sh").write_text("ctx logger info hello\n")
    (folder / "blueprint.yaml").write_text(SCALED + "workflows:\n  hello: scripts/hello.sh\n")
    client = CloudifyClient(host="127.0.0.1", port=int(_port(server)), username="admin", password=PASSWORD,
                            tenant="default_tenant")
    client.blueprints.upload(str(folder / "blueprint.yaml"), "short")
    client.deployments.create("short", "short")
    [hello] = [w for w in client.deployments.get("short").workflows if w.name == "hello"]
    assert (hello["plugin"], hello["operation"]) == ("script", "script_runner.tasks.execute_workflow")
    assert hello.parameters == {"script_path": {"default": "scripts/hello.sh"}}
    assert "short" in [d.id for d in client.deployments.list()]
    listed = subprocess.run([str(BIN / "stoker"), "--db-url", server.db_url, "workflows", "list", "-d", "short",
                             "-f", "json"], capture_output=True, text=True, timeout=60, env=child_env(tmp_path))
    assert listed.returncode == 0, listed.stderr
    assert {"name": "hello", "parameters": []} in json.loads(listed.stdout)


def test_deployments_listed_by_label_and_attribute_rules(server, tmp_path):
    """``cfy deployments list --labels-rule ... --attrs-rule ...`` (``POST /searches/deployments``)."""
    from cloudify_rest_client import CloudifyClient
    from cloudify_rest_client.exceptions import CloudifyClientError

    client = CloudifyClient(host="127.0.0.1", port=int(_port(server)), username="admin", password=PASSWORD,
                            tenant="default_tenant")
    folder = tmp_path / "ruled"
    folder.mkdir()
    (folder / "blueprint.yaml").write_text(SCALED)
    client.blueprints.upload(str(folder / "blueprint.yaml"), "ruled")
    for name, env in (("r-prod", "prod"), ("r-dev", "dev"), ("r-none", None)):
        client.deployments.create("ruled", name, labels=[{"env": env}] if env else None)
    cfy = cfy_on(server, tmp_path)

    def listed(*rules: str) -> list[str]:
        return sorted(d["id"] for d in json.loads(cfy("deployments", "list", *rules, "--json"))
                      if d["id"].startswith("r-"))

    assert listed("--labels-rule", "env=prod") == ["r-prod"]
    assert listed("--labels-rule", "env!=prod") == ["r-dev"]
    assert listed("--labels-rule", "env is null") == ["r-none"]
    assert listed("--attrs-rule", "blueprint_id starts-with rul", "--labels-rule", "env is not null") == [
        "r-dev", "r-prod"]
    with pytest.raises(CloudifyClientError) as bad:
        client.deployments.list(filter_rules=[{"key": "colour", "values": ["x"], "operator": "any_of",
                                               "type": "attribute"}])
    assert bad.value.status_code == 400 and bad.value.error_code == "invalid_filter_rule"

    by_blueprint = client.blueprints.list(filter_rules=[{"key": "id", "values": ["ruled"], "operator": "any_of",
                                                         "type": "attribute"}])
    assert [b.id for b in by_blueprint] == ["ruled"]
    assert json.loads(cfy("blueprints", "list", "--labels-rule", "tier=gold", "--json")) == []
    assert listed("--attrs-rule", "installation_status=inactive", "--labels-rule", "env=dev") == ["r-dev"]
    cfy("deployments", "filters", "create", "prod-only", "--labels-rule", "env=prod")
    saved = client.deployments_filters.get("prod-only")
    assert saved.labels_filter_rules == [{"key": "env", "values": ["prod"], "operator": "any_of", "type": "label"}]
    assert listed("--filter-id", "prod-only") == ["r-prod"]
    cfy("deployments", "filters", "update", "prod-only", "--labels-rule", "env=dev")
    assert listed("--filter-id", "prod-only") == ["r-dev"]
    group = client.deployment_groups.put("by-filter", filter_id="prod-only")
    assert group.deployment_ids == ["r-dev"]
    assert "prod-only" in [f.id for f in client.deployments_filters.list()]
    cfy("deployments", "filters", "delete", "prod-only")
    with pytest.raises(CloudifyClientError) as gone:
        client.deployments.list(filter_id="prod-only")
    assert gone.value.status_code == 404 and "DeploymentsFilter" in str(gone.value)
