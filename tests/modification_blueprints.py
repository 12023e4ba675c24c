"""The blueprint the deployment modification tests scale (tests/workflows and tests/api): a host with an app in
it and a load balancer connected to the app; the host's create fails while the file the input ``mark`` names
exists, so a test makes a scale out fail by creating that file; the host's delete writes its id to that file's
name with ``.deleted`` added."""

from __future__ import annotations

from pathlib import Path

HEADER = """tosca_definitions_version: cloudify_dsl_1_4
imports: [cloudify/types/types.yaml]
inputs:
  mark: {type: string}
"""
TEXT = HEADER + """node_templates:
  host:
    type: cloudify.nodes.Compute
    properties: {ip: 127.0.0.1}
    capabilities: {scalable: {properties: {max_instances: 3}}}
    interfaces:
      cloudify.interfaces.lifecycle:
        create: {implementation: scripts/create.sh, inputs: {MARK: {get_input: mark}}}
        delete: {implementation: scripts/delete.sh, inputs: {MARK: {get_input: mark}}}
  app:
    type: cloudify.nodes.Root
    relationships: [{type: cloudify.relationships.contained_in, target: host}]
  lb:
    type: cloudify.nodes.Root
    relationships: [{type: cloudify.relationships.connected_to, target: app}]
"""
#: a scaling group of one host, whose create fails (and delete is marked) as the host's above
GROUPED = HEADER + """node_templates:
  vm:
    type: cloudify.nodes.Compute
    properties: {ip: 127.0.0.1}
    interfaces:
      cloudify.interfaces.lifecycle:
        create: {implementation: scripts/create.sh, inputs: {MARK: {get_input: mark}}}
        delete: {implementation: scripts/delete.sh, inputs: {MARK: {get_input: mark}}}
groups:
  pair: {members: [vm]}
policies:
  pairs: {type: cloudify.policies.scaling, properties: {default_instances: 1, max_instances: 3}, targets: [pair]}
"""
SCRIPT = '#!/bin/bash\nif [ -e "$MARK" ]; then echo "create refused: $MARK exists" >&2; exit 1; fi\n'
DELETE_SCRIPT = '#!/bin/bash\nctx instance id >> "$MARK.deleted"\n'


def folder(tmp_path: Path, text: str = TEXT) -> str:
    """The blueprint (``text``) with its scripts, in a folder of its own: the path of its blueprint.yaml."""
    home = tmp_path / "scaled"
    (home / "scripts").mkdir(parents=True)
    (home / "scripts" / "create.sh").write_text(SCRIPT)
    (home / "scripts" / "delete.sh").write_text(DELETE_SCRIPT)
    (home / "blueprint.yaml").write_text(text)
    return str(home / "blueprint.yaml")
