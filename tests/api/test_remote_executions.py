"""`stoker --url URL install|execution|event ...`: the blueprint half through a `stoker api` server,
with the same commands (and the same ``Started`` follower) as against the local database."""

from __future__ import annotations

import json
import uuid

import pytest
from click.testing import CliRunner

from stoker.cli import main

from .helpers import start_server

BLUEPRINT = """
tosca_definitions_version: cloudify_dsl_1_4
imports: [cloudify/types/types.yaml]
inputs:
  word: {type: string, default: hello}
node_templates:
  host:
    type: cloudify.nodes.Compute
    properties: {ip: 127.0.0.1, agent_config: {install_method: none}}
  app:
    type: cloudify.nodes.ApplicationModule
    interfaces:
      cloudify.interfaces.lifecycle:
        create: scripts/create.sh
    relationships:
      - {type: cloudify.relationships.contained_in, target: host}
outputs:
  said: {value: {get_attribute: [app, said]}}
"""

@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A server that lets its projects run script operations (they run on its host)."""
    tmp = tmp_path_factory.mktemp("remote-executions")
    server = start_server(tmp, f"sqlite:///{tmp / 'stoker.db'}", extra=("--allow-local-resources",))
    yield server
    server.stop()


@pytest.fixture
def remote(server):
    endpoint = server.endpoint("default")

    def stoker(*args: str):
        return CliRunner().invoke(main, ["--url", endpoint, *args], catch_exceptions=False)

    return stoker


@pytest.fixture
def blueprint(tmp_path):
    folder = tmp_path / f"app-{uuid.uuid4().hex[:6]}"
    (folder / "scripts").mkdir(parents=True)
    (folder / "blueprint.yaml").write_text(BLUEPRINT)
    (folder / "scripts" / "create.sh").write_text('ctx logger info "made by a script"\n'
                                                 'ctx instance runtime-properties said said-it\n')
    return folder / "blueprint.yaml"


def test_install_uploads_creates_and_follows_the_execution_on_the_server(remote, blueprint):
    name = blueprint.parent.name
    done = remote("install", str(blueprint), "-f", "json")
    assert done.exit_code == 0, done.output
    execution = json.loads(done.stdout)
    assert (execution["workflow_id"], execution["deployment_id"], execution["status"]) == ("install", name,
                                                                                          "terminated")
    # the events were followed as they landed, the script's log among them
    assert "made by a script" in done.stderr
    assert "workflow_succeeded" in done.stderr.splitlines()[-1]

    listed = json.loads(remote("execution", "list", "-d", name, "-f", "json").stdout)
    assert [(e["id"], e["status"]) for e in listed] == [(execution["id"], "terminated")]
    shown = json.loads(remote("execution", "get", execution["id"], "-f", "json").stdout)
    assert shown == execution
    events = json.loads(remote("event", "list", execution["id"], "--include-logs", "-f", "json").stdout)
    assert [e["event_type"] for e in events][0] == "workflow_started"
    assert any(e["message"] == "made by a script" for e in events)
    deployment = json.loads(remote("deployment", "get", name, "-f", "json").stdout)
    assert deployment["blueprint_id"] == name


def test_a_second_workflow_and_its_failure_exit_as_locally(remote, blueprint):
    name = blueprint.parent.name
    assert remote("install", str(blueprint)).exit_code == 0
    again = remote("execution", "start", "install", "-d", name, "--wait", "-f", "json")
    assert again.exit_code == 0, again.output
    missing = remote("execution", "start", "no_such_workflow", "-d", name)
    assert missing.exit_code == 1
    assert "Workflow no_such_workflow not found in deployment" in missing.output
    uninstalled = remote("uninstall", name, "-f", "json")
    assert uninstalled.exit_code == 0, uninstalled.output
    assert json.loads(uninstalled.stdout)["status"] == "terminated"


def test_what_the_server_does_not_serve_is_refused_in_one_line(remote):
    refused = remote("secret", "list")
    assert refused.exit_code == 1
    assert "not served over --url yet" in refused.output
    assert "Traceback" not in refused.output

