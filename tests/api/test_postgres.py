"""`stoker api` with two worker processes on PostgreSQL (a fresh database, dropped afterwards)."""

from __future__ import annotations

import concurrent.futures

import httpx
import pytest

from .helpers import create_token, heat, heat_error, start_server, template, wait_for



@pytest.fixture(scope="module")
def pg_server(tmp_path_factory, new_pg_database):
    with new_pg_database("stoker_api_test") as database:
        db_url = database.url.render_as_string(hide_password=False)
        server = None
        try:
            tokens = {p: create_token(db_url, p) for p in ("red", "blue")}
            server = start_server(tmp_path_factory.mktemp("pg"), db_url, auth="token", workers=2)
            server.tokens = tokens
            yield server
        finally:
            if server is not None:
                server.stop()


def test_heatclient_on_postgresql_with_two_workers(pg_server):
    red = heat(pg_server, "red", pg_server.tokens["red"])
    blue = heat(pg_server, "blue", pg_server.tokens["blue"])
    files, tpl = template("ten.yaml")

    def create(i: int) -> str:
        return red.stacks.create(stack_name=f"pg{i}", template=tpl, files=files)["stack"]["id"]

    with concurrent.futures.ThreadPoolExecutor(4) as pool:  # spread over both workers
        ids = list(pool.map(create, range(4)))
    for stack_id in ids:
        stack = wait_for(red, stack_id)
        assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
        assert len(stack.outputs[0]["output_value"]) == 4
    assert sorted(s.stack_name for s in red.stacks.list()) == [f"pg{i}" for i in range(4)]
    assert list(blue.stacks.list()) == []
    assert len(red.resources.list("pg0")) == 10
    assert red.events.list("pg0")[-1].resource_status == "CREATE_COMPLETE"
    heat_error(httpx.get(f"{pg_server.endpoint('red')}/stacks/pg0/{ids[0]}",
                         headers={"X-Auth-Token": pg_server.tokens["blue"]}), 404)
    red.stacks.update("pg1", existing=True)
    assert wait_for(red, "pg1").stack_status == "UPDATE_COMPLETE"
    red.stacks.delete("pg2")
    assert wait_for(red, ids[2]).stack_status == "DELETE_COMPLETE"
    assert sorted(s.stack_name for s in red.stacks.list()) == ["pg0", "pg1", "pg3"]
