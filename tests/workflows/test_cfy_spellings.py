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
