"""Bad requests get the right status and a Heat-shaped error body; the server keeps serving."""

from __future__ import annotations

import uuid

import httpx
import pytest

from .helpers import heat, heat_error, template, wait_for


@pytest.fixture
def base(noauth_server):
    return noauth_server.endpoint(f"bad-{uuid.uuid4().hex[:6]}")


TEMPLATE = {"heat_template_version": "2018-08-31", "resources": {"n": {"type": "OS::Heat::None"}}}


def test_malformed_json_is_a_400(base):
    for body in (b"{not json", b'{"stack_name": "x",', b"\xff\xfe\x00", b"[1, 2]", b'"text"', b"null x"):
        error = heat_error(httpx.post(f"{base}/stacks", content=body,
                                      headers={"Content-Type": "application/json"}), 400)
        assert error["type"] in ("MalformedRequestBody", "HTTPBadRequest"), error
    heat_error(httpx.post(f"{base}/validate", content=b"{oops"), 400)
    heat_error(httpx.post(f"{base}/stacks", content=b"[" * 100_000 + b"]" * 100_000), 400)  # too deep
    deep = b'{"stack_name": "d", "template": ' + b'{"a":' * 5000 + b"1" + b"}" * 5000 + b"}"
    heat_error(httpx.post(f"{base}/stacks", content=deep), 400)
    value: object = 1
    for _ in range(600):  # valid JSON, but deeper than any template needs
        value = {"a": value}
    template = {"heat_template_version": "2018-08-31",
                "resources": {"x": {"type": "OS::Heat::Value", "properties": {"value": value}}}}
    heat_error(httpx.post(f"{base}/stacks", json={"stack_name": "deep", "template": template}), 400)
    text = "heat_template_version: 2018-08-31\nresources:\n  x:\n    type: OS::Heat::Value\n" \
           "    properties:\n      value: " + "[" * 600 + "]" * 600 + "\n"
    heat_error(httpx.post(f"{base}/stacks", json={"stack_name": "deep", "template": text}), 400)
    heat_error(httpx.put(f"{base}/stacks/a/b", content=b"{oops"), 400)


def test_oversized_bodies_are_a_413(base, noauth_server):
    big = b'{"stack_name": "big", "template": "' + b"x" * (1024 * 1024) + b'"}'
    error = heat_error(httpx.post(f"{base}/stacks", content=big), 413)
    assert error["type"] == "RequestLimitExceeded"

    def chunks():  # no Content-Length: the limit holds while reading
        yield b'{"stack_name": "big", "template": "'
        for _ in range(40):
            yield b"y" * 65536
        yield b'"}'

    heat_error(httpx.post(f"{base}/stacks", content=chunks()), 413)
    heat_error(httpx.post(f"{base}/validate", content=big), 413)
    assert httpx.get(noauth_server.url + "/").status_code == 300


def test_unknown_routes_and_methods(base, noauth_server):
    error = heat_error(httpx.get(f"{base}/no/such/route"), 404)
    assert error["type"] == "HTTPNotFound"
    heat_error(httpx.get(noauth_server.url + "/v2/x/stacks"), 404)
    heat_error(httpx.delete(f"{base}/stacks"), 405)
    heat_error(httpx.get(f"{base}/stacks/missing"), 404)
    heat_error(httpx.get(f"{base}/stacks/missing/resources"), 404)
    heat_error(httpx.get(f"{base}/stacks/missing/00000000-0000-0000-0000-000000000000"), 404)
    heat_error(httpx.get(f"{base}/stacks/missing/x/snapshots"), 404)


def test_invalid_templates_and_parameters(base):
    def create(body):
        return httpx.post(f"{base}/stacks", json=body)

    error = heat_error(create({"stack_name": "t", "template": "heat_template_version: 2018-08-31\n"
                                                              "resources: [unclosed"}), 400)
    assert "invalid YAML" in error["message"] and error["problems"][0]["line"] in (2, 3)
    error = heat_error(create({"stack_name": "t", "template": {"heat_template_version": "2099-01-01"}}), 400)
    assert "heat_template_version" in error["message"]
    files, bad = template("invalid.yaml")
    error = heat_error(create({"stack_name": "t", "template": bad, "files": files}), 400)
    codes = {p["code"] for p in error["problems"]}
    assert {"unknown-resource-type", "unknown-property", "unknown-parameter"} <= codes
    assert "resources.typo.type" in {p["path"] for p in error["problems"]}
    heat_error(create({"stack_name": "t"}), 400)  # no template
    heat_error(create({"template": TEMPLATE}), 400)  # no name
    heat_error(create({"stack_name": "1-starts-with-a-digit", "template": TEMPLATE}), 400)
    heat_error(create({"stack_name": "t", "template": 42}), 400)
    heat_error(create({"stack_name": "t", "template": TEMPLATE, "parameters": ["a"]}), 400)
    heat_error(create({"stack_name": "t", "template": TEMPLATE, "parameters": {"nope": 1}}), 400)
    heat_error(create({"stack_name": "t", "template": TEMPLATE, "timeout_mins": "soon"}), 400)
    heat_error(create({"stack_name": "t", "template": TEMPLATE, "environment": {"bogus_section": {}}}), 400)
    heat_error(create({"stack_name": "t", "template": TEMPLATE, "environment": "{bad yaml"}), 400)
    heat_error(create({"stack_name": "t", "template": TEMPLATE, "files": {"a": 1}}), 400)
    heat_error(create({"stack_name": "t", "template_url": "file:///etc/passwd"}), 400)
    heat_error(create({"stack_name": "t", "template": TEMPLATE, "environment_files": ["missing.yaml"]}), 400)
    heat_error(httpx.post(f"{base}/validate", json={"template": {"resources": {}}}), 400)
    assert httpx.get(f"{base}/stacks").json() == {"stacks": []}  # nothing was created


