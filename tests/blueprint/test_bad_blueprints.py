"""Bad blueprints and bad inputs: every error at once, with its place, and nothing stored."""

from __future__ import annotations

import json

import pytest

BAD = """\
tosca_definitions_version: cloudify_dsl_1_4
imports: [cloudify/types/types.yaml]
inputs:
  port: {default: 80}
node_templates:
  a:
    type: cloudify.nodes.Root
    relationships:
      - {type: cloudify.relationships.depends_on, target: b}
  b:
    type: cloudify.nodes.Root
    relationships:
      - {type: cloudify.relationships.depends_on, target: a}
  c:
    type: no.such.Type
  d:
    type: cloudify.nodes.WebServer
    properties:
      port: {get_input: nope}
      colour: red
outputs:
  o: {value: {get_property: [d, missing]}}
  p: {value: {get_property: [c, anything]}}
bogus_section: 1
"""


def test_every_error_at_once_with_places(cli, write):
    path = write("bad.yaml", BAD)
    failed = cli("blueprint", "validate", path, "-f", "json").expect(1)
    problems = {(p["path"], p["code"]): p for p in failed.json}
    expected = {
        ("bogus_section", "unknown-section"): 24,
        ("node_templates.c.type", "unknown-type"): 15,
        ("node_templates.d.properties.colour", "unknown-property"): 20,
        ("node_templates.b.relationships", "relationship-cycle"): 12,
        ("node_templates.d.properties.port", "function-failed"): 19,
        ("outputs.o.value", "function-failed"): 22,
    }
    assert {key: problems[key]["line"] for key in expected if key in problems} == expected
    assert len(failed.json) == len(expected), failed.json  # c's own error only, not its uses
    assert all(p["file"] == "bad.yaml" and p["column"] for p in failed.json)
    assert "get_input" in problems[("node_templates.d.properties.port", "function-failed")]["message"]
    assert "'nope'" in problems[("node_templates.d.properties.port", "function-failed")]["message"]
    assert "a -> b -> a" in problems[("node_templates.b.relationships", "relationship-cycle")]["message"]
    text = cli("blueprint", "validate", path).expect(1)
    assert "ERROR: bad.yaml:15:5: node_templates.c.type: node type 'no.such.Type' is not defined" in text.stderr


def test_upload_refused_stores_nothing(cli, write):
    cli("blueprint", "upload", write("bad.yaml", BAD), "-b", "bad").expect(1)
    assert cli("blueprint", "list", "-f", "json").expect(0).json == []


@pytest.mark.parametrize("text, code, words", [
    ("tosca_definitions_version: cloudify_dsl_1_4\nimports: [http://example.com/types.yaml]\n",
     "import-not-fetched", "not fetched"),
    ("tosca_definitions_version: cloudify_dsl_2_0\n", "invalid-version", "cloudify_dsl_1_0"),
    ("tosca_definitions_version: cloudify_dsl_1_4\nnode_templates:\n  n: {type: t}\n"
     "node_types:\n  t: {derived_from: u}\n  u: {derived_from: t}\n", "derivation-loop", "derive from itself"),
    ("tosca_definitions_version: cloudify_dsl_1_4\ndescription: caf\u00e9\n", "non-ascii", "ASCII"),
    ("tosca_definitions_version: cloudify_dsl_1_4\nnode_templates: [\n", "invalid-syntax", "YAML"),
    ("- just\n- a list\n", "invalid-blueprint", "mapping"),
    ("tosca_definitions_version: cloudify_dsl_1_4\nnode_types: {t: {}}\nnode_templates:\n  n: {type: t}\n"
     "outputs:\n  o: {value: {get_attribute: [ghost, x]}}\n", "function-failed", "ghost"),
    ("tosca_definitions_version: cloudify_dsl_1_4\nnode_types: {t: {}}\nnode_templates:\n  n: {type: t}\n"
     "groups:\n  g: {members: [n, ghost]}\n", "unknown-member", "ghost"),
    ("tosca_definitions_version: cloudify_dsl_1_4\ninputs:\n  x: {type: integer, default: nine}\n",
     "wrong-type", "integer"),
])
def test_bad_blueprints_fail_cleanly(cli, write, text, code, words):
    failed = cli("blueprint", "validate", write("b.yaml", text), "-f", "json").expect(1)
    assert any(p["code"] == code and words in p["message"] for p in failed.json), failed.json


def test_binary_and_missing_files(cli, tmp_path):
    garbage = tmp_path / "garbage.yaml"
    garbage.write_bytes(bytes(range(256)) * 10)
    assert "ERROR" in cli("blueprint", "validate", garbage).expect(1).stderr
    assert "cannot read" in cli("blueprint", "upload", tmp_path / "none.yaml", "-b", "x").expect(1).stderr


def test_look_alike_function_warns_but_stays_literal(cli, write):
    path = write("b.yaml", "tosca_definitions_version: cloudify_dsl_1_4\n"
                           "outputs:\n  o: {value: {get_inputs: x}}\n")
    run = cli("blueprint", "validate", path).expect(0)
    assert "WARNING" in run.stderr and "did you mean get_input" in run.stderr


