"""``cfy`` 7.0.5 commands beyond a blueprint's life, each run as users run it against ``stoker api``: blueprint
details, runtime properties, REST tokens, secrets providers (another manager's and a Vault's secrets read where
``get_secret`` reads them), and the manager's parts Stoker answers for itself or refuses (cluster, brokers,
license, LDAP, config, log bundles, maintenance mode)."""

from __future__ import annotations

import json
import threading
from datetime import datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from .conftest import NOOP, PASSWORD, admin_server, cfy_on, rest_client

pytestmark = pytest.mark.slow  # each `cfy` command is a process of its own

pytest.importorskip("cloudify_rest_client")

#: a blueprint with metadata, whose outputs read two secrets
SECRETS_BLUEPRINT = """tosca_definitions_version: cloudify_dsl_1_4
imports: [cloudify/types/types.yaml]
metadata:
  owner: team-blue
node_templates:
  app: {type: cloudify.nodes.Root}
outputs:
  from_manager: {value: {get_secret: relayed}}
  from_vault: {value: {get_secret: vaulted}}
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    yield from admin_server(tmp_path_factory, "sweep")


@pytest.fixture(scope="module")
def cfy(server, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("sweep-cfy")
    run = cfy_on(server, tmp)
    for name, text in (("bp", SECRETS_BLUEPRINT), ("plain", NOOP)):
        (tmp / f"{name}.yaml").write_text(text)
        run("blueprints", "upload", str(tmp / f"{name}.yaml"), "-b", name)
    return run


def as_json(run, *args: str):
    return json.loads(run(*args, "--json"))


def test_blueprints_get_shows_the_blueprint_and_its_metadata(cfy):
    shown = cfy("blueprints", "get", "bp")
    assert "owner: team-blue" in shown
    assert as_json(cfy, "blueprints", "get", "bp")["metadata"] == {"owner": "team-blue"}


def test_update_runtime_and_delete_runtime_change_an_instance(cfy):
    cfy("deployments", "create", "runtime", "-b", "plain")
    (instance,) = as_json(cfy, "node-instances", "list", "-d", "runtime")
    cfy("node-instances", "update-runtime", instance["id"], "-p", "color=blue;size=3")
    assert as_json(cfy, "node-instances", "get", instance["id"])["runtime_properties"] == {"color": "blue",
                                                                                           "size": "3"}
    cfy("node-instances", "delete-runtime", instance["id"], "-p", "color")
    assert as_json(cfy, "node-instances", "get", instance["id"])["runtime_properties"] == {"size": "3"}


def test_tokens_are_created_with_an_expiry_listed_got_and_deleted(cfy):
    made = as_json(cfy, "tokens", "create", "-e", "+2h", "-d", "ci pipeline")
    expires = datetime.strptime(made["expiration_date"], "%Y-%m-%dT%H:%M:%SZ")
    assert timedelta(hours=1) < expires - datetime.utcnow() <= timedelta(hours=2)
    assert made["value"].startswith("stk_")
    assert made["id"] in {t["id"] for t in as_json(cfy, "tokens", "list")}
    got = as_json(cfy, "tokens", "get", made["id"])
    assert got["description"] == "ci pipeline" and not got.get("value")  # a token's value is shown once
    later = as_json(cfy, "tokens", "create", "-e", "2099-01-02 03:04")
    assert later["expiration_date"] == "2099-01-02T03:04:00Z"
    assert "not in the future" in cfy("tokens", "create", "-e", "2020-01-01 00:00", ok=False)
    cfy("tokens", "delete", made["id"])
    assert "Could not find token" in cfy("tokens", "get", made["id"], ok=False)
    assert made["id"] not in {t["id"] for t in as_json(cfy, "tokens", "list")}


class _Vault(BaseHTTPRequestHandler):
    """HashiCorp Vault's KV v2 reads, for one token: ``/v1/secret/data/<path>`` and the token's own lookup."""

    TOKEN = "vault-token"
    DATA = {"apps/web": {"vaulted": "from the vault"}}

    def do_GET(self) -> None:
        if self.headers.get("X-Vault-Token") != self.TOKEN:
            return self._answer(403, {"errors": ["permission denied"]})
        if self.path == "/v1/auth/token/lookup-self":
            return self._answer(200, {"data": {"id": self.TOKEN}})
        path = self.path.removeprefix("/v1/secret/data/")
        if path in self.DATA:
            return self._answer(200, {"data": {"data": self.DATA[path], "metadata": {"version": 1}}})
        return self._answer(404, {"errors": []})

    def _answer(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args) -> None:
        """Quiet: the test's output is the assertions'."""


@pytest.fixture
def vault():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Vault)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_secrets_providers_give_the_values_get_secret_reads(cfy, server, vault):
    port = server.url.rsplit(":", 1)[1]
    manager = {"host": "127.0.0.1", "port": port, "protocol": "http", "username": "admin", "password": PASSWORD,
               "tenant": "default_tenant"}
    cfy("secrets", "create", "origin", "-s", "kept on the other manager")
    assert "Connected to the Secrets Provider successfully" in cfy(
        "secrets", "providers", "create", "other", "-y", "cloudify", "-c", json.dumps(manager))
    cfy("secrets", "providers", "create", "vault", "-y", "vault", "-s", "-c",
        json.dumps({"url": vault, "token": _Vault.TOKEN, "path": "apps"}))
    assert {p["name"]: p["type"] for p in as_json(cfy, "secrets", "providers", "list")} == {
        "other": "cloudify", "vault": "vault"}
    assert as_json(cfy, "secrets", "providers", "get", "vault")["connection_parameters"]["path"] == "apps"
    cfy("secrets", "providers", "test", "vault")

    cfy("secrets", "create", "relayed", "--provider", "other", "-o", json.dumps({"name": "origin"}))
    cfy("secrets", "create", "vaulted", "--provider", "vault", "-o", json.dumps({"path": "web"}))
    relayed = as_json(cfy, "secrets", "get", "relayed")
    assert (relayed["value"], relayed["provider_name"]) == ("kept on the other manager", "other")
    assert as_json(cfy, "secrets", "get", "vaulted")["value"] == "from the vault"
    cfy("deployments", "create", "provided", "-b", "bp")
    outputs = as_json(cfy, "deployments", "outputs", "provided")
    assert (outputs["from_manager"]["value"], outputs["from_vault"]["value"]) == ("kept on the other manager",
                                                                                 "from the vault")

    refused = cfy("secrets", "providers", "create", "wrong", "-y", "cloudify", "-c",
                  json.dumps({**manager, "password": "not it"}), ok=False)
    assert "400: Cloudify provider wrong: 401" in refused
    assert "not supported" in cfy("secrets", "providers", "create", "aws", "-y", "aws", ok=False)
    assert "`SecretsProvider` with ID `nowhere` was not found" in cfy(
        "secrets", "create", "lost", "--provider", "nowhere", ok=False)
    assert "is used by secrets ['vaulted']" in cfy("secrets", "providers", "delete", "vault", ok=False)
    cfy("secrets", "delete", "vaulted")
    cfy("secrets", "providers", "delete", "vault")
    assert "vault" not in {p["name"] for p in as_json(cfy, "secrets", "providers", "list")}


def test_only_the_operator_points_the_server_at_a_provider(server, vault):
    """A provider makes the server connect where it says: a project's user may name one, not make one."""
    from cloudify_rest_client.exceptions import CloudifyClientError

    admin = rest_client(server)
    admin.users.create("pat", PASSWORD, "default")
    admin.tenants.add_user("pat", "default_tenant", "user")
    admin.secrets_providers.create("kept-here", "local")
    pat = rest_client(server, "pat")
    for attempt in (lambda: pat.secrets_providers.create("mine", "vault", {"url": vault, "token": "t", "path": "p"}),
                    lambda: pat.secrets_providers.update("kept-here", "cloudify", {"host": "10.0.0.1"}),
                    lambda: pat.secrets_providers.delete("kept-here")):
        with pytest.raises(CloudifyClientError) as refused:
            attempt()
        assert refused.value.status_code == 403 and "only the operator" in str(refused.value)
    assert "kept-here" in [p.name for p in pat.secrets_providers.list()]
    assert pat.secrets_providers.get("kept-here").type == "local"


