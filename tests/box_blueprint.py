"""One box whose create runs a script the test writes (a pause, a wait for a file): the blueprint of the
tests of groups of deployments, whose executions' times tell how many ran at once."""

from __future__ import annotations

from pathlib import Path

BOX = """tosca_definitions_version: cloudify_dsl_1_4
imports: [cloudify/types/types.yaml]
node_templates:
  box:
    type: cloudify.nodes.Root
    interfaces:
      cloudify.interfaces.lifecycle:
        OPERATION: scripts/SCRIPT
"""


def write_box(folder: Path, body: str, script: str = "pause.sh", more: str = "", operation: str = "create") -> Path:
    """``folder/blueprint.yaml`` (with ``more``, sections, after it) and its script, run by the box's
    ``operation``; the blueprint's path."""
    (folder / "scripts").mkdir(parents=True)
    (folder / "scripts" / script).write_text(body)
    path = folder / "blueprint.yaml"
    path.write_text(BOX.replace("OPERATION", operation).replace("SCRIPT", script) + more)
    return path
