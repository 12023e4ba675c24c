"""A plugin task's ``cloudify.manager.get_rest_client()`` reaches Stoker's own Cloudify REST API, for its
execution's tenant only and only while it runs: ``stoker install`` with no server serves the API on a
loopback port of its own for the plugin."""

from __future__ import annotations

import json
import textwrap

import pytest
from click.testing import CliRunner
from sqlalchemy import create_engine, func, select

from stoker.cli import main
from stoker.store.api_tables import TOKENS

pytestmark = pytest.mark.slow  # a plugin virtualenv made with pip

TASKS = '''
from cloudify import ctx, manager
from cloudify.decorators import operation
from cloudify.exceptions import NonRecoverableError
from cloudify_rest_client.exceptions import CloudifyClientError


@operation
def say(**kwargs):
    ctx.instance.runtime_properties["said"] = "hello"


@operation
def look(**kwargs):
    """Everything read here comes over HTTP from the REST API, with the task's token."""
    client = manager.get_rest_client()
    props = ctx.instance.runtime_properties
    props["secret"] = client.secrets.get("db_password").value
    props["blueprint"] = client.deployments.get(ctx.deployment.id).blueprint_id
    instances = client.node_instances.list(deployment_id=ctx.deployment.id)
    props["nodes"] = sorted(i.node_id for i in instances)
    [peer] = [i for i in instances if i.node_id == "peer"]
    props["peer"] = [peer.state, peer.runtime_properties.get("said")]
    client.node_instances.update(peer.id, runtime_properties={**peer.runtime_properties, "seen_by": ctx.instance.id},
                                 version=peer.version)
    props["capability"] = client.deployments.capabilities.get("other")["capabilities"]["endpoint"]
    props["token"] = manager.get_rest_client().manager.get_version()["edition"] and ctx.rest_token[:4]
    try:
        other = manager.get_rest_client(tenant="another")
        other._client._should_retry_request = lambda *args: False  # the 403 is final: no minute of retries
        other.deployments.list()
        props["another_tenant"] = "reached"
    except CloudifyClientError as exc:
        props["another_tenant"] = exc.status_code
    if props["secret"] != "s3cret":
        raise NonRecoverableError("wrong secret")
'''

PLUGIN_YAML = """\
tosca_definitions_version: cloudify_dsl_1_5
plugins:
  rest:
    executor: central_deployment_agent
    package_name: rest-plugin
    package_version: '1.0'
node_types:
  rest.Peer:
    derived_from: cloudify.nodes.Root
    interfaces:
      cloudify.interfaces.lifecycle: {create: rest.rest_plugin.tasks.say}
  rest.Looker:
    derived_from: cloudify.nodes.Root
    interfaces:
      cloudify.interfaces.lifecycle: {create: rest.rest_plugin.tasks.look}
"""

BLUEPRINT = """\
tosca_definitions_version: cloudify_dsl_1_5
imports: [cloudify/types/types.yaml, plugin:rest-plugin]
node_templates:
  peer: {type: rest.Peer}
  looker:
    type: rest.Looker
    relationships: [{type: cloudify.relationships.depends_on, target: peer}]
"""

OTHER = """\
tosca_definitions_version: cloudify_dsl_1_5
imports: [cloudify/types/types.yaml]
capabilities:
  endpoint: {value: db.example:5432}
"""


def _cli(env, *args):
    done = CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)
    assert done.exit_code == 0, done.output
    return done.output


def test_a_plugin_reaches_the_rest_api_of_its_tenant_with_a_token_of_its_own(tmp_path, plugin_wheels):
    db = tmp_path / "s.db"
    env = {"STOKER_HOME": str(tmp_path / "home"), "STOKER_DB_URL": f"sqlite:///{db}"}
    source = tmp_path / "rest-plugin"
    (source / "rest_plugin").mkdir(parents=True)
    (source / "rest_plugin" / "__init__.py").write_text("")
    (source / "rest_plugin" / "tasks.py").write_text(textwrap.dedent(TASKS))
    (source / "plugin.yaml").write_text(PLUGIN_YAML)
    (tmp_path / "bp").mkdir()
    (tmp_path / "bp" / "blueprint.yaml").write_text(BLUEPRINT)
    (tmp_path / "bp" / "other.yaml").write_text(OTHER)
    _cli(env, "install", str(tmp_path / "bp" / "other.yaml"), "-b", "other", "-d", "other", "--no-wait")
    _cli(env, "plugin", "upload", str(source), "-y", str(source / "plugin.yaml"))
    _cli(env, "secret", "create", "db_password", "-s", "s3cret")
    _cli(env, "install", str(tmp_path / "bp" / "blueprint.yaml"), "-b", "bp", "-d", "dep", "--no-wait")
    instances = {i["node_id"]: i for i in json.loads(_cli(env, "node-instance", "list", "-d", "dep", "-f", "json"))}
    looked = instances["looker"]["runtime_properties"]
    assert instances["looker"]["state"] == "started"
    assert looked == {"secret": "s3cret", "blueprint": "bp", "nodes": ["looker", "peer"],
                      "peer": ["started", "hello"], "capability": "db.example:5432", "token": "stk_",
                      "another_tenant": 403}
    # the plugin's own update of another instance, through the API, is stored
    assert instances["peer"]["runtime_properties"] == {"said": "hello", "seen_by": instances["looker"]["id"]}
    with create_engine(f"sqlite:///{db}").connect() as conn:  # each task's token went with it
        assert conn.execute(select(func.count()).select_from(TOKENS)).scalar() == 0