def test_manager_parts_are_answered_for_stoker_or_refused_clearly(cfy):
    cluster = as_json(cfy, "cluster", "status")
    assert (cluster["status"], set(cluster["services"])) == ("OK", {"manager", "db"})
    assert as_json(cfy, "cluster", "brokers", "list") == []  # no workers: nothing is dispatched to a broker
    assert as_json(cfy, "license", "list") == []
    assert "Manager is licensed" in cfy("license", "check")
    assert "405: Stoker needs no license" in cfy("license", "remove", ok=False)
    assert cfy("ldap", "status").strip().endswith("disabled")
    assert "405: Stoker checks passwords itself" in cfy("ldap", "set", "-s", "ldap://ldap.example", "-d", "example",
                                                       ok=False)
    limits = {c["name"]: c for c in as_json(cfy, "config", "list")}
    assert (limits["max_blueprint_size"]["value"], limits["max_blueprint_size"]["is_editable"]) == (50_000_000, False)
    assert "409: max_nesting is not editable" in cfy("config", "update", "max_nesting=5", ok=False)
    assert "404: Requested `Config` with ID `nothing` was not found" in cfy("config", "update", "nothing=1", ok=False)
    assert as_json(cfy, "log-bundles", "list") == []
    assert "405: Stoker makes no log bundles" in cfy("log-bundles", "create", ok=False)
    assert "405: Stoker has no maintenance mode" in cfy("maintenance-mode", "activate", ok=False)
    assert "Maintenance mode is off" in cfy("maintenance-mode", "deactivate")
    assert "User unlocked" in cfy("users", "unlock", "admin")


