"""A plugin built on a real published library runs unchanged: its operations use
cloudify-utilities-plugins-sdk (installed with its dependencies from the package index into the
plugin's virtualenv beside cloudify-common), as plugins on a Cloudify manager do."""

from __future__ import annotations

import textwrap

import pytest

from stoker.blueprint.plugin_catalog import PluginCatalog

pytestmark = pytest.mark.slow  # a plugin virtualenv with the SDK's ~70 packages

SDK = "cloudify-utilities-plugins-sdk==0.0.130"

TASKS = '''
import os

from cloudify.decorators import operation
from cloudify_common_sdk.utils import get_ctx_instance, run_subprocess, skip_creative_or_destructive_operation


def _path(ctx):
    folder = ctx.local_deployment_workdir()
    os.makedirs(folder, exist_ok=True)
    return folder, ctx.node.properties["resource_id"]


@operation(resumable=True)
def create(ctx, **kwargs):
    folder, name = _path(ctx)
    exists = os.path.exists(os.path.join(folder, name))
    instance = get_ctx_instance()
    if skip_creative_or_destructive_operation("file", name, exists=exists, create_operation=True):
        instance.runtime_properties["adopted"] = True
        return
    with open(os.path.join(folder, name + ".part"), "w") as part:
        part.write(ctx.node.properties["content"])
    run_subprocess(["mv", name + ".part", name], cwd=folder)
    instance.runtime_properties["made"] = name


@operation(resumable=True)
def delete(ctx, **kwargs):
    folder, name = _path(ctx)
    path = os.path.join(folder, name)
    if not skip_creative_or_destructive_operation("file", name, exists=os.path.exists(path),
                                                  delete_operation=True):
        os.remove(path)
        ctx.logger.info("removed %s", name)
'''

SETUP = f'''
from setuptools import setup
setup(name="files-plugin", version="1.0", packages=["files_plugin"], install_requires=["{SDK}"])
'''

PLUGIN_YAML = """\
tosca_definitions_version: cloudify_dsl_1_5
plugins:
  files:
    executor: central_deployment_agent
    package_name: files-plugin
    package_version: '1.0'
node_types:
  files.File:
    derived_from: cloudify.nodes.Root
    properties:
      content: {default: ''}
    interfaces:
      cloudify.interfaces.lifecycle:
        create: files.files_plugin.tasks.create
        delete: files.files_plugin.tasks.delete
"""

BLUEPRINT = """\
tosca_definitions_version: cloudify_dsl_1_5
imports: [cloudify/types/types.yaml, plugin:files-plugin]
node_templates:
  made: {type: files.File, properties: {resource_id: made.txt, content: hello}}
  kept: {type: files.File, properties: {resource_id: kept.txt, use_external_resource: true}}
"""


def _plugin(tmp_path):
    folder = tmp_path / "files-plugin"
    (folder / "files_plugin").mkdir(parents=True)
    (folder / "files_plugin" / "__init__.py").write_text("")
    (folder / "files_plugin" / "tasks.py").write_text(textwrap.dedent(TASKS))
    (folder / "setup.py").write_text(SETUP)
    (folder / "plugin_1_5.yaml").write_text(PLUGIN_YAML)
    return folder


def test_a_plugin_on_the_utilities_sdk_installs_and_uninstalls(engine, tmp_path, plugin_wheels):
    plugin_wheels(SDK)
    PluginCatalog(tmp_path / "home" / "plugins").upload(_plugin(tmp_path), [])
    (tmp_path / "bp").mkdir()
    (tmp_path / "bp" / "blueprint.yaml").write_text(BLUEPRINT)
    engine.blueprints.upload(tmp_path / "bp" / "blueprint.yaml", "bp")
    engine.blueprints.deployments.create("dep", "bp")
    workdir = tmp_path / "home" / "resources" / "deployments" / "default_tenant" / "dep"
    workdir.mkdir(parents=True)
    (workdir / "kept.txt").write_text("already there")

    installed = engine.executions.start("install", "dep")
    assert installed["status"] == "terminated", installed["error"]
    props = {i["node_id"]: i["runtime_properties"] for i in engine.blueprints.deployments.node_instances("dep")}
    assert props == {"made": {"made": "made.txt"}, "kept": {"adopted": True, "__cloudify_tagged_external_resource": True}}
    assert (workdir / "made.txt").read_text() == "hello"

    uninstalled = engine.executions.start("uninstall", "dep")
    assert uninstalled["status"] == "terminated", uninstalled
    assert not (workdir / "made.txt").exists()
    assert (workdir / "kept.txt").read_text() == "already there"  # an external resource is left alone
    messages = [e["message"] for e in engine.executions.events(uninstalled["id"], include_logs=True)]
    assert "removed made.txt" in messages
