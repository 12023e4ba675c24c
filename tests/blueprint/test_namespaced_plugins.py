"""Plugins in namespaced imports, as dsl_parser (cloudify-common 7.0.5) reads them: a namespaced file's
plugins are ``ns--name`` (their properties ``ns--property``), and its operation and workflow mappings
name its namespace's plugins only; scripts stay scripts. Messages and plans here are dsl_parser's."""

from __future__ import annotations

import pytest

from stoker.blueprint.parser import parse_file
from stoker.errors import ValidationFailed

HEAD = "tosca_definitions_version: cloudify_dsl_1_5\n"
MAIN = HEAD + "imports: [cloudify/types/types.yaml, a--other.yaml]\nnode_templates:\n  m: {type: a--t}\n"
#: a file with a plugin, a node type of it and a script, and workflows of both kinds
OTHER = HEAD + """\
plugins:
  own:
    executor: central_deployment_agent
    package_name: own-pkg
    package_version: '1.0'
    properties:
      p1: {type: string, value: hello}
node_types:
  t:
    derived_from: cloudify.nodes.Root
    interfaces:
      cloudify.interfaces.lifecycle:
        create: scripts/c.sh
        configure: own.mod.task
workflows:
  wf: own.mod.wf
  wf2: scripts/c.sh
"""


def _problems(path) -> list[str]:
    with pytest.raises(ValidationFailed) as failure:
        parse_file(path)
    return [p.message for p in failure.value.problems]


def test_a_namespaced_file_s_plugin_is_its_namespace_s(write):
    write("scripts/c.sh", "echo\n")
    write("other.yaml", OTHER)
    plan = parse_file(write("main.yaml", MAIN))
    operations = {name: (op["plugin"], op["executor"]) for name, op in plan["nodes"][0]["operations"].items()}
    assert operations == {"cloudify.interfaces.lifecycle.create": ("script", "auto"),
                          "cloudify.interfaces.lifecycle.configure": ("a--own", "central_deployment_agent")}
    own = {"name": "a--own", "package_name": "own-pkg", "package_version": "1.0",
           "executor": "central_deployment_agent", "install": True, "source": None, "install_arguments": None,
           "supported_platform": None, "distribution": None, "distribution_version": None,
           "distribution_release": None, "properties_description": None,
           "properties": {"a--p1": {"type": "string", "value": "hello"}}}
    assert plan["deployment_plugins_to_install"] == [own]
    assert [p["name"] for p in plan["workflow_plugins_to_install"]] == ["default_workflows", "a--own", "script"]
    assert plan["workflow_plugins_to_install"][1] == own
    assert {name: plan["workflows"][name] for name in ("a--wf", "a--wf2")} == {"a--wf": "a--own.mod.wf",
                                                                                "a--wf2": "scripts/c.sh"}


@pytest.mark.parametrize("mapping", ["missing.mod.task", "script.script_runner.tasks.run", "outside.mod.task"])
def test_a_namespaced_operation_naming_no_plugin_of_its_namespace_is_refused(write, mapping):
    """``outside`` is a plugin, imported without the namespace: the namespaced file cannot reach it."""
    write("other.yaml", HEAD + "node_types:\n  t:\n    derived_from: cloudify.nodes.Root\n    interfaces:\n"
                               f"      cloudify.interfaces.lifecycle:\n        stop: {mapping}\n")
    write("outside.yaml", HEAD + "plugins:\n  outside: {executor: central_deployment_agent, install: false}\n")
    main = write("main.yaml", MAIN.replace("a--other.yaml]", "a--other.yaml, outside.yaml]"))
    assert _problems(main) == [
        f"Could not extract plugin or a script resource is not found from operation mapping/script-path "
        f"'a--{mapping}', which is declared for operation 'stop'.In interface 'cloudify.interfaces.lifecycle' "
        "in node 'm' of type 'a--t'"]


def test_a_namespaced_relationship_operation_naming_no_plugin_is_refused_on_its_side(write):
    """A target side's operation is the target node's, in Cloudify's words."""
    write("other.yaml", HEAD + """\
node_templates:
  x: {type: cloudify.nodes.Root}
  y:
    type: cloudify.nodes.Root
    relationships:
      - type: cloudify.relationships.connected_to
        target: x
        target_interfaces:
          cloudify.interfaces.relationship_lifecycle:
            establish: missing.tasks.run
""")
    assert _problems(write("main.yaml", HEAD + "imports: [cloudify/types/types.yaml, a--other.yaml]\n")) == [
        "Could not extract plugin or a script resource is not found from operation mapping/script-path "
        "'a--missing.tasks.run', which is declared for operation 'establish'.In interface "
        "'cloudify.interfaces.relationship_lifecycle' in relationship of type 'cloudify.relationships.connected_to' "
        "in node 'a--x'"]


def test_a_workflow_naming_no_plugin_is_refused(write):
    write("other.yaml", HEAD + "workflows:\n  go: missing.mod.wf\n")
    assert _problems(write("main.yaml", HEAD + "imports: [cloudify/types/types.yaml, a--other.yaml]\n")) == [
        "Could not extract plugin or a script resource is not found from workflow mapping/script-path "
        "'a--missing.mod.wf', which is declared for workflow 'a--go'."]


def test_a_plugins_update_moves_the_package_in_every_namespace(write):
    """``cfy plugins update`` rewrites the plan's versions: both namespaces' plugins of the package, in
    ``plugins`` and in the lists of plugins to install."""
    from stoker.store.plugins_updates import with_versions

    write("scripts/c.sh", "echo\n")
    write("other.yaml", OTHER)
    plan = parse_file(write("main.yaml", MAIN.replace("a--other.yaml]", "a--other.yaml, b--other.yaml]")
                            + "  n: {type: b--t}\n"))
    moved = with_versions(plan, {"own-pkg": ["1.0", "2.0"]})
    assert {name: p.get("package_version") for name, p in moved["plugins"].items() if "own" in name} == {
        "a--own": "2.0", "b--own": "2.0"}
    assert [(p["name"], p["package_version"]) for p in moved["deployment_plugins_to_install"]] == [
        ("a--own", "2.0"), ("b--own", "2.0")]
