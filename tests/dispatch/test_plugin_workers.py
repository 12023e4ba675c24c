"""Plugin operations of an execution run on real ``stoker worker`` processes: the worker that takes
the step unpacks the plugin uploaded on another host from the shared database, makes the plugin's
virtualenv (cloudify-common and the plugin) and runs the task there, its REST client reaching the
worker's own loopback REST API."""

from __future__ import annotations

import os
import textwrap

import pytest
from click.testing import CliRunner

from stoker.blueprint.plugin_catalog import DIGEST_FILE
from stoker.cli import main
from stoker.workflows import plugin_envs

from .test_executions import finish

pytestmark = pytest.mark.slow  # a worker makes a plugin virtualenv with pip

TASKS = '''
import os

from cloudify import ctx, manager
from cloudify.decorators import operation


@operation
def create(port, **kwargs):
    props = ctx.instance.runtime_properties
    props["port"] = port
    props["blueprint"] = manager.get_rest_client().deployments.get(ctx.deployment.id).blueprint_id
    props["worker"] = os.getpgid(os.getppid())  # the worker runs in a process group of its own
    props["cloudify"] = __import__("cloudify").__file__


@operation
def delete(**kwargs):
    ctx.logger.info("deleting %s on port %s", ctx.instance.id, ctx.instance.runtime_properties["port"])
'''

PLUGIN_YAML = """\
tosca_definitions_version: cloudify_dsl_1_5
plugins:
  net:
    executor: central_deployment_agent
    package_name: net-plugin
    package_version: '2.0'
node_types:
  net.Port:
    derived_from: cloudify.nodes.Root
    interfaces:
      cloudify.interfaces.lifecycle:
        create: {implementation: net.net_plugin.tasks.create, inputs: {port: {default: 0}}}
        delete: net.net_plugin.tasks.delete
"""

BLUEPRINT = """\
tosca_definitions_version: cloudify_dsl_1_5
imports: [cloudify/types/types.yaml, plugin:net-plugin]
node_templates:
  port:
    type: net.Port
    capabilities: {scalable: {properties: {default_instances: 2}}}
    interfaces:
      cloudify.interfaces.lifecycle:
        create: {inputs: {port: 8443}}
"""


def _upload_from_another_host(cluster, tmp_path, module: str, tasks: str, plugin_yaml: str) -> None:
    """``stoker plugin upload`` of a source folder (``module/tasks.py``), from a home the workers never see."""
    source = tmp_path / module.replace("_", "-")
    (source / module).mkdir(parents=True)
    (source / module / "__init__.py").write_text("")
    (source / module / "tasks.py").write_text(textwrap.dedent(tasks))
    (source / "plugin_1_5.yaml").write_text(plugin_yaml)
    uploaded = CliRunner().invoke(main, ["plugin", "upload", str(source)], catch_exceptions=False, env={
        "STOKER_HOME": str(tmp_path / "api-host"), "STOKER_DB_URL": cluster.db_url})
    assert uploaded.exit_code == 0, uploaded.output


def test_plugin_operations_run_on_the_workers_in_a_virtualenv_they_make(cluster, tmp_path, monkeypatch,
                                                                       plugin_wheels):
    home = cluster.tmp / "home"  # the workers' (another machine's) home: the plugin was never put there
    monkeypatch.setenv("STOKER_HOME", str(home))
    _upload_from_another_host(cluster, tmp_path, "net_plugin", TASKS, PLUGIN_YAML)
    assert not (home / "plugins").exists()
    (tmp_path / "bp").mkdir()
    (tmp_path / "bp" / "blueprint.yaml").write_text(BLUEPRINT)
    cluster.engine.blueprints.upload(tmp_path / "bp" / "blueprint.yaml", "bp")
    cluster.engine.blueprints.deployments.create("dep", "bp", {})
    cluster.env[plugin_envs.WHEELS_VARIABLE] = os.environ[plugin_envs.WHEELS_VARIABLE]
    worker = cluster.start_worker(concurrency=2)
    cluster.listening(1)

    installed = finish(cluster, cluster.engine.executions.start("install", "dep"))
    assert installed["status"] == "terminated", installed["error"]
    instances = cluster.engine.blueprints.deployments.node_instances("dep")
    env = home / "plugin-envs" / "@default" / "net-plugin" / "2.0"
    assert [(i["state"], i["runtime_properties"]) for i in instances] == [
        ("started", {"port": 8443, "blueprint": "bp", "worker": worker.pid, "cloudify": next(env.glob(
            "lib/python*/site-packages/cloudify/__init__.py")).as_posix()})] * 2
    # unpacked there, from the database, under its tenant's folder
    assert (home / "plugins" / "@default" / "net-plugin" / "2.0" / DIGEST_FILE).is_file()

    removed = finish(cluster, cluster.engine.executions.start("uninstall", "dep"))
    assert removed["status"] == "terminated", removed["error"]
    logs = [e["message"] for e in cluster.engine.executions.events(removed["id"], include_logs=True)]
    assert sorted(m for m in logs if m.startswith("deleting")) == sorted(
        f"deleting {i['id']} on port 8443" for i in instances)


