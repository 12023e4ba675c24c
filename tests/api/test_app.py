"""The app factory, auth modes and the `stoker api` command, in-process."""

from __future__ import annotations

import os
import warnings

import pytest
from click.testing import CliRunner

with warnings.catch_warnings():  # starlette's notice about httpx versions
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from stoker.api.app import app_from_env, create_app, settings_to_env
from stoker.api.auth import Authenticator, resolve_mode
from stoker.api.error_bodies import ApiError
from stoker.cli.api_cmds import api


def test_auth_mode_follows_the_address():
    assert resolve_mode("auto", "127.0.0.1") == "noauth"
    assert resolve_mode("auto", "localhost") == "noauth"
    assert resolve_mode("auto", "::1") == "noauth"
    assert resolve_mode("auto", "0.0.0.0") == "token"
    assert resolve_mode("auto", "192.0.2.10") == "token"
    assert resolve_mode("noauth", "0.0.0.0") == "noauth"
    with pytest.raises(ValueError):
        resolve_mode("keystone", "127.0.0.1")


def test_noauth_project_is_the_url_tenant():
    auth = Authenticator("noauth")
    assert auth.project("team", None) == "team"
    with pytest.raises(ValueError):
        Authenticator("token")  # a token store is needed


def test_app_documents_its_routes(tmp_path):
    client = TestClient(create_app(f"sqlite:///{tmp_path / 's.db'}"))
    document = client.get("/openapi.json").json()
    paths = document["paths"]
    for path in ("/v1/{tenant_id}/stacks", "/v1/{tenant_id}/stacks/{stack_name}/{stack_id}",
                 "/v1/{tenant_id}/validate", "/v1/{tenant_id}/resource_types/{type_name}",
                 "/v1/{tenant_id}/software_deployments/metadata/{server_id}",
                 "/v1/{tenant_id}/stacks/{stack_name}/{stack_id}/resources/{resource_name}/events/{event_id}"):
        assert path in paths, path
    assert client.get("/").status_code == 300
    assert client.get("/v1/p/build_info").json()["api"]["revision"].startswith("stoker-")


def test_token_mode_app_needs_tokens(tmp_path):
    client = TestClient(create_app(f"sqlite:///{tmp_path / 's.db'}", auth_mode="token"))
    response = client.get("/v1/p/stacks")
    assert response.status_code == 401 and response.json()["error"]["type"] == "NotAuthenticated"
    token = client.app.state.stoker.auth.tokens.create("p").token
    assert client.get("/v1/p/stacks", headers={"X-Auth-Token": token}).json() == {"stacks": []}


def test_app_from_env(tmp_path, monkeypatch):
    for key, value in settings_to_env(f"sqlite:///{tmp_path / 'e.db'}", "token", max_body_size=10).items():
        monkeypatch.setenv(key, value)
    app = app_from_env()
    assert app.state.stoker.auth.mode == "token" and app.state.max_body_size == 10
    response = TestClient(app).post("/v1/p/stacks", content=b"x" * 100,
                                    headers={"X-Auth-Token": app.state.stoker.auth.tokens.create("p").token})
    assert response.status_code == 413


@pytest.mark.parametrize("host, given, expected", [("127.0.0.1", "auto", "noauth"), ("0.0.0.0", "auto", "token"),
                                                   ("0.0.0.0", "noauth", "noauth")])
def test_api_command_chooses_auth(tmp_path, monkeypatch, host, given, expected):
    seen = {}

    def fake_serve(app, host, port, workers, log_level):
        seen.update(app=app, workers=workers, auth=os.environ.get("STOKER_API_AUTH"))

    from stoker.cli import api_cmds

    monkeypatch.setattr(api_cmds, "serve", fake_serve)
    for key in list(os.environ):
        if key.startswith("STOKER_API_"):
            monkeypatch.delenv(key)
    result = CliRunner().invoke(api, ["--host", host, "--port", "9999", "--workers", "3", "--auth", given,
                                      "--db-url", f"sqlite:///{tmp_path / 'c.db'}"])
    assert result.exit_code == 0, result.output
    assert seen["auth"] == expected and seen["workers"] == 3
    assert seen["app"] == "stoker.api.app:app_from_env"
    if host != "127.0.0.1" and expected == "noauth":
        assert "without authentication" in result.output
    for key in list(os.environ):  # the command exports its settings for the workers
        if key.startswith("STOKER_API_"):
            monkeypatch.delenv(key)


def test_api_error_defaults():
    error = ApiError(409, "busy")
    assert error.error_type == "HTTPConflict"



def _created(client: TestClient, name: str, resources: dict) -> str:
    """The URL of stack ``name`` created through the API, once it is CREATE_COMPLETE."""
    import time

    template = {"heat_template_version": "2018-08-31", "resources": resources}
    stack_id = client.post("/v1/p/stacks", json={"stack_name": name, "template": template}).json()["stack"]["id"]
    url = f"/v1/p/stacks/{name}/{stack_id}"
    for _ in range(250):
        if client.get(url).json()["stack"]["stack_status"] == "CREATE_COMPLETE":
            break
        time.sleep(0.02)
    return url


def test_show_of_a_stack_deleted_mid_request_reports_it_deleted(tmp_path, monkeypatch):
    """A delete that completes between the lookup and the show is not a 404 for the id."""
    from stoker.api import extras

    client = TestClient(create_app(f"sqlite:///{tmp_path / 's.db'}"))
    url = _created(client, "racy", {"v": {"type": "OS::Heat::None"}})
    real_identify = extras.identify

    def identify_then_delete(engine, name, sid, deleted_ok=False):
        record = real_identify(engine, name, sid, deleted_ok)  # still live here
        engine.store.update_stack(record.id, action="DELETE", status="COMPLETE")
        engine.store.soft_delete_stack(record.id)
        return record

    monkeypatch.setattr(extras, "identify", identify_then_delete)
    response = client.get(url)
    assert response.status_code == 200, response.text
    assert response.json()["stack"]["stack_status"] == "DELETE_COMPLETE"


def test_event_filters_keep_the_events_heat_keeps(tmp_path):
    """Filters on a stack's events (the walked path, any depth): a status alone or with its action,
    several values of one key (any of them), the resource's name and type."""
    client = TestClient(create_app(f"sqlite:///{tmp_path / 's.db'}"))
    url = _created(client, "ev", {"a": {"type": "OS::Heat::None"}, "b": {"type": "OS::Heat::RandomString"}})

    def kept(query: str) -> list[tuple[str, str]]:
        events = client.get(f"{url}/events?{query}").json()["events"]
        return sorted((e["resource_name"], e["resource_status"]) for e in events)

    assert kept("resource_status=COMPLETE&resource_name=a") == [("a", "CREATE_COMPLETE")]
    assert kept("resource_status=CREATE_IN_PROGRESS&resource_type=OS::Heat::RandomString") == [
        ("b", "CREATE_IN_PROGRESS")]
    assert kept("resource_name=a&resource_name=b&resource_status=COMPLETE&resource_action=CREATE") == [
        ("a", "CREATE_COMPLETE"), ("b", "CREATE_COMPLETE")]
    assert kept("resource_action=DELETE") == []
