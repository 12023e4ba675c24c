"""One plugin imported into two namespaces (``ns1--plugin:X``, ``ns2--plugin:X``), as cloudify-manager's
``plugin_properties_namespaced.yaml``: Cloudify makes it two plugins of one package, ``ns1--X`` and
``ns2--X``, each with its own properties (named ``ns1--...``), and each namespace's operations run the
package's code with their own namespace's properties. The expectations are what dsl_parser 7.0.5 and
cloudify-manager's test give."""

from __future__ import annotations

import textwrap

import pytest

from stoker.blueprint.plugin_catalog import PluginCatalog

pytestmark = pytest.mark.slow  # plugin virtualenvs made with pip

#: cloudify-manager's with_properties test plugin, its task writing what it sees to the instance
PLUGIN_YAML = """\
plugins:
  with_properties:
    executor: central_deployment_agent
    package_name: with_properties
    package_version: 0.0.1
    properties_description: A test of plugin's properties
    properties:
      string_property: {type: string, description: A property of "string" type}
      integer_property: {type: integer, description: A property of "integer" type}
      list_property: {type: list, description: A property of "list" type}
node_types:
  test_type:
    derived_from: cloudify.nodes.Root
    interfaces:
      cloudify.interfaces.lifecycle:
        start: with_properties.with_properties.tasks.op
"""

TASKS = '''
from cloudify.decorators import operation


@operation
def op(ctx, **_):
    props = ctx.instance.runtime_properties
    props["properties"] = {k: v.get("value") for k, v in ctx.plugin.properties.items()}
    props["plugin"] = [ctx.plugin.name, ctx.plugin.package_name, ctx.plugin.package_version]
'''

BLUEPRINT = """\
tosca_definitions_version: cloudify_dsl_1_5
imports:
  - cloudify/types/types.yaml
  - ns1--plugin:with_properties?version=>=0.0.1:
      string_property: foo
      integer_property: 54321
      list_property: [1, 2, 3]
  - ns2--plugin:with_properties?version=>=0.0.1:
      string_property: bar
      integer_property: 67890
      list_property: [9, 8, 7]
node_templates:
  node_ns1:
    type: ns1--test_type
  node_ns2:
    type: ns2--test_type
"""


def _plugin(folder):
    (folder / "with_properties").mkdir(parents=True)
    (folder / "with_properties" / "__init__.py").write_text("")
    (folder / "with_properties" / "tasks.py").write_text(textwrap.dedent(TASKS))
    (folder / "plugin.yaml").write_text(PLUGIN_YAML)
    return folder


def _expected_plugin(namespace: str, values: tuple) -> dict:
    """The plan's entry of the plugin in ``namespace`` (dsl_parser's, field for field)."""
    kinds = ("string", "integer", "list")
    return {"name": f"{namespace}--with_properties", "package_name": "with_properties", "package_version": "0.0.1",
            "executor": "central_deployment_agent", "install": True, "source": None, "install_arguments": None,
            "supported_platform": None, "distribution": None, "distribution_version": None,
            "distribution_release": None, "properties_description": "A test of plugin's properties",
            "properties": {f"{namespace}--{kind}_property": {"type": kind, "value": value,
                                                             "description": f'A property of "{kind}" type'}
                           for kind, value in zip(kinds, values)}}


def test_a_plugin_imported_into_two_namespaces_plans_and_runs_each_with_its_own_properties(
        engine, tmp_path, plugin_wheels):
    PluginCatalog(tmp_path / "home" / "plugins").upload(_plugin(tmp_path / "with_properties"), [])
    (tmp_path / "bp").mkdir()
    (tmp_path / "bp" / "blueprint.yaml").write_text(BLUEPRINT)
    engine.blueprints.upload(tmp_path / "bp" / "blueprint.yaml", "bp")

    plan = engine.blueprints.plan("bp")
    assert plan["deployment_plugins_to_install"] == [_expected_plugin("ns1", ("foo", 54321, [1, 2, 3])),
                                                     _expected_plugin("ns2", ("bar", 67890, [9, 8, 7]))]
    assert [p["name"] for p in plan["workflow_plugins_to_install"]] == ["default_workflows"]
    assert plan["host_agent_plugins_to_install"] == []
    started = {node["name"]: node["operations"]["cloudify.interfaces.lifecycle.start"] for node in plan["nodes"]}
    assert {name: (op["plugin"], op["executor"]) for name, op in started.items()} == {
        "node_ns1": ("ns1--with_properties", "central_deployment_agent"),
        "node_ns2": ("ns2--with_properties", "central_deployment_agent")}

    engine.blueprints.deployments.create("dep", "bp")
    execution = engine.executions.start("install", "dep")
    assert execution["status"] == "terminated", execution["error"]
    seen = {i["node_id"]: (i["state"], i["runtime_properties"])
            for i in engine.blueprints.deployments.node_instances("dep")}
    assert seen == {
        "node_ns1": ("started", {"plugin": ["ns1--with_properties", "with_properties", "0.0.1"], "properties": {
            "ns1--string_property": "foo", "ns1--integer_property": 54321, "ns1--list_property": [1, 2, 3]}}),
        "node_ns2": ("started", {"plugin": ["ns2--with_properties", "with_properties", "0.0.1"], "properties": {
            "ns2--string_property": "bar", "ns2--integer_property": 67890, "ns2--list_property": [9, 8, 7]}})}
    home = tmp_path / "home"
    assert [p.relative_to(home / "plugin-envs").as_posix() for p in (home / "plugin-envs").glob("**/0.0.1")] == [
        "with_properties/0.0.1"]  # one package, one virtualenv, for both namespaces


def test_plugin_properties_set_to_functions_are_evaluated_for_the_task(engine, tmp_path, plugin_wheels):
    """cloudify-manager's plugin_properties_intrinsic_func.yaml: a secret and an input set on import are
    the task's values; a property set by no one has none."""
    PluginCatalog(tmp_path / "home" / "plugins").upload(_plugin(tmp_path / "with_properties"), [])
    engine.blueprints.secrets.create("my_secret", "s3cr3t")
    (tmp_path / "bp").mkdir()
    (tmp_path / "bp" / "blueprint.yaml").write_text("""\
tosca_definitions_version: cloudify_dsl_1_5
inputs:
  a_list: {type: list, item_type: integer, default: [1, 2, 3, 4]}
imports:
  - cloudify/types/types.yaml
  - plugin:with_properties?version=>=0.0.1:
      string_property: {get_secret: my_secret}
      list_property: {get_input: a_list}
node_templates:
  test_node: {type: test_type}
""")
    engine.blueprints.upload(tmp_path / "bp" / "blueprint.yaml", "bp")
    engine.blueprints.deployments.create("dep", "bp")
    execution = engine.executions.start("install", "dep")
    assert execution["status"] == "terminated", execution["error"]
    [instance] = engine.blueprints.deployments.node_instances("dep")
    assert instance["runtime_properties"]["properties"] == {
        "string_property": "s3cr3t", "integer_property": None, "list_property": [1, 2, 3, 4]}
