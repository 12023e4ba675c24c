"""Scripts as Cloudify's script plug-in runs them: scripts written in the blueprint (a multi-line
``implementation:``), Python scripts reading their inputs as ``ctx_parameters`` (not from the
environment), other scripts from the environment, and the deployment's work folder."""

from __future__ import annotations

import pytest

from stoker.errors import ValidationFailed
from .conftest import deploy, runtime, write_blueprint

#: one node, ``app``, whose lifecycle operations follow
APP = """
node_templates:
  app:
    type: cloudify.nodes.Root
    interfaces:
      cloudify.interfaces.lifecycle:
"""

BLUEPRINT = APP + """        create:
          implementation: |
            import os
            from cloudify import ctx
            from cloudify.state import ctx_parameters as inputs
            props = ctx.instance.runtime_properties
            props["port"] = inputs["port"] + 1
            props["tags"] = inputs["tags"]
            props["port_in_env"] = "port" in os.environ
            props["env_from_process"] = os.environ.get("MODE")
            workdir = ctx.local_deployment_workdir()
            with open(os.path.join(workdir, "made.txt"), "w") as out:
                out.write("by create")
            props["workdir"] = workdir
            props["root"] = os.environ["CFY_RESOURCES_ROOT"]
          inputs:
            port: 8080
            tags: [a, b]
            process: {env: {MODE: fast}}
        configure:
          implementation: |
            set -e
            ctx instance runtime-properties shell_port "$port"
            ctx instance runtime-properties seen "$(cat "$(ctx local-deployment-workdir)/made.txt")"
          inputs:
            port: 9090
"""


def test_inline_scripts_get_their_inputs_as_cloudify_gives_them(engine, tmp_path):
    deploy(engine, tmp_path / "bp", BLUEPRINT)
    execution = engine.executions.start("install", "dep")
    assert execution["status"] == "terminated", execution
    props = runtime(engine, "dep", "app")
    workdir = tmp_path / "home" / "resources" / "deployments" / "default_tenant" / "dep"
    assert props == {"port": 8081, "tags": ["a", "b"], "port_in_env": False, "env_from_process": "fast",
                     "workdir": str(workdir), "root": str(tmp_path / "home" / "resources"),
                     "shell_port": "9090", "seen": "by create"}
    assert (workdir / "made.txt").read_text() == "by create"
    engine.executions.start("uninstall", "dep")
    engine.blueprints.deployments.delete("dep")
    assert not workdir.exists()


def test_script_source_given_to_the_script_runner_and_eval_python(engine, tmp_path):
    deploy(engine, tmp_path / "bp", APP + """        create:
          implementation: script.script_runner.tasks.run
          inputs:
            script_source: 'ctx instance runtime-properties via "$how"'
            how: source
            process: {eval_python: false}
""")
    assert engine.executions.start("install", "dep")["status"] == "terminated"
    assert runtime(engine, "dep", "app") == {"via": "source"}


def test_a_script_implementation_with_script_path_in_its_inputs_is_refused(engine, tmp_path):
    path = write_blueprint(tmp_path / "bp", APP + """        create:
          implementation: |
            echo one
            echo two
          inputs: {script_path: other.sh}
""")
    with pytest.raises(ValidationFailed) as refused:
        engine.blueprints.upload(path, "bp")
    assert "Cannot define 'script_path' property" in str(refused.value.problems[0])
