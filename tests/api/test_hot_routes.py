"""The short way to the create, lookup and show routes (``stoker/api/hot_routes.py``): taken for
those requests only, and every request answered as the plain route-by-route scan answers it."""

from __future__ import annotations

import json
import time
import warnings

with warnings.catch_warnings():  # starlette's notice about httpx versions
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from stoker.api.app import create_app
from stoker.api.hot_routes import HotRoutes

ONE = {"heat_template_version": "2018-08-31", "resources": {"r": {"type": "OS::Heat::None"}},
       "outputs": {"o": {"value": "out"}}}


def _scope(method: str, path: str) -> dict:
    return {"type": "http", "method": method, "path": path, "root_path": ""}


def _answers(client: TestClient, stack_id: str, requests: list[tuple[str, str, dict | None]]) -> str:
    """Each request's status, redirect, Allow header and body, the stack's id and times left out."""
    answers = []
    for method, path, body in requests:
        response = client.request(method, path, json=body, follow_redirects=False)
        try:
            content = _timeless(response.json())
        except ValueError:
            content = response.text
        answers.append([method, path, response.status_code, response.headers.get("location"),
                        response.headers.get("allow"), content])
    return json.dumps(answers).replace(stack_id, "ID")


def _timeless(value):
    if isinstance(value, dict):
        return {k: _timeless(v) for k, v in value.items() if not k.endswith("_time")}
    if isinstance(value, list):
        return [_timeless(v) for v in value]
    return value


def _created(client: TestClient, name: str) -> str:
    stack_id = client.post("/v1/p/stacks", json={"stack_name": name, "template": ONE}).json()["stack"]["id"]
    for _ in range(250):
        if client.get(f"/v1/p/stacks/{name}/{stack_id}").json()["stack"]["stack_status"] == "CREATE_COMPLETE":
            return stack_id
        time.sleep(0.02)
    raise AssertionError(f"{name} did not complete")


def test_the_hot_routes_take_the_create_lookup_and_show_and_leave_shadowing_paths_to_the_scan(tmp_path):
    app = create_app(f"sqlite:///{tmp_path / 's.db'}")
    hot = app.router.routes[0]
    assert isinstance(hot, HotRoutes)
    for method, path in [("POST", "/v1/p/stacks"), ("GET", "/v1/p/stacks/s"), ("GET", "/v1/p/stacks/s/123")]:
        assert hot.matches(_scope(method, path))[0].name == "FULL", (method, path)
    # registered before the show and the lookup, these literal paths keep their own routes
    for method, path in [("GET", "/v1/p/stacks/s/resources"), ("GET", "/v1/p/stacks/s/outputs"),
                         ("GET", "/v1/p/stacks/detail"), ("GET", "/v1/p/stacks"), ("PUT", "/v1/p/stacks"),
                         ("DELETE", "/v1/p/stacks/s/123"), ("HEAD", "/v1/p/stacks/s/123"),
                         ("GET", "/v1/p/stacks/s/123/outputs"), ("POST", "/api/v3.1/executions")]:
        assert hot.matches(_scope(method, path))[0].name == "NONE", (method, path)


def test_every_request_is_answered_as_without_the_hot_routes(tmp_path):
    """The same requests to two apps, one with its hot routes taken out: the same answers
    (statuses, redirects, Allow headers of a 405, bodies)."""
    answers = []
    for kept in (True, False):
        app = create_app(f"sqlite:///{tmp_path / f's{kept}.db'}")
        if not kept:
            del app.router.routes[0]
        with TestClient(app) as client:
            stack_id = _created(client, "one")
            requests = [
                ("GET", f"/v1/p/stacks/one/{stack_id}", None), ("GET", "/v1/p/stacks/one", None),
                ("GET", f"/v1/p/stacks/{stack_id}", None), ("GET", "/v1/p/stacks/one/resources", None),
                ("GET", "/v1/p/stacks/one/outputs", None), ("GET", "/v1/p/stacks/detail", None),
                ("GET", "/v1/p/stacks", None), ("PUT", "/v1/p/stacks", {}), ("GET", "/v1/p/stacks/nope", None),
                ("GET", f"/v1/p/stacks/nope/{stack_id}", None), ("POST", "/v1/p/stacks", {"stack_name": "bad"}),
                ("POST", "/v1/p/stacks/preview", {"stack_name": "pre", "template": ONE}),
                ("GET", f"/v1/p/stacks/one/{stack_id}/outputs", None), ("HEAD", f"/v1/p/stacks/one/{stack_id}", None),
                ("GET", f"/v1/p/stacks/one/{stack_id}/", None),
            ]
            answers.append(_answers(client, stack_id, requests))
    assert answers[0] == answers[1]
    assert [a[2] for a in json.loads(answers[0])[:3]] == [200, 302, 302]