INPUTS = """\
tosca_definitions_version: cloudify_dsl_1_4
inputs:
  port: {type: integer, constraints: [{in_range: [1024, 65535]}]}
  name: {type: string, default: web, constraints: [{pattern: '[a-z]+'}]}
  password: {type: string, hidden: true, constraints: [{min_length: 8}]}
outputs:
  port: {value: {get_input: port}}
"""


@pytest.mark.parametrize("inputs, words", [
    ([], "['port', 'password']"),
    (["port=80", "password=longenough"], "input port violates constraint in_range(1024, 65535)"),
    (["port=x8080", "password=longenough"], "'integer'"),
    (["port=8080", "password=longenough", "extra=1"], "unknown inputs ['extra']"),
    (["port=8080", "password=short"], "input password (hidden)"),
])
def test_bad_inputs_name_the_input_and_store_nothing(cli, write, inputs, words):
    cli("blueprint", "upload", write("b.yaml", INPUTS), "-b", "b").expect(0)
    args = [arg for item in inputs for arg in ("-i", item)]
    failed = cli("deployment", "create", "d", "-b", "b", *args).expect(1)
    assert words in failed.stderr
    assert "short" not in failed.stderr  # a hidden input's value is never shown
    assert cli("deployment", "list", "-f", "json").expect(0).json == []


def test_inputs_from_files_and_pairs(cli, write):
    cli("blueprint", "upload", write("b.yaml", INPUTS), "-b", "b").expect(0)
    inputs = write("inputs.json", json.dumps({"port": 2000, "password": "longenough"}))
    cli("deployment", "create", "d", "-b", "b", "-i", inputs, "-i", "port=3000").expect(0)
    assert cli("deployment", "inputs", "d", "-f", "json").expect(0).json == {
        "port": 3000, "name": "web", "password": "******"}
    assert cli("deployment", "outputs", "d", "-f", "json").expect(0).json == {"port": 3000}
    assert "already exists" in cli("deployment", "create", "d", "-b", "b", "-i", inputs).expect(1).stderr


def test_missing_secret_fails_creation_by_name(cli, write):
    path = write("b.yaml", "tosca_definitions_version: cloudify_dsl_1_4\n"
                           "outputs:\n  o: {value: {get_secret: db_password}}\n")
    cli("blueprint", "upload", path, "-b", "b").expect(0)
    assert "db_password" in cli("deployment", "create", "d", "-b", "b").expect(1).stderr
    cli("secret", "create", "db_password", "-s", "pw").expect(0)
    cli("deployment", "create", "d", "-b", "b").expect(0)
    assert cli("deployment", "outputs", "d", "-f", "json").expect(0).json == {"o": "pw"}


def test_unknown_things_are_clean_errors(cli):
    for args in (["deployment", "get", "nope"], ["deployment", "outputs", "nope"], ["blueprint", "get", "nope"],
                 ["node-instance", "get", "nope"], ["secret", "get", "nope"], ["node", "list", "-d", "nope"],
                 ["deployment", "create", "d", "-b", "nope"]):
        assert "not found" in cli(*args).expect(1).stderr


def test_limits_keep_time_and_memory_bounded(cli, write):
    deep = "tosca_definitions_version: cloudify_dsl_1_4\noutputs:\n  o: {value: " + "[" * 3000 + "]" * 3000 + "}\n"
    assert "nested more than" in cli("blueprint", "validate", write("deep.yaml", deep)).expect(1).stderr
    huge = ("tosca_definitions_version: cloudify_dsl_1_4\nnode_types: {t: {}}\nnode_templates:\n"
            "  a: {type: t, instances: {deploy: 1000}}\n"
            "  b: {type: t, instances: {deploy: 90000}}\n  c: {type: t, instances: {deploy: 1000000000}}\n"
            "  d:\n    type: t\n    relationships: [{type: cloudify.relationships.connected_to, target: b}]\n"
            "    instances: {deploy: {get_input: d}}\n"
            "relationships:\n  cloudify.relationships.connected_to: {properties: {connection_type: "
            "{default: all_to_all}}}\n"
            "inputs:\n  c: {default: 1}\n  d: {default: 1}\n")
    cli("blueprint", "upload", write("huge.yaml", huge.replace("1000000000", "{get_input: c}")), "-b", "huge").expect(0)
    failed = cli("deployment", "create", "x", "-b", "huge", "-i", "c=1000000000").expect(1)
    assert "more than the limit of 100000" in failed.stderr
    failed = cli("deployment", "create", "x", "-b", "huge", "-i", "d=5000").expect(1)
    assert "relationship instances" in failed.stderr
    assert cli("deployment", "list", "-f", "json").expect(0).json == []


def test_missing_script_is_refused(cli, write):
    path = write("b.yaml", "tosca_definitions_version: cloudify_dsl_1_4\nnode_types: {t: {}}\nnode_templates:\n"
                           "  n:\n    type: t\n    interfaces:\n      lifecycle:\n        create: scripts/create.sh\n"
                           "        start: scripts/start.sh\n")
    write("scripts/create.sh", "#!/bin/sh\n")
    run = cli("blueprint", "validate", path).expect(1)
    assert "script scripts/start.sh: resource scripts/start.sh not found in the blueprint's folder" in run.stderr
    assert "create.sh" not in run.stderr
