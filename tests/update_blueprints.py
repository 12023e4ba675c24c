"""The blueprints the deployment update tests move a deployment between (tests/workflows and tests/api): every
operation records "<node> <operation>" in the file input ``trace`` names, so a test sees what ran."""

from __future__ import annotations

from pathlib import Path

#: every operation records "<node> <operation>" in the file the deployment's input ``trace`` names
OPS = """
    interfaces:
      cloudify.interfaces.lifecycle:
        create: *op
        delete: *op
"""
KEPT = f"""tosca_definitions_version: cloudify_dsl_1_4
imports: [cloudify/types/types.yaml]
dsl_definitions:
  op: &op {{implementation: scripts/op.sh, inputs: {{TRACE: {{get_input: trace}}, GATE: {{get_input: gate}}}}}}
inputs:
  trace: {{type: string}}
  gate: {{type: string, default: ''}}
  port: {{default: 80}}
node_templates:
  host:
    type: cloudify.nodes.Compute
    properties: {{ip: 127.0.0.1}}
{OPS}
  web:
    type: cloudify.nodes.WebServer
    properties: {{port: {{get_input: port}}}}
    relationships: [{{type: cloudify.relationships.contained_in, target: host}}]
{OPS}"""
OLD = KEPT + f"""
  old:
    type: cloudify.nodes.Root
{OPS}
outputs:
  port: {{value: {{get_property: [web, port]}}}}
"""
NEW = KEPT + f"""
  fresh:
    type: cloudify.nodes.Root
    relationships: [{{type: cloudify.relationships.depends_on, target: web}}]
{OPS}
outputs:
  port: {{value: {{get_property: [web, port]}}}}
  fresh: {{value: {{get_attribute: [fresh, made]}}}}
capabilities:
  where: {{value: {{get_property: [host, ip]}}}}
"""
#: waits while the file GATE names does not exist (a held execution), having made GATE.held (it waits)
SCRIPT = """#!/bin/bash
[ -z "$GATE" ] || touch "$GATE.held"
while [ -n "$GATE" ] && [ ! -e "$GATE" ]; do sleep 0.1; done
echo "$(ctx node id) $(ctx operation name | sed 's/.*\\.//')" >> "$TRACE"
ctx instance runtime-properties made yes
"""


def folder(tmp_path: Path, name: str, text: str) -> str:
    """Blueprint ``text`` with its script in folder ``name``: the path of its blueprint.yaml."""
    home = tmp_path / name
    (home / "scripts").mkdir(parents=True)
    (home / "scripts" / "op.sh").write_text(SCRIPT)
    (home / "blueprint.yaml").write_text(text)
    return str(home / "blueprint.yaml")


def ran(trace: Path) -> list[str]:
    """What ran since the last look (the trace emptied)."""
    lines = sorted(line.strip() for line in trace.read_text().splitlines()) if trace.exists() else []
    trace.write_text("")
    return lines
