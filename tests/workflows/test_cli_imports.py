"""``stoker install BLUEPRINT`` imports what it runs and no more (issue 25): at 1,000 instances a
whole command is mostly its start-up, so the stack (HOT) commands and machinery, the API's and
workers' frameworks, Alembic, PyYAML, version ranges and rich (events on a terminal only) stay out."""

from __future__ import annotations

import json
import os
import subprocess
import sys

#: packages and modules a blueprint's install has no use for
UNUSED = ("fastapi", "starlette", "uvicorn", "celery", "kombu", "alembic", "yaml", "rich", "packaging.specifiers",
          "stoker.api", "stoker.cli.stack_cmds", "stoker.cli.template_cmds", "stoker.cli.api_cmds",
          "stoker.cli.plugin_cmds", "stoker.engine.stack", "stoker.engine.actions", "stoker.engine.running",
          "stoker.template.resolve", "stoker.template.definition",
          # the resource types and HOT plug-ins: loaded when a type is first looked up
          "stoker.resources.registry", "stoker.resources.builtin")

#: the ``stoker`` command, writing the modules it imported to argv[1] as it exits
COMMAND = """
import atexit, json, sys
out = sys.argv.pop(1)
atexit.register(lambda: open(out, "w").write(json.dumps(sorted(sys.modules))))
sys.argv[0] = "stoker"
from stoker.cli import run
run()
"""

BLUEPRINT = """tosca_definitions_version: cloudify_dsl_1_5
imports: [http://www.getcloudify.org/spec/cloudify/7.0.0/types.yaml]
node_templates:
  host:
    type: cloudify.nodes.Root
    capabilities: {scalable: {properties: {default_instances: 2}}}
  app:
    type: cloudify.nodes.Root
    relationships: [{type: cloudify.relationships.contained_in, target: host}]
"""


def test_installing_a_blueprint_imports_no_stack_api_or_worker_machinery(tmp_path):
    blueprint = tmp_path / "bp" / "blueprint.yaml"
    blueprint.parent.mkdir()
    blueprint.write_text(BLUEPRINT)
    modules_file = tmp_path / "modules.json"
    env = {key: value for key, value in os.environ.items()
           if key not in ("STOKER_DB_URL", "STOKER_BROKER_URL", "STOKER_URL", "FORCE_COLOR", "TTY_COMPATIBLE")}
    env["STOKER_HOME"] = str(tmp_path / "home")
    done = subprocess.run([sys.executable, "-c", COMMAND, str(modules_file), "install", str(blueprint), "-b", "bp",
                           "-d", "dep"], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Node instance app_" in done.stderr and "'install' workflow execution succeeded" in done.stderr
    assert "terminated" in done.stdout
    modules = set(json.loads(modules_file.read_text()))
    assert {"stoker.workflows.executions", "stoker.blueprint.deployments", "sqlalchemy"} <= modules  # it ran here
    imported = sorted(m for m in modules if any(m == name or m.startswith(name + ".") for name in UNUSED))
    assert imported == []