def test_bad_query_parameters(base):
    heat_error(httpx.get(f"{base}/stacks", params={"limit": "many"}), 400)
    heat_error(httpx.get(f"{base}/stacks", params={"sort_dir": "sideways"}), 400)
    heat_error(httpx.get(f"{base}/stacks", params={"sort_keys": "colour"}), 400)
    heat_error(httpx.get(f"{base}/stacks", params={"show_deleted": "perhaps"}), 400)
    heat_error(httpx.get(f"{base}/stacks", params={"marker": "no-such-stack"}), 404)
    heat_error(httpx.get(f"{base}/stacks", params={"global_tenant": "true"}), 403)
    heat_error(httpx.get(f"{base}/template_versions/heat_template_version.2016-10-14/functions",
                         params={"with_condition_func": "maybe"}), 400)
    heat_error(httpx.get(f"{base}/resource_types/OS::Heat::None/template",
                         params={"template_type": "xml"}), 400)


def test_conflicts_and_bad_actions(base, noauth_server):
    project = base.rsplit("/", 1)[1]
    client = heat(noauth_server, project)
    created = httpx.post(f"{base}/stacks", json={"stack_name": "one", "template": TEMPLATE})
    assert created.status_code == 201 and created.headers["Location"].endswith(
        "/stacks/one/" + created.json()["stack"]["id"])
    error = heat_error(httpx.post(f"{base}/stacks", json={"stack_name": "one", "template": TEMPLATE}), 409)
    assert "already exists" in error["message"]
    stack = wait_for(client, "one")
    url = f"{base}/stacks/one/{stack.id}"
    heat_error(httpx.post(f"{url}/actions", json={}), 400)
    heat_error(httpx.post(f"{url}/actions", json={"suspend": None, "resume": None}), 400)
    heat_error(httpx.post(f"{url}/actions", json={"explode": None}), 400)
    heat_error(httpx.post(f"{url}/actions", json={"cancel_update": None}), 400)
    heat_error(httpx.patch(f"{url}/resources/n", json={"mark_unhealthy": "maybe"}), 400)
    heat_error(httpx.patch(f"{url}/resources/n", json={"reason": "x"}), 400)
    heat_error(httpx.patch(f"{url}/resources/ghost", json={"mark_unhealthy": True}), 404)
    heat_error(httpx.get(f"{url}/resources/ghost"), 404)
    heat_error(httpx.get(f"{url}/resources", params={"colour": "red"}), 400)
    heat_error(httpx.post(f"{url}/resources/n/signal", json={}), 400)  # OS::Heat::None takes no signals
    heat_error(httpx.get(f"{url}/outputs/none"), 404)
    heat_error(httpx.get(f"{url}/snapshots/no-such-snapshot"), 404)
    heat_error(httpx.post(f"{url}/snapshots", json={"name": ["not", "a", "name"]}), 400)
    heat_error(httpx.post(f"{url}/snapshots", json={"name": "n" * 256}), 400)
    heat_error(httpx.post(f"{url}/snapshots/no-such-snapshot/restore", json={}), 404)
    heat_error(httpx.put(url, json={"parameters": {}}), 400)  # PUT needs a template
    heat_error(httpx.get(f"{base}/stacks/one/not-the-id"), 404)
    heat_error(httpx.get(f"{base}/stacks/other-name/{stack.id}"), 404)


def test_the_server_keeps_serving(noauth_server, base):
    for _ in range(3):
        httpx.post(f"{base}/stacks", content=b"\x00" * 100)
    versions = httpx.get(noauth_server.url + "/")
    assert versions.status_code == 300 and versions.json()["versions"][0]["id"] == "v1.0"
    assert httpx.get(noauth_server.url + "/openapi.json").json()["info"]["title"]
    assert noauth_server.alive()
