"""Tenants and roles on Cloudify's routes: another tenant's objects are not found on any route, roles limit
what a user may do, hidden secrets stay masked, script operations are off unless allowed; hostile bodies
(archive bombs, ``..``, absolute paths, links, huge inputs) are refused with a 4xx in well under 5 s."""

from __future__ import annotations

import base64
import gzip
import io
import tarfile
import time
import zipfile

import httpx
import pytest

from .conftest import EXAMPLES, PASSWORD, cloudify_server

API = "/api/v3.1"
#: the bound the hostile standard sets on a refusal
REFUSAL_BOUND = 5.0


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cfy-iso")
    started = cloudify_server(tmp, [("alice", "tenant-a", "user"), ("bob", "tenant-b", "manager"),
                                    ("vera", "tenant-a", "viewer")])
    yield started
    started.stop()


def client(server, user: str, tenant: str) -> httpx.Client:
    auth = base64.b64encode(f"{user}:{PASSWORD}".encode()).decode()
    return httpx.Client(base_url=server.url + API, timeout=30,
                        headers={"Authorization": f"Basic {auth}", "Tenant": tenant})


def _archive(files: dict[str, bytes], top: str = "bp") -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(f"{top}/{name}" if top else name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


BLUEPRINT = (EXAMPLES / "local-app" / "blueprint.yaml").read_bytes()
SCRIPTS = {f"scripts/{p.name}": p.read_bytes() for p in (EXAMPLES / "local-app" / "scripts").iterdir()}


def upload(c: httpx.Client, blueprint_id: str, data: bytes, name: str = "blueprint.yaml") -> httpx.Response:
    return c.put(f"/blueprints/{blueprint_id}", params={"application_file_name": name}, content=data,
                 headers={"Content-Type": "application/octet-stream"})


@pytest.fixture(scope="module")
def world(server):
    """Tenant A's blueprint, deployment, secret and (refused) execution."""
    alice = client(server, "alice", "tenant-a")
    assert upload(alice, "app", _archive({"blueprint.yaml": BLUEPRINT, **SCRIPTS})).status_code == 201
    made = alice.put("/deployments/web", json={"blueprint_id": "app", "inputs": {"port": 19402},
                                               "labels": [{"env": "a"}]})
    assert made.status_code == 201, made.text
    bob_in_a = client(server, "bob", "tenant-b")
    assert bob_in_a.put("/secrets/token", json={"value": "bob's", "is_hidden_value": True}).status_code == 200
    return alice


def test_another_tenant_finds_nothing_on_any_route(server, world):
    bob = client(server, "bob", "tenant-b")
    instance = world.get("/node-instances", params={"deployment_id": "web"}).json()["items"][0]["id"]
    for method, path, body in [
        ("GET", "/blueprints/app", None), ("GET", "/blueprints/app/archive", None),
        ("DELETE", "/blueprints/app", None), ("GET", "/deployments/web", None),
        ("GET", "/deployments/web/outputs", None), ("GET", "/deployments/web/capabilities", None),
        ("GET", "/deployments/web/workflows", None), ("DELETE", "/deployments/web", None),
        ("PATCH", "/deployments/web", {"labels": []}), ("GET", f"/node-instances/{instance}", None),
        ("PATCH", f"/node-instances/{instance}", {"runtime_properties": {"x": 1}, "version": 1}),
        ("POST", "/executions", {"deployment_id": "web", "workflow_id": "install"}),
    ]:
        answer = bob.request(method, path, json=body)
        assert answer.status_code == 404, (method, path, answer.text)
        assert answer.json()["error_code"] == "not_found_error"
    for path in ("/blueprints", "/deployments", "/nodes", "/node-instances", "/executions"):
        assert bob.get(path).json()["items"] == [], path
    assert bob.get("/labels/deployments").json()["items"] == []
    # naming tenant A in the header does not help: bob is no member
    intruder = client(server, "bob", "tenant-a")
    answer = intruder.get("/deployments/web")
    assert answer.status_code == 403 and answer.json()["error_code"] == "forbidden_error"
    alice_secrets = world.get("/secrets").json()["items"]
    assert [s["key"] for s in alice_secrets] == []  # bob's secret is tenant B's
    assert world.get("/secrets/token").status_code == 404


def test_roles_limit_what_a_user_may_do(server, world):
    vera = client(server, "vera", "tenant-a")
    assert vera.get("/deployments/web").status_code == 200
    for method, path, body in [("POST", "/executions", {"deployment_id": "web", "workflow_id": "install"}),
                               ("DELETE", "/deployments/web", None), ("PUT", "/secrets/k", {"value": "v"})]:
        answer = vera.request(method, path, json=body)
        assert answer.status_code == 403 and "viewer" in answer.json()["message"], (path, answer.text)
    answer = world.put("/secrets/k", json={"value": "v"})  # alice is a user, not a manager
    assert answer.status_code == 403 and "manager" in answer.json()["message"]


def test_hidden_secret_never_shown(server, world):
    bob = client(server, "bob", "tenant-b")
    shown = bob.get("/secrets/token").json()
    assert shown["is_hidden_value"] is True and shown["value"] != "bob's"
    assert "bob's" not in bob.get("/secrets").text


def test_bad_credentials_are_401(server):
    answer = client(server, "alice", "tenant-a")
    answer.headers["Authorization"] = "Basic " + base64.b64encode(b"alice:wrong").decode()
    refused = answer.get("/blueprints")
    assert refused.status_code == 401 and refused.json()["error_code"] == "unauthorized_error"
    assert httpx.get(server.url + API + "/blueprints").status_code == 401


def test_tokens_from_cfy_tokens_create_work_and_keep_the_role(server):
    vera = client(server, "vera", "tenant-a")
    token = vera.post("/tokens", json={"description": "ci"}).json()["value"]
    by_token = httpx.Client(base_url=server.url + API, headers={"Authentication-Token": token, "Tenant": "tenant-a"})
    assert by_token.get("/blueprints").status_code == 200
    assert by_token.post("/executions", json={"deployment_id": "web", "workflow_id": "install"}).status_code == 403
    # a user's token is no Heat token (its role would mean nothing there)
    assert httpx.get(server.url + "/v1/tenant-a/stacks", headers={"X-Auth-Token": token}).status_code == 401


def test_script_operations_are_off_unless_allowed(server, world):
    answer = world.post("/executions", json={"deployment_id": "web", "workflow_id": "install"})
    assert answer.status_code == 403
    assert "local_resource_projects" in answer.json()["message"] and "tenant-a" in answer.json()["message"]
    assert world.get("/executions").json()["items"] == []


def _refused_fast(c: httpx.Client, blueprint_id: str, data: bytes, needle: str) -> None:
    started = time.monotonic()
    answer = upload(c, blueprint_id, data)
    elapsed = time.monotonic() - started
    assert 400 <= answer.status_code < 500, answer.text
    assert needle in answer.json()["message"], answer.text
    assert elapsed < REFUSAL_BOUND
    assert c.get(f"/blueprints/{blueprint_id}").status_code == 404


def test_hostile_archives_are_refused(server):
    bob = client(server, "bob", "tenant-b")
    bomb = io.BytesIO()
    with gzip.GzipFile(fileobj=bomb, mode="wb") as packed:  # a member declaring 4 GB: refused at its header
        header = tarfile.TarInfo("bp/blueprint.yaml")
        header.size = 4 * 1024 ** 3
        packed.write(header.tobuf(tarfile.GNU_FORMAT) + bytes(1024 * 1024))
    _refused_fast(bob, "bomb", bomb.getvalue(), "max_blueprint_size")
    _refused_fast(bob, "dots", _archive({"blueprint.yaml": BLUEPRINT, "../evil.sh": b"x"}), "..")
    _refused_fast(bob, "abs", _archive({"blueprint.yaml": BLUEPRINT, "/etc/evil": b"x"}, top=""), "absolute")
    linked = io.BytesIO()
    with tarfile.open(fileobj=linked, mode="w:gz") as tar:
        link = tarfile.TarInfo("bp/scripts")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc"
        tar.addfile(link)
    _refused_fast(bob, "link", linked.getvalue(), "link")
    zipped = io.BytesIO()
    with zipfile.ZipFile(zipped, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("bp/blueprint.yaml", b"\0" * (60 * 1000 * 1000))  # 60 MB unpacked, ~60 kB packed
    _refused_fast(bob, "zipbomb", zipped.getvalue(), "max_blueprint_size")
    url = bob.put("/blueprints/fromurl", params={"blueprint_archive_url": "http://example.com/bp.tar.gz"},
                  content=b"", headers={"Content-Type": "application/octet-stream"})
    assert url.status_code == 400 and "URL" in url.json()["message"]


def test_huge_and_malformed_bodies_are_refused(server, world):
    bob = client(server, "bob", "tenant-b")
    started = time.monotonic()
    huge = bob.put("/deployments/big", json={"blueprint_id": "app", "inputs": {"port": "x" * (2 * 1024 * 1024)}})
    assert huge.status_code == 413 and huge.json()["error_code"] == "payload_too_large_error"
    assert time.monotonic() - started < REFUSAL_BOUND
    garbage = bob.put("/secrets/k", content=b"{not json", headers={"Content-Type": "application/json"})
    assert garbage.status_code == 400 and garbage.json()["message"]
    assert bob.get("/blueprints", params={"_size": "-1"}).status_code == 400


def test_noauth_serves_default_tenant_only(noauth_server):
    base = noauth_server.url
    assert httpx.get(base + "/api/version").json()["version"] == "7.0.5"
    assert httpx.get(base + API + "/status").json()["status"] == "OK"
    other = httpx.get(base + API + "/blueprints", headers={"Tenant": "someone-else"})
    assert other.status_code == 403 and "default_tenant" in other.json()["message"]


def test_a_route_not_served_answers_in_cloudifys_shape(noauth_server):
    answer = httpx.post(noauth_server.url + API + "/snapshots/x")  # a manager's backup: not served
    assert answer.status_code == 404 and answer.json()["error_code"] == "not_found_error"
    assert "not served" in answer.json()["message"]


def test_stokers_project_tokens_act_as_the_projects_manager(server, world):
    from ..helpers import create_token

    token = create_token(server.db_url, "tenant-b")
    for header in ("Authentication-Token", "X-Auth-Token"):
        own = httpx.Client(base_url=server.url + API, headers={header: token})
        assert own.put("/secrets/made-by-token", json={"value": "v"}).status_code == 200
        assert own.get("/deployments/web").status_code == 404  # tenant A's
        other = own.get("/blueprints", headers={"Tenant": "tenant-a"})
        assert other.status_code == 403 and other.json()["error_code"] == "forbidden_error"
        own.delete("/secrets/made-by-token")
