"""Bounded work over the API: one nesting limit, capped results, Heat's resource limit of 1,000,
and one project's heavy requests queued in its own pool, not in front of another project's."""

from __future__ import annotations

import threading
import warnings
from concurrent.futures import wait

import pytest

with warnings.catch_warnings():  # starlette's notice about httpx versions
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from stoker.api.app import create_app

from .helpers import heat_error

HOT = "heat_template_version: 2018-08-31\n"


@pytest.fixture
def api(tmp_path, monkeypatch):
    monkeypatch.setenv("STOKER_HOME", str(tmp_path / "home"))
    with TestClient(create_app(f"sqlite:///{tmp_path / 's.db'}")) as client:
        yield client


def test_deep_documents_and_expressions_get_one_clear_limit(api):
    deep_text = HOT + "outputs:\n  o: {value: " + "[" * 3000 + "]" * 3000 + "}\n"
    for body in ({"template": deep_text},
                 {"template": HOT, "environment": "parameters: " + "[" * 3000 + "]" * 3000}):
        message = heat_error(api.post("/v1/p/validate", json=body), 400)["message"]
        assert "nested more than 100 levels deep (max_nesting)" in message
    yaql = {"heat_template_version": "2018-08-31", "outputs": {"o": {"value": {
        "yaql": {"expression": "(" * 3000 + "1" + ")" * 3000}}}}}
    assert "max_nesting" in heat_error(api.post("/v1/p/validate", json={"template": yaql}), 400)["message"]


def test_repeat_over_three_200_item_lists_is_refused_before_it_is_built(api):
    items = [str(i) for i in range(200)]
    template = {"heat_template_version": "2018-08-31", "resources": {"v": {
        "type": "OS::Heat::Value", "properties": {"value": {"repeat": {
            "template": {"k": "<a><b><c>"}, "for_each": {"<a>": items, "<b>": items, "<c>": items}}}}}}}
    error = heat_error(api.post("/v1/p/stacks", json={"stack_name": "r", "template": template}), 400)
    assert "8000000 pieces" in error["message"] and "max_value_size" in error["message"]


def test_the_api_allows_1000_resources_counting_nested_stacks(api):
    group = {"heat_template_version": "2018-08-31", "resources": {"g": {
        "type": "OS::Heat::ResourceGroup", "properties": {"count": 1000, "resource_def": {"type": "OS::Heat::None"}}}}}
    error = heat_error(api.post("/v1/p/stacks", json={"stack_name": "g", "template": group}), 400)
    assert "1001 resources, more than the limit of 1000 (max_resources_per_stack)" in error["message"]
    group["resources"]["g"]["properties"]["count"] = 999
    assert api.post("/v1/p/validate", json={"template": group}).status_code == 200


def test_a_busy_project_does_not_hold_up_another(api):
    runner = api.app.state.stoker.runner
    release = threading.Event()
    busy = [runner.pool("busy", "request").submit(release.wait) for _ in range(runner.sizes["request"])]
    answers: dict[str, int] = {}

    def validate(project: str) -> None:
        answers[project] = api.post(f"/v1/{project}/validate", json={"template": HOT}).status_code

    queued = threading.Thread(target=validate, args=("busy",))
    queued.start()
    validate("calm")  # answered while every thread of "busy" is taken
    assert answers == {"calm": 200}
    release.set()
    queued.join(30)
    assert answers == {"calm": 200, "busy": 200}
    wait(busy, timeout=30)