STARTER_TASKS = '''
import os
import time

from cloudify import ctx, manager
from cloudify.decorators import operation


def _worker():
    return os.getpgid(os.getppid())  # the worker whose pool runs this task (its own process group)


@operation
def start_child(child, **kwargs):
    """As a Component does: start a workflow on another deployment and wait for its end."""
    client = manager.get_rest_client()
    started = client.executions.start(child, "install")
    deadline = time.monotonic() + 150
    while client.executions.get(started.id).status not in ("terminated", "failed", "cancelled") \\
            and time.monotonic() < deadline:
        time.sleep(0.2)
    props = ctx.instance.runtime_properties
    props["child_status"] = client.executions.get(started.id).status
    props["worker"] = _worker()


@operation
def mark(**kwargs):
    ctx.instance.runtime_properties["worker"] = _worker()
'''

STARTER_YAML = """\
tosca_definitions_version: cloudify_dsl_1_5
plugins:
  starter:
    executor: central_deployment_agent
    package_name: starter-plugin
    package_version: '1.0'
node_types:
  starter.Parent:
    derived_from: cloudify.nodes.Root
    interfaces:
      cloudify.interfaces.lifecycle:
        create: {implementation: starter.starter_plugin.tasks.start_child, inputs: {child: {default: child}}}
  starter.Child:
    derived_from: cloudify.nodes.Root
    interfaces:
      cloudify.interfaces.lifecycle: {create: starter.starter_plugin.tasks.mark}
"""


def test_an_execution_a_plugin_starts_runs_on_the_workers_not_in_the_task_s_process(cluster, tmp_path, monkeypatch,
                                                                                   plugin_wheels):
    """The parent's task holds its worker's only process while it waits for the child's execution: the
    child's step can only run on the other worker, as the API's executions do (served in the waiting
    worker's loopback API instead, it ran there)."""
    home = cluster.tmp / "home"
    monkeypatch.setenv("STOKER_HOME", str(home))
    home.mkdir(parents=True)
    # plugin operations run on the host: the workers' API lets project default start them
    (home / "stoker.conf").write_text("[api]\nlocal_resource_projects = default\n")
    _upload_from_another_host(cluster, tmp_path, "starter_plugin", STARTER_TASKS, STARTER_YAML)
    for name, node in (("child", "starter.Child"), ("parent", "starter.Parent")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "blueprint.yaml").write_text(
            "tosca_definitions_version: cloudify_dsl_1_5\nimports: [cloudify/types/types.yaml, plugin:starter-plugin]\n"
            f"node_templates:\n  one: {{type: {node}}}\n")
        cluster.engine.blueprints.upload(tmp_path / name / "blueprint.yaml", name)
        cluster.engine.blueprints.deployments.create(name, name, {})
    cluster.env[plugin_envs.WHEELS_VARIABLE] = os.environ[plugin_envs.WHEELS_VARIABLE]
    workers = {cluster.start_worker(concurrency=1).pid, cluster.start_worker(concurrency=1).pid}
    cluster.listening(2)

    installed = finish(cluster, cluster.engine.executions.start("install", "parent"))
    assert installed["status"] == "terminated", installed["error"]
    [parent] = cluster.engine.blueprints.deployments.node_instances("parent")
    [child] = cluster.engine.blueprints.deployments.node_instances("child")
    assert parent["runtime_properties"]["child_status"] == "terminated"
    assert child["state"] == "started"
    assert {parent["runtime_properties"]["worker"], child["runtime_properties"]["worker"]} == workers
