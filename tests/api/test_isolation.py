"""Tokens and projects: each token acts for one project, which sees only its own things."""

from __future__ import annotations

import json
import uuid

import httpx
import pytest
from heatclient import exc

from .helpers import create_token, heat, heat_error, template, token_cli, wait_for


@pytest.fixture(scope="module")
def stacks(token_server):
    """One stack in each project."""
    files, tpl = template("basic.yaml")
    made = {}
    for project in ("alpha", "beta"):
        client = heat(token_server, project, token_server.tokens[project])
        name = f"{project}-stack"
        made[project] = client.stacks.create(stack_name=name, template=tpl, files=files)["stack"]["id"]
        wait_for(client, made[project])
    return made


def test_requests_without_a_valid_token_are_refused(token_server):
    url = token_server.endpoint("alpha") + "/stacks"
    error = heat_error(httpx.get(url), 401)
    assert "X-Auth-Token" in error["message"]
    heat_error(httpx.get(url, headers={"X-Auth-Token": "stk_not-a-token"}), 401)
    with pytest.raises(exc.HTTPUnauthorized):
        list(heat(token_server, "alpha", "wrong").stacks.list())


def test_each_project_lists_only_its_own_stacks(token_server, stacks):
    for project in ("alpha", "beta"):
        client = heat(token_server, project, token_server.tokens[project])
        assert [s.id for s in client.stacks.list()] == [stacks[project]]


def test_another_projects_stack_is_not_found(token_server, stacks):
    alpha = heat(token_server, "alpha", token_server.tokens["alpha"])
    beta_id = stacks["beta"]
    files, tpl = template("basic.yaml")
    for attempt in (lambda: alpha.stacks.get(beta_id), lambda: alpha.stacks.get("beta-stack"),
                    lambda: alpha.stacks.update(beta_id, template=tpl, files=files),
                    lambda: alpha.stacks.delete(beta_id), lambda: alpha.resources.list(beta_id),
                    lambda: alpha.events.list(beta_id), lambda: alpha.actions.suspend(beta_id),
                    lambda: alpha.stacks.output_list(beta_id)):
        with pytest.raises(exc.HTTPNotFound):
            attempt()
    # the canonical URL of beta's stack, with alpha's token: still not found (never a 403)
    url = f"{token_server.endpoint('beta')}/stacks/beta-stack/{beta_id}"
    for method in ("GET", "PUT", "PATCH", "DELETE"):
        heat_error(httpx.request(method, url, headers={"X-Auth-Token": token_server.tokens["alpha"]},
                                 json={}), 404)
    heat_error(httpx.get(f"{token_server.endpoint('beta')}/stacks",
                         headers={"X-Auth-Token": token_server.tokens["alpha"]}), 403)
    beta = heat(token_server, "beta", token_server.tokens["beta"])
    assert wait_for(beta, beta_id).stack_status == "CREATE_COMPLETE"  # untouched


def test_same_name_in_two_projects(token_server, stacks):
    files, tpl = template("basic.yaml")
    name = f"shared-{uuid.uuid4().hex[:6]}"
    ids = {}
    for project in ("alpha", "beta"):
        client = heat(token_server, project, token_server.tokens[project])
        ids[project] = client.stacks.create(stack_name=name, template=tpl, files=files)["stack"]["id"]
    assert ids["alpha"] != ids["beta"]
    for project in ("alpha", "beta"):
        client = heat(token_server, project, token_server.tokens[project])
        assert wait_for(client, name).id == ids[project]


def test_software_configs_are_per_project(token_server):
    alpha = heat(token_server, "alpha", token_server.tokens["alpha"])
    beta = heat(token_server, "beta", token_server.tokens["beta"])
    config = alpha.software_configs.create(name="mine", group="script", config="echo")
    assert config.id in [c.id for c in alpha.software_configs.list()]
    assert config.id not in [c.id for c in beta.software_configs.list()]
    with pytest.raises(exc.HTTPNotFound):
        beta.software_configs.get(config.id)
    with pytest.raises(exc.HTTPNotFound):
        beta.software_deployments.create(config_id=config.id, server_id="s")


def test_token_list_and_revoke(token_server):
    token = create_token(token_server.db_url, "gamma")
    assert token.startswith("stk_")
    listed = token_cli("list", "--project", "gamma", "-f", "json", "--db-url", token_server.db_url)
    rows = json.loads(listed.stdout)
    assert len(rows) == 1 and rows[0]["project"] == "gamma" and token not in listed.stdout
    assert httpx.get(token_server.endpoint("gamma") + "/stacks", headers={"X-Auth-Token": token}).status_code == 200
    revoked = token_cli("revoke", rows[0]["id"], "--db-url", token_server.db_url)
    assert revoked.exit_code == 0, revoked.output
    assert token_cli("revoke", rows[0]["id"], "--db-url", token_server.db_url).exit_code == 1
    other = create_token(token_server.db_url, "gamma")
    rows = json.loads(token_cli("list", "--project", "gamma", "-f", "json", "--db-url", token_server.db_url).stdout)
    revoked_id = next(r["id"] for r in rows if r["revoked"])
    assert token_cli("revoke", revoked_id, "--db-url", token_server.db_url).exit_code == 1
    # a token never used before its revocation is refused at once
    fresh = create_token(token_server.db_url, "gamma")
    fresh_id = [r["id"] for r in json.loads(token_cli("list", "--project", "gamma", "-f", "json", "--db-url",
                                                        token_server.db_url).stdout)][-1]
    token_cli("revoke", fresh_id, "--db-url", token_server.db_url)
    heat_error(httpx.get(token_server.endpoint("gamma") + "/stacks", headers={"X-Auth-Token": fresh}), 401)
    assert httpx.get(token_server.endpoint("gamma") + "/stacks", headers={"X-Auth-Token": other}).status_code == 200