def test_the_audit_log_lists_changes_and_is_truncated(cfy):
    cfy("sites", "create", "audited-site")
    cfy("sites", "delete", "audited-site")
    cfy("deployments", "list")  # a read: not audited
    entries = [e for e in as_json(cfy, "auditlog", "list", "-c", "admin") if e["ref_table"] == "sites"]
    assert [(e["operation"], e["ref_identifier"]) for e in entries] == [
        ("create", {"id": "audited-site", "tenant_name": "default_tenant"}),
        ("delete", {"id": "audited-site", "tenant_name": "default_tenant"})]
    uploads = [e for e in as_json(cfy, "auditlog", "list") if e["ref_table"] == "blueprints"]
    assert {e["ref_identifier"]["id"] for e in uploads} >= {"bp", "plain"}
    assert as_json(cfy, "auditlog", "list", "-c", "nobody") == []
    assert "audit log entries have been truncated" in cfy("auditlog", "truncate", "--before", "now")
    assert as_json(cfy, "auditlog", "list") == []


def test_permissions_list_what_each_role_may_call_and_stay_fixed(cfy):
    listed = {p["permission"]: set(p["roles"]) for p in as_json(cfy, "permissions", "list")}
    assert listed["PUT /secrets/{key}"] == {"manager", "sys_admin"}
    assert listed["PUT /deployments/{deployment_id}"] == {"user", "manager", "sys_admin"}
    assert listed["GET /secrets"] == {"viewer", "user", "manager", "sys_admin"}
    assert listed["GET /audit"] == listed["PUT /snapshots/{snapshot_id}"] == {"sys_admin"}
    viewer = {p["permission"] for p in as_json(cfy, "permissions", "list", "--role", "viewer")}
    assert "GET /blueprints" in viewer and "PUT /secrets/{key}" not in viewer
    assert "405: Stoker's roles are fixed" in cfy("permissions", "allow", "--role", "viewer", "--permission",
                                                  "PUT /secrets/{key}", ok=False)
