"""The spellings a ``cfy`` user's fingers type: plural groups, ``--hidden-value``, ``cancel -k``; the same
commands as the singular ones."""

from __future__ import annotations

import json

from click.testing import CliRunner

from stoker.cli import main

from .conftest import write_blueprint


def _run(env, *args):
    done = CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)
    return done


def test_plural_groups_and_cfy_flags(tmp_path):
    env = {"STOKER_HOME": str(tmp_path / "home"), "STOKER_DB_URL": f"sqlite:///{tmp_path / 's.db'}"}
    path = write_blueprint(tmp_path / "bp", "node_templates:\n  a:\n    type: cloudify.nodes.Root\n")
    assert _run(env, "blueprints", "upload", str(path), "-b", "bp").exit_code == 0
    assert _run(env, "deployments", "create", "dep", "-b", "bp").exit_code == 0
    assert [d["id"] for d in json.loads(_run(env, "deployments", "list", "-f", "json").output)] == ["dep"]
    assert _run(env, "secrets", "create", "pw", "-s", "hunter2", "--hidden-value").exit_code == 0
    shown = _run(env, "secrets", "get", "pw", "-f", "json")
    assert "hunter2" not in shown.output and json.loads(shown.output)["is_hidden_value"] is True
    installed = json.loads(_run(env, "executions", "start", "install", "-d", "dep", "-f", "json").output)
    assert installed["status"] == "terminated"
    [instance] = json.loads(_run(env, "node-instances", "list", "-d", "dep", "-f", "json").output)
    assert instance["state"] == "started"
    assert [n["id"] for n in json.loads(_run(env, "nodes", "list", "-d", "dep", "-f", "json").output)] == ["a"]
    refused = _run(env, "executions", "cancel", installed["id"], "-k")
    assert refused.exit_code == 1 and "nothing to cancel" in refused.output
    events = _run(env, "events", "list", "-e", installed["id"], "-f", "json")
    assert json.loads(events.output)[-1]["event_type"] == "workflow_succeeded"
    assert json.loads(_run(env, "plugins", "list", "-f", "json").output) == []  # cfy plugins: the catalog


def test_install_a_blueprint_path_and_tail_its_events(tmp_path):
    env = {"STOKER_HOME": str(tmp_path / "home"), "STOKER_DB_URL": f"sqlite:///{tmp_path / 's.db'}"}
    path = write_blueprint(tmp_path / "shop", """
        inputs:
          size: {type: integer}
        node_templates:
          a:
            type: cloudify.nodes.Root
            interfaces:
              cloudify.interfaces.lifecycle:
                create: scripts/create.sh
        """, {"scripts/create.sh": "ctx logger info made-it\n"})
    done = _run(env, "install", str(path), "-i", "size=3", "-f", "json")
    assert done.exit_code == 0, done.output
    execution = json.loads(done.output[done.output.index("{"):])
    assert execution["deployment_id"] == "shop" and execution["status"] == "terminated"  # ids from the folder
    assert json.loads(_run(env, "deployments", "inputs", "shop", "-f", "json").output)["size"] == 3
    tailed = _run(env, "events", "list", execution["id"], "--tail")
    assert tailed.exit_code == 0 and "made-it" in tailed.output and "workflow_succeeded" in tailed.output
    assert "made-it" not in _run(env, "events", "list", execution["id"]).output  # logs only when asked
    names = [w["name"] for w in json.loads(_run(env, "workflows", "list", "-d", "shop", "-f", "json").output)]
    assert {"install", "uninstall", "execute_operation"} <= set(names)
    again = _run(env, "install", "shop", "-f", "json")  # the deployment-id form still works
    assert again.exit_code == 0
