"""`stoker --url URL deployment update|history|get-update`: a deployment update through a `stoker api`
server, its execution followed here as against the local database."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from stoker.cli import main

from .helpers import start_server

HEADER = "tosca_definitions_version: cloudify_dsl_1_4\nimports: [cloudify/types/types.yaml]\nnode_templates:\n"
NODE = ("  {name}:\n    type: cloudify.nodes.Root\n    interfaces:\n      cloudify.interfaces.lifecycle:\n"
        "        create: scripts/create.sh\n")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A server that lets its projects run script operations (they run on its host)."""
    tmp = tmp_path_factory.mktemp("remote-update")
    server = start_server(tmp, f"sqlite:///{tmp / 'stoker.db'}", extra=("--allow-local-resources",))
    yield server
    server.stop()


def _blueprint(tmp_path, name: str, text: str):
    folder = tmp_path / name
    (folder / "scripts").mkdir(parents=True)
    (folder / "blueprint.yaml").write_text(text)
    (folder / "scripts" / "create.sh").write_text('ctx logger info "made $(ctx node id)"\n'
                                                 'ctx instance runtime-properties made yes\n')
    return str(folder / "blueprint.yaml")


def test_an_update_over_url_runs_in_the_server_and_is_followed_here(server, tmp_path):
    def stoker(*args: str):
        done = CliRunner().invoke(main, ["--url", server.endpoint("default"), *args], catch_exceptions=False)
        assert done.exit_code == 0, done.output
        return done

    stoker("install", _blueprint(tmp_path, "one", HEADER + NODE.format(name="first")), "-b", "one", "-d", "dep")
    stoker("blueprint", "upload", _blueprint(tmp_path, "two", HEADER + NODE.format(name="first")
                                             + NODE.format(name="second")), "-b", "two")
    preview = json.loads(stoker("deployment", "update", "dep", "-b", "two", "--preview", "-f", "json").stdout)
    assert [s["entity_id"] for s in preview["steps"] if s["entity_type"] == "node"] == [["nodes", "second"]]
    done = stoker("deployment", "update", "dep", "-b", "two", "-f", "json")
    update = json.loads(done.stdout)
    assert (update["state"], update["old_blueprint_id"], update["new_blueprint_id"]) == ("successful", "one", "two")
    assert "made second" in done.stderr and "made first" not in done.stderr  # only the added node ran
    assert json.loads(stoker("deployment", "get", "dep", "-f", "json").stdout)["blueprint_id"] == "two"
    [listed] = json.loads(stoker("deployment", "history", "-d", "dep", "-f", "json").stdout)
    assert listed["id"] == update["id"]
    shown = json.loads(stoker("deployment", "get-update", update["id"], "-f", "json").stdout)
    assert shown["execution_id"] == update["execution_id"]
