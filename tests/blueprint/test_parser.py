"""Loading blueprints: imports, the built-in types, type inheritance and operations."""

from __future__ import annotations

import pytest

from stoker.blueprint.parser import parse_file
from stoker.errors import ValidationFailed

HEAD = "tosca_definitions_version: cloudify_dsl_1_4\n"


def _codes(path) -> dict:
    """``{(path, code): problem}`` (the last one where several share a place and code)."""
    with pytest.raises(ValidationFailed) as failure:
        parse_file(path)
    return {(".".join(map(str, p.path)), p.code): p for p in failure.value.problems}


@pytest.mark.parametrize("url", ["cloudify/types/types.yaml",
                                 "http://www.getcloudify.org/spec/cloudify/6.4.0/types.yaml",
                                 "https://getcloudify.org/spec/cloudify/7.0.0/types.yaml"])
def test_standard_types_are_built_in(write, url):
    plan = parse_file(write("b.yaml", HEAD + f"imports: ['{url}']\nnode_templates:\n"
                                             "  vm: {type: cloudify.nodes.Compute}\n"
                                             "  web: {type: cloudify.nodes.WebServer}\n"))
    nodes = {n["name"]: n for n in plan["nodes"]}
    assert nodes["vm"]["type_hierarchy"] == ["cloudify.nodes.Root", "cloudify.nodes.Compute"]
    assert nodes["web"]["properties"]["port"] == 80
    assert nodes["web"]["properties"]["use_external_resource"] is False
    assert nodes["web"]["operations"] == {}  # the standard lifecycle is declared only: nothing to run
    assert {"install", "uninstall", "scale", "heal", "execute_operation"} <= set(plan["workflows"])


def test_relative_imports_merge_and_conflicts_are_errors(write):
    write("types/base.yaml", HEAD + "imports: [cloudify/types/types.yaml, more.yaml]\n"
                                    "node_types:\n  app.Server:\n    derived_from: cloudify.nodes.Root\n"
                                    "    properties: {port: {type: integer, default: 80}}\n")
    write("types/more.yaml", HEAD + "inputs:\n  size: {default: 2}\n")
    plan = parse_file(write("main.yaml", HEAD + "imports: [types/base.yaml]\nnode_templates:\n"
                                                "  s:\n    type: app.Server\n"
                                                "    instances: {deploy: {get_input: size}}\n"))
    assert plan["nodes"][0]["properties"]["port"] == 80 and "size" in plan["inputs"]

    write("other.yaml", HEAD + "node_types:\n  app.Server: {derived_from: cloudify.nodes.Compute}\n")
    problems = _codes(write("clash.yaml", HEAD + "imports: [types/base.yaml, other.yaml]\n"))
    assert ("node_types.app.Server", "import-conflict") in problems
    problems = _codes(write("missing.yaml", HEAD + "imports: [nowhere.yaml]\n"))
    assert ("imports", "import-not-found") in problems


def test_type_inheritance_and_operation_overrides(write):
    write("scripts/stop.sh", "#!/bin/sh\n")  # a script operation's file must exist beside the blueprint
    plan = parse_file(write("b.yaml", HEAD + """\
plugins:
  p: {executor: central_deployment_agent, install: false}
node_types:
  base:
    properties:
      a: {default: 1}
      b: {type: string}
    interfaces:
      lifecycle:
        create: p.tasks.create
        start:
          implementation: p.tasks.start
          inputs: {wait: {default: 5}, mode: {default: fast}}
  child:
    derived_from: base
    properties:
      a: {default: 2}
node_templates:
  n:
    type: child
    properties: {b: text}
    interfaces:
      lifecycle:
        start:
          inputs: {wait: 9}
        stop: scripts/stop.sh
"""))
    (node,) = plan["nodes"]
    assert node["type_hierarchy"] == ["base", "child"] and node["properties"] == {"a": 2, "b": "text"}
    operations = node["operations"]
    assert operations["lifecycle.create"]["implementation"] == "p.tasks.create"
    assert operations["lifecycle.start"]["inputs"] == {"wait": 9, "mode": "fast"}
    assert operations["lifecycle.start"]["implementation"] == "p.tasks.start"
    assert operations["lifecycle.stop"]["plugin"] == "script"
    assert operations["lifecycle.stop"]["inputs"] == {"script_path": "scripts/stop.sh"}


def test_properties_and_templates_are_checked(write):
    problems = _codes(write("b.yaml", HEAD + """\
node_types:
  t:
    properties:
      needed: {type: integer}
      count: {type: integer, default: 1}
      funny: {typo_key: 1}
node_templates:
  n:
    type: t
    properties: {count: many}
    bogus: 1
    relationships:
      - {type: no.such.relationship, target: n}
"""))
    assert ("node_templates.n.properties", "missing-property") in problems
    assert ("node_templates.n.properties.count", "wrong-type") in problems
    assert ("node_types.t.properties.funny.typo_key", "unknown-key") in problems
    assert ("node_templates.n.bogus", "unknown-key") in problems
    assert ("node_templates.n.relationships.0.type", "unknown-type") in problems
    wrong = problems[("node_templates.n.properties.count", "wrong-type")]
    assert (wrong.line, wrong.message) == (11, "property 'count': the type is 'integer', but the value is 'many'")


def test_scaling_limits_are_checked_at_upload_and_creation(write, engine):
    problems = _codes(write("b.yaml", HEAD + "node_types: {t: {}}\nnode_templates:\n  n:\n    type: t\n"
                                             "    capabilities:\n      scalable:\n        properties:\n"
                                             "          {default_instances: 5, max_instances: 3}\n"))
    assert any(code == "invalid-scaling" for _, code in problems)
    path = write("c.yaml", HEAD + "inputs: {n: {type: integer}}\nnode_types: {t: {}}\nnode_templates:\n"
                                  "  n:\n    type: t\n    capabilities:\n      scalable:\n        properties:\n"
                                  "          {default_instances: {get_input: n}, max_instances: 3}\n")
    engine.blueprints.upload(path, "c")
    with pytest.raises(Exception, match="cannot be greater than max_instances"):
        engine.blueprints.deployments.create("d", "c", {"n": 4})
    engine.blueprints.deployments.create("d", "c", {"n": 3})
    assert len(engine.blueprints.deployments.node_instances("d")) == 3


def test_the_standard_types_are_read_by_the_fast_yaml_path_as_pyyaml_reads_them():
    """Every blueprint imports them: declined by the fast path, each command paid for PyYAML."""
    from stoker.blueprint.loader import BUILTIN_TYPES
    from stoker.template import fastyaml
    from stoker.template.loader import _pyyaml

    text = BUILTIN_TYPES.read_text(encoding="utf-8")
    fast = fastyaml.load(text)
    assert fast is not fastyaml.DECLINED
    assert fast == _pyyaml(text)
    assert list(fast["workflows"]["stop"]["parameters"]) == [
        "type_names", "node_ids", "node_instance_ids", "operation_parms", "run_by_dependency_order"]
