"""A remote stack (``OS::Heat::Stack`` in another region) with a broker set: the workers make the
calls to the other region, not the process that took the request.  Each side's stoker.conf names
RegionTwo with a token of its own project there, so where the stack lands says who made it."""

from __future__ import annotations

import pytest

from api.helpers import create_token, heat, start_server

pytestmark = pytest.mark.slow  # two servers and a worker

REMOTE = ("heat_template_version: 2013-05-23\nresources:\n"
          "  word: {type: OS::Heat::RandomString, properties: {length: 12}}\n"
          "outputs:\n  word: {value: {get_attr: [word, value]}}\n")
PARENT = {"heat_template_version": "2013-05-23", "resources": {"far": {
    "type": "OS::Heat::Stack", "properties": {"context": {"region_name": "RegionTwo"}, "template": REMOTE}}},
    "outputs": {"word": {"value": {"get_attr": ["far", "outputs", "word"]}}}}


def _regions(home, server, project: str, token: str) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "stoker.conf").write_text(f"[regions]\nRegionTwo = {server.endpoint(project)}\nRegionTwo.token = {token}\n")


def test_a_remote_stack_is_made_and_deleted_by_the_workers(cluster, tmp_path, monkeypatch):
    there_home = tmp_path / "region-two"
    there_db = f"sqlite:///{there_home / 'stoker.db'}"
    there_home.mkdir()
    asking, working = create_token(there_db, "asking"), create_token(there_db, "working")
    there = start_server(there_home, there_db, auth="token")
    try:
        here_home = tmp_path / "here"
        _regions(here_home, there, "asking", asking)  # validate asks the region from here, as Heat does
        monkeypatch.setenv("STOKER_HOME", str(here_home))
        _regions(tmp_path / "home", there, "working", working)  # the workers' home (cluster.env)
        cluster.start_worker()

        started = cluster.engine.create_stack("parent", PARENT)
        done = cluster.settle(started["id"])
        assert done["stack_status"] == "CREATE_COMPLETE", done["stack_status_reason"]
        made = list(heat(there, "working", working).stacks.list())
        assert len(made) == 1 and list(heat(there, "asking", asking).stacks.list()) == []
        remote_id = cluster.engine.resource("parent", "far")["physical_resource_id"]
        assert made[0].id == remote_id
        word = {o["output_key"]: o["output_value"] for o in heat(there, "working", working).stacks.get(
            remote_id).outputs}["word"]
        assert cluster.engine.outputs("parent")[0]["output_value"] == word and len(word) == 12

        cluster.engine.delete_stack("parent")
        assert cluster.settle(started["id"])["stack_status"] == "DELETE_COMPLETE"
        assert list(heat(there, "working", working).stacks.list()) == []
    finally:
        there.stop()
