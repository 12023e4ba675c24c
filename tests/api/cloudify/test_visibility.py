"""Visibility of blueprints, deployments and secrets, and ``cfy secrets export|import``, as on Cloudify 7: a
visibility only widens, global is the operator's and makes a blueprint or a secret seen (and used) from every
tenant, a deployment is never wider than its blueprint; an export file (its passphrase cipher Cloudify's own)
imports back on the server, into another tenant, and into a local Stoker, all entries or none."""

from __future__ import annotations

import json
import time

import pytest
from click.testing import CliRunner

from .conftest import cfy_on, cloudify_server, rest_client

pytest.importorskip("cloudify_rest_client")

USERS = [("admin", "default_tenant", "manager"), ("ann", "team-a", "manager"), ("amy", "team-a", "user"),
         ("uma", "team-a", "user"), ("vic", "team-a", "viewer"), ("bob", "team-b", "manager")]
PLAIN = "tosca_definitions_version: cloudify_dsl_1_4\nimports: [cloudify/types/types.yaml]\nnode_templates: {}\n"
READS_SECRET = PLAIN + "outputs:\n  token: {value: {get_secret: fleet_token}}\n"
PASSPHRASE = "correct horse battery"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    started = cloudify_server(tmp_path_factory.mktemp("visibility"), USERS, extra=("--allow-local-resources",))
    yield started
    started.stop()


def _refused(call, *args, **kwargs):
    """The ``CloudifyClientError`` ``call`` raises: its status, error code and message are Cloudify's."""
    from cloudify_rest_client.exceptions import CloudifyClientError

    with pytest.raises(CloudifyClientError) as refused:
        call(*args, **kwargs)
    return refused.value


def _blueprint(tmp_path, name: str, text: str = PLAIN) -> str:
    path = tmp_path / name / "blueprint.yaml"
    path.parent.mkdir()
    path.write_text(text)
    return str(path)


def test_a_blueprint_widens_to_global_by_the_operator_and_is_then_seen_and_deployed_from_other_tenants(
        server, tmp_path):
    ann, amy, bob = (rest_client(server, "ann", "team-a"), rest_client(server, "amy", "team-a"),
                     rest_client(server, "bob", "team-b"))
    operator = rest_client(server, "admin", "team-a")
    uploaded = amy.blueprints.upload(_blueprint(tmp_path, "web"), "web")
    assert (uploaded["visibility"], uploaded["created_by"], uploaded["tenant_name"]) == ("tenant", "amy", "team-a")
    assert _refused(bob.blueprints.get, "web").status_code == 404
    assert "web" not in [b.id for b in bob.blueprints.list()]
    # a bad value, and global from a tenant's user or manager: refused, nothing changed
    bad = _refused(amy.blueprints.set_visibility, "web", "private")
    assert (bad.status_code, bad.error_code) == (400, "bad_parameters_error")
    assert "Invalid visibility: `private`. Valid visibility's values are: ['tenant', 'global']" in str(bad)
    for who in (amy, ann):
        refused = _refused(who.blueprints.set_global, "web")
        assert (refused.status_code, refused.error_code) == (403, "forbidden_error")
        assert "is not permitted to set or create a global resource" in str(refused)
    assert ann.blueprints.get("web")["visibility"] == "tenant"
    assert amy.blueprints.set_visibility("web", "tenant")["visibility"] == "tenant"  # the same: allowed
    assert _refused(bob.blueprints.set_visibility, "web", "tenant").status_code == 404
    # the operator makes it global: another tenant lists, reads and deploys it, and changes it never
    assert operator.blueprints.set_global("web")["visibility"] == "global"
    seen = bob.blueprints.get("web")
    assert (seen["tenant_name"], seen["visibility"]) == ("team-a", "global")
    assert [b.id for b in bob.blueprints.list() if b.tenant_name == "team-a"] == ["web"]
    bob.deployments.create("web", "bobs-web")
    assert bob.deployments.get("bobs-web").blueprint_id == "web"
    for change in (lambda: bob.blueprints.delete("web"), lambda: bob.blueprints.set_visibility("web", "tenant"),
                   lambda: bob.plugins_update.update_plugins("web")):
        foreign = _refused(change)
        assert (foreign.status_code, foreign.error_code) == (400, "illegal_action_error")
        assert "Can't modify the global resource `web` from outside its tenant `team-a`" in str(foreign)
    # never narrower
    narrowed = _refused(ann.blueprints.set_visibility, "web", "tenant")
    assert (narrowed.status_code, narrowed.error_code) == (400, "illegal_action_error")
    assert "Can't set the visibility of `web` to tenant because it already has wider visibility" in str(narrowed)
    # deployed from team-b, so team-a cannot delete it either
    assert _refused(ann.blueprints.delete, "web").status_code == 409
    bob.deployments.delete("bobs-web")
    # one id anywhere while one is global: neither made global over another tenant's, nor uploaded beside it
    bob.blueprints.upload(_blueprint(tmp_path, "bobs"), "twin")
    ann.blueprints.upload(_blueprint(tmp_path, "anns"), "twin")
    clash = _refused(operator.blueprints.set_global, "twin")
    assert clash.status_code == 409 and "also exists in other tenants" in str(clash)
    assert _refused(bob.blueprints.upload, _blueprint(tmp_path, "again"), "web").status_code == 409
    assert amy.blueprints.get("twin")["visibility"] == "tenant"


def test_a_private_blueprint_deployment_or_secret_is_its_creators_and_the_managers(server, tmp_path):
    ann, amy, uma, vic = (rest_client(server, name, "team-a") for name in ("ann", "amy", "uma", "vic"))
    assert amy.blueprints.upload(_blueprint(tmp_path, "priv"), "amys", visibility="private")["visibility"] == "private"
    amy.deployments.create("amys", "amys-dep", visibility="private")
    # as on Cloudify, a new deployment of a private blueprint is the tenant's unless asked otherwise
    assert amy.deployments.create("amys", "amys-open")["visibility"] == "tenant"
    ann.secrets.create("anns_key", "private-value", visibility="private")
    for other in (uma, vic):
        assert _refused(other.blueprints.get, "amys").status_code == 404
        assert "amys" not in [b.id for b in other.blueprints.list()]
        assert _refused(other.deployments.get, "amys-dep").status_code == 404
        assert "amys-dep" not in [d.id for d in other.deployments.list()]
        assert _refused(other.secrets.get, "anns_key").status_code == 404
        assert "anns_key" not in [s.key for s in other.secrets.list()]
    assert _refused(uma.deployments.create, "amys", "umas").status_code == 404
    assert _refused(uma.blueprints.set_visibility, "amys", "tenant").status_code == 404
    assert "anns_key" not in [e["key"] for e in uma.secrets.export()]
    # its creator and the tenant's manager see them all; widened to tenant, every member does
    assert (ann.blueprints.get("amys")["created_by"], ann.deployments.get("amys-dep")["visibility"]) == (
        "amy", "private")
    assert "anns_key" not in [s.key for s in amy.secrets.list()]
    assert ann.secrets.get("anns_key").value == "private-value"
    amy.blueprints.set_visibility("amys", "tenant")
    assert vic.blueprints.get("amys")["visibility"] == "tenant"
    assert _refused(vic.deployments.get, "amys-dep").status_code == 404  # the deployment is still private


def test_cfy_blueprints_set_visibility_set_global_and_set_owner(server, tmp_path):
    """(cfy prints a refusal of these commands and exits 0, as it does against Cloudify: prettify_client_error)"""
    cfy = cfy_on(server, tmp_path)
    cfy("blueprints", "upload", _blueprint(tmp_path, "cli"), "-b", "cli-bp")
    assert "is now owned by user `bob`" in cfy("blueprints", "set-owner", "cli-bp", "-s", "bob")
    assert "does not exist" in cfy("blueprints", "set-owner", "cli-bp", "-s", "nobody", ok=False)
    assert rest_client(server).blueprints.get("cli-bp")["created_by"] == "bob"
    amy = rest_client(server, "amy", "team-a")
    amy.blueprints.upload(_blueprint(tmp_path, "amy"), "amy-bp")
    assert _refused(amy.blueprints.update, "amy-bp", {"creator": "uma"}).status_code == 403
    assert amy.blueprints.update("amy-bp", {"labels": [{"env": "dev"}]})["labels"][0]["value"] == "dev"
    assert "was set to tenant" in cfy("blueprints", "set-visibility", "cli-bp", "-l", "tenant")
    assert "was set to global" in cfy("blueprints", "set-global", "cli-bp")
    assert "Error: 400: Can't set the visibility of `cli-bp` to tenant because it already has wider visibility" in cfy(
        "blueprints", "set-visibility", "cli-bp", "-l", "tenant")
    assert "Invalid visibility" in cfy("blueprints", "set-visibility", "cli-bp", "-l", "private", ok=False)
    assert rest_client(server).blueprints.get("cli-bp")["visibility"] == "global"
    assert rest_client(server, "bob", "team-b").blueprints.get("cli-bp")["tenant_name"] == "default_tenant"


def test_a_deployment_is_never_wider_than_its_blueprint(server, tmp_path):
    amy, vic = rest_client(server, "amy", "team-a"), rest_client(server, "vic", "team-a")
    operator = rest_client(server, "admin", "team-a")
    amy.blueprints.upload(_blueprint(tmp_path, "app"), "app")
    private = amy.deployments.create("app", "mine", visibility="private")
    assert (private["visibility"], private["created_by"]) == ("private", "amy")
    assert _refused(vic.deployments.set_visibility, "mine", "tenant").status_code == 403  # a viewer
    assert amy.deployments.set_visibility("mine", "tenant")["visibility"] == "tenant"
    assert _refused(amy.deployments.set_visibility, "mine", "private").status_code == 400
    wider = _refused(operator.deployments.set_visibility, "mine", "global")
    assert (wider.status_code, wider.error_code) == (400, "illegal_action_error")
    assert ("The visibility of deployment `mine` can't be wider than the visibility of its blueprint `app`. "
            "Current blueprint visibility is tenant") in str(wider)
    too_wide = _refused(operator.deployments.create, "app", "too-wide", visibility="global")
    assert (too_wide.status_code, str(too_wide)) == (
        403, "403: Can't create global deployment too-wide because blueprint app is not global")
    assert "too-wide" not in [d.id for d in amy.deployments.list()]
    operator.blueprints.set_global("app")
    bob = rest_client(server, "bob", "team-b")
    assert _refused(bob.deployments.get, "mine").status_code == 404
    assert operator.deployments.set_visibility("mine", "global")["visibility"] == "global"
    # seen from another tenant, never changed from there
    assert (bob.deployments.get("mine")["tenant_name"], bob.deployments.get("mine")["created_by"]) == ("team-a", "amy")
    assert ("mine", "team-a") in [(d.id, d.tenant_name) for d in bob.deployments.list()]
    assert _refused(bob.deployments.delete, "mine").status_code == 404
    assert _refused(bob.deployments.set_visibility, "mine", "global").status_code == 403
    bob.blueprints.upload(_blueprint(tmp_path, "bobs"), "bobs-app")
    twin = _refused(bob.deployments.create, "bobs-app", "mine")
    assert (twin.status_code, str(twin)) == (409, "409: <Deployment id=`mine`> already exists on team-b or with "
                                                  "global visibility")
    narrowed = _refused(amy.deployments.set_visibility, "mine", "tenant")
    assert "already has wider visibility" in str(narrowed)
    assert amy.deployments.get("mine")["visibility"] == "global"


def test_cfy_deployments_set_visibility(server, tmp_path):
    cfy = cfy_on(server, tmp_path)
    cfy("blueprints", "upload", _blueprint(tmp_path, "d"), "-b", "dep-bp")
    cfy("deployments", "create", "dep-d", "-b", "dep-bp")
    assert "was set to tenant" in cfy("deployments", "set-visibility", "dep-d", "-l", "tenant")
    assert "Error: 400: The visibility of deployment `dep-d` can't be wider than the visibility of its blueprint" in cfy(
        "deployments", "set-visibility", "dep-d", "-l", "global")
    cfy("blueprints", "set-global", "dep-bp")
    assert "was set to global" in cfy("deployments", "set-visibility", "dep-d", "-l", "global")


def test_a_global_secret_is_read_and_deployed_with_from_every_tenant_and_changed_only_from_its_own(server, tmp_path):
    ann, amy, bob = (rest_client(server, "ann", "team-a"), rest_client(server, "amy", "team-a"),
                     rest_client(server, "bob", "team-b"))
    operator = rest_client(server, "admin", "team-a")
    made = ann.secrets.create("fleet_token", "t0k3n-value", visibility="tenant")
    assert (made["visibility"], made["created_by"]) == ("tenant", "ann")
    assert _refused(ann.secrets.create, "wide", "x", visibility="global").status_code == 403
    assert _refused(ann.secrets.create, "odd", "x", visibility="everyone").status_code == 400
    assert [s.key for s in ann.secrets.list() if s.key in ("wide", "odd")] == []
    bob.blueprints.upload(_blueprint(tmp_path, "reader", READS_SECRET), "reader")
    assert _refused(bob.deployments.create, "reader", "reads").status_code == 400  # no such secret in team-b
    assert _refused(bob.secrets.get, "fleet_token").status_code == 404
    assert _refused(amy.secrets.set_global, "fleet_token").status_code == 403  # a user: not a manager
    assert _refused(ann.secrets.set_global, "fleet_token").status_code == 403  # a manager: not the operator
    assert _refused(ann.secrets.set_visibility, "fleet_token", "private").status_code == 400
    assert operator.secrets.set_global("fleet_token")["visibility"] == "global"
    assert bob.secrets.get("fleet_token").value == "t0k3n-value"
    assert ("fleet_token", "team-a", "global") in [(s.key, s.tenant_name, s.visibility) for s in bob.secrets.list()]
    bob.deployments.create("reader", "reads")
    foreign = _refused(bob.secrets.update, "fleet_token", "changed")
    assert (foreign.status_code, foreign.error_code) == (400, "illegal_action_error")
    assert _refused(bob.secrets.delete, "fleet_token").status_code == 400
    assert _refused(ann.secrets.update, "fleet_token", visibility="tenant").status_code == 400  # narrower
    assert ann.secrets.get("fleet_token").value == "t0k3n-value"
    bob.deployments.delete("reads")


def test_cfy_secrets_visibility_and_owner(server, tmp_path):
    cfy = cfy_on(server, tmp_path)
    cfy("secrets", "create", "cli_secret", "-s", "v4lue", "--visibility", "private")
    listed = json.loads(cfy("secrets", "list", "--json"))
    assert [(s["visibility"], s["created_by"]) for s in listed if s["key"] == "cli_secret"] == [("private", "admin")]
    assert "was set to tenant" in cfy("secrets", "set-visibility", "cli_secret", "-l", "tenant")
    assert "was set to global" in cfy("secrets", "set-global", "cli_secret")
    assert "already has wider visibility" in cfy("secrets", "set-visibility", "cli_secret", "-l", "tenant")
    assert "now owned by user `bob`" in cfy("secrets", "set-owner", "cli_secret", "-s", "bob")
    assert "does not exist" in cfy("secrets", "set-owner", "cli_secret", "-s", "nobody", ok=False)
    refused = _refused(rest_client(server, "ann", "team-a").secrets.update, "fleet_token", creator="amy")
    assert refused.status_code == 403


def _secrets(client) -> dict:
    """Every secret the client's tenant sees: (tenant, key) -> value."""
    return {(s.tenant_name, s.key): client.secrets.get(s.key).value for s in client.secrets.list()}


def test_cfy_secrets_export_with_a_passphrase_imports_back_and_is_cloudifys_cipher(server, tmp_path):
    from cloudify.cryptography_utils import decrypt, encrypt, generate_key_using_password

    cfy = cfy_on(server, tmp_path)
    admin = rest_client(server)
    cfy("secrets", "create", "db_password", "-s", "hunter2-db", "--hidden-value")
    cfy("secrets", "create", "api_url", "-s", "https://api.example")
    exported = tmp_path / "secrets.json"
    said = cfy("secrets", "export", "-p", PASSPHRASE, "-o", str(exported), "--filter-by", "_")
    entries = {e["key"]: e for e in json.loads(exported.read_text())}
    assert {"db_password", "api_url"} <= set(entries) and "hunter2-db" not in exported.read_text()
    assert "hunter2-db" not in said and "hunter2-db" not in server.log.read_text()
    hidden = entries["db_password"]
    assert (hidden["encrypted"], hidden["is_hidden_value"], hidden["tenant_name"], hidden["visibility"]) == (
        True, True, "default_tenant", "tenant")
    key = generate_key_using_password(PASSPHRASE)  # Cloudify's own code opens Stoker's file
    assert decrypt(hidden["value"], key) == "hunter2-db"
    # gone, then imported back: values, hidden flag and visibility as they were
    for name in ("db_password", "api_url"):
        admin.secrets.delete(name)
    cfy("secrets", "import", "-i", str(exported), "-p", PASSPHRASE)
    assert admin.secrets.get("db_password").value == "******"  # hidden: read back masked, exported in full
    assert _exported(admin, "db_password") == ("hunter2-db", True)
    assert admin.secrets.get("api_url").value == "https://api.example"
    # a manager's file (Cloudify's own code encrypts it) imports here too
    made_by_cloudify = {"key": "from_cloudify", "value": encrypt("ünïcode válue", key), "visibility": "tenant",
                        "tenant_name": "default_tenant", "is_hidden_value": False, "encrypted": True,
                        "provider": None, "provider_options": None}
    admin.secrets.import_secrets([made_by_cloudify], passphrase=PASSPHRASE)
    assert admin.secrets.get("from_cloudify").value == "ünïcode válue"
    # a file without a passphrase holds the values in clear, as Cloudify's
    clear = tmp_path / "clear.json"
    cfy("secrets", "export", "--non-encrypted", "-o", str(clear), "-l", "tenant", "--filter-by", "api_")
    assert [(e["key"], e["value"], e["encrypted"]) for e in json.loads(clear.read_text())] == [
        ("api_url", "https://api.example", False)]
    # another tenant's (cfy -t, the operator acting as its manager), and every tenant's
    rest_client(server, "ann", "team-a").secrets.create("a_only", "in-team-a")
    cfy("secrets", "export", "--non-encrypted", "-o", str(clear), "-t", "team-a", "--filter-by", "_only")
    assert [(e["key"], e["tenant_name"]) for e in json.loads(clear.read_text())] == [("a_only", "team-a")]
    cfy("secrets", "export", "--non-encrypted", "-o", str(clear), "--all-tenants", "--filter-by", "_")
    assert {"a_only", "api_url", "db_password"} <= {e["key"] for e in json.loads(clear.read_text())}
    assert "one of" in cfy("secrets", "export", "-o", str(clear), ok=False)  # cfy: a passphrase or --non-encrypted


def test_an_import_is_all_or_nothing(server, tmp_path):
    cfy = cfy_on(server, tmp_path)
    admin = rest_client(server)
    admin.secrets.create("kept", "old-value")
    exported = tmp_path / "one.json"
    cfy("secrets", "export", "-p", PASSPHRASE, "-o", str(exported), "--filter-by", "kept")
    good = json.loads(exported.read_text())
    good_new = [{**good[0], "key": "brand_new"}]
    before = _secrets(admin)
    wrong = cfy("secrets", "import", "-i", str(exported), "-p", "not the passphrase", ok=False)
    assert "cannot be decrypted with the given passphrase" in wrong
    assert "No passphrase" in cfy("secrets", "import", "-i", str(_file(tmp_path, "np.json", good_new)),
                                  "--non-encrypted", ok=False)
    # one entry wrong: the good one before it is not stored either
    broken = good_new + [{"key": "half", "value": "v"}, {**good_new[0], "key": "odd", "visibility": "everyone"}, 7,
                         {**good_new[0], "key": "k" * 300}]
    answer = _refused(admin.secrets.import_secrets, broken, passphrase=PASSPHRASE)
    assert (answer.status_code, answer.error_code) == (400, "bad_parameters_error")
    message = str(answer)
    assert "secret 2: missing secret fields: ['is_hidden_value', 'visibility', 'tenant_name', 'encrypted']" in message
    assert "secret 3: visibility: Not a valid visibility" in message and "secret 4" in message
    assert "secret 5: key: Not a key (a text of 1 to 255 characters)" in message
    global_by_user = _refused(rest_client(server, "ann", "team-a").secrets.import_secrets,
                              [{**good_new[0], "visibility": "global", "tenant_name": "team-a"}],
                              passphrase=PASSPHRASE)
    assert "not permitted to set or create a global resource" in str(global_by_user)
    for body in ({"secrets_list": {"a": 1}, "override_collisions": False}, {"secrets_list": []}):
        malformed = _refused(admin.secrets.api.post, "/secrets/share/import", data=body)
        assert malformed.status_code == 400
    assert "is expected to be of type list" in str(_refused(admin.secrets.api.post, "/secrets/share/import",
                                                            data={"secrets_list": {}, "override_collisions": False}))
    assert _refused(admin.secrets.import_secrets, good_new, passphrase="short").status_code == 400
    assert _secrets(admin) == before
    # a collision is left unless overridden
    admin.secrets.update("kept", "newer-value")
    left = admin.secrets.import_secrets(good + good_new, passphrase=PASSPHRASE)
    assert left == {"colliding_secrets": {"default_tenant": ["kept"]}, "secrets_errors": {}}
    assert (admin.secrets.get("kept").value, admin.secrets.get("brand_new").value) == ("newer-value", "old-value")
    said = cfy("secrets", "import", "-i", str(exported), "-p", PASSPHRASE, "--override-collisions")
    assert "were overridden" in said
    assert admin.secrets.get("kept").value == "old-value"


def _exported(client, key: str) -> tuple[str, bool]:
    """(value, hidden) of the client's secret ``key``, as its export gives them."""
    found = [e for e in client.secrets.export(_search=key) if e["key"] == key]
    return found[0]["value"], found[0]["is_hidden_value"]


def _file(tmp_path, name: str, entries: list) -> str:
    path = tmp_path / name
    path.write_text(json.dumps(entries))
    return str(path)


def test_export_gives_hidden_values_only_to_managers_and_import_maps_tenants(server, tmp_path):
    ann, amy, vic, bob = (rest_client(server, "ann", "team-a"), rest_client(server, "amy", "team-a"),
                          rest_client(server, "vic", "team-a"), rest_client(server, "bob", "team-b"))
    operator = rest_client(server, "admin", "team-a")
    ann.secrets.create("team_hidden", "s3cr3t-hidden", is_hidden_value=True)
    ann.secrets.create("team_plain", "plain-value")
    by_user = {e["key"]: e for e in amy.secrets.export(_search="team_")}
    assert set(by_user) == {"team_plain"} and by_user["team_plain"]["value"] == "plain-value"
    by_manager = {e["key"]: e["value"] for e in ann.secrets.export(_search="team_")}
    assert by_manager == {"team_hidden": "s3cr3t-hidden", "team_plain": "plain-value"}
    assert [e["key"] for e in amy.secrets.export(visibility="global", _search="team_")] == []
    assert "Invalid visibility: `wide`" in str(_refused(amy.secrets.export, visibility="wide"))
    viewer = _refused(vic.secrets.export)
    assert (viewer.status_code, viewer.error_code) == (403, "forbidden_error")
    entries = ann.secrets.export(_search="team_", _passphrase=PASSPHRASE)
    # team-a's file into team-b: bob may not write team-a, the map sends it to his own tenant
    refused = _refused(bob.secrets.import_secrets, entries, passphrase=PASSPHRASE)
    assert "not permitted to perform the action secret_create in the tenant `team-a`" in str(refused)
    assert _refused(bob.secrets.import_secrets, entries, tenant_map={"team-a": "nowhere"},
                    passphrase=PASSPHRASE).status_code == 400
    assert bob.secrets.import_secrets(entries, tenant_map={"team-a": "team-b"}, passphrase=PASSPHRASE) == {
        "colliding_secrets": {}, "secrets_errors": {}}
    assert bob.secrets.get("team_hidden").is_hidden_value is True
    assert {e["key"]: e["value"] for e in bob.secrets.export(_search="team_")} == by_manager
    # an entry that fails only as it is stored (its key is another tenant's global one): nothing stored either
    operator.secrets.create("everywhere_key", "v", visibility="global")
    clash = [{**entries[0], "key": "fresh_one", "tenant_name": "team-b"},
             {**entries[0], "key": "everywhere_key", "tenant_name": "team-b"}]
    assert _refused(bob.secrets.import_secrets, clash, passphrase=PASSPHRASE).status_code == 409
    assert _refused(bob.secrets.get, "fresh_one").status_code == 404
    everywhere = operator.secrets.export(_search="team_plain", _all_tenants=True)
    assert sorted(e["tenant_name"] for e in everywhere) == ["team-a", "team-b"]


def test_secrets_move_between_a_local_stoker_and_the_server(server, tmp_path, monkeypatch):
    from stoker.cli import main

    monkeypatch.setenv("STOKER_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("STOKER_DB_URL", raising=False)
    local = tmp_path / "local.db"

    def stoker(*args: str, ok: bool = True) -> str:
        done = CliRunner().invoke(main, ["--db-url", f"sqlite:///{local}", *args])
        assert (done.exit_code == 0) == ok, done.output
        return done.output

    stoker("secret", "create", "local_key", "-s", "from-laptop", "--hidden")
    stoker("secret", "create", "local_open", "-s", "open-value", "-l", "private")
    out = tmp_path / "local.json"
    assert "passphrase" in stoker("secret", "export", "-o", str(out), ok=False)
    stoker("secret", "export", "-o", str(out), "-p", PASSPHRASE)
    assert "from-laptop" not in out.read_text()
    cfy = cfy_on(server, tmp_path)
    cfy("secrets", "import", "-i", str(out), "-p", PASSPHRASE)
    admin = rest_client(server)
    assert _exported(admin, "local_key") == ("from-laptop", True)
    assert admin.secrets.get("local_open")["visibility"] == "private"
    # and back: the server's file into a second local project database
    back = tmp_path / "server.json"
    admin.secrets.update("local_open", "changed-on-server")
    cfy("secrets", "export", "-p", PASSPHRASE, "-o", str(back), "--filter-by", "local_open")
    assert "cannot be decrypted" in stoker("secret", "import", "-i", str(back), "-p", "bad passphrase!", ok=False)
    said = stoker("secret", "import", "-i", str(back), "-p", PASSPHRASE)
    assert "held already, left as they were: local_open" in said
    stoker("secret", "import", "-i", str(back), "-p", PASSPHRASE, "--override-collisions")
    assert json.loads(stoker("secret", "get", "local_open", "-f", "json"))["value"] == "changed-on-server"
    (tmp_path / "bad.json").write_text("{not json")
    assert "is not a secrets file" in stoker("secret", "import", "-i", str(tmp_path / "bad.json"), ok=False)


def test_no_value_nor_passphrase_reaches_the_servers_log(tmp_path):
    """At ``--log-level debug`` (access lines on) the passphrase ``cfy secrets export -p`` sends in the query is
    logged hidden, and no value is logged at all."""
    server = cloudify_server(tmp_path, USERS[:1], extra=("--log-level", "debug"))
    try:
        admin = rest_client(server)
        admin.secrets.create("logged_key", "never-in-the-log", is_hidden_value=True)
        entries = admin.secrets.export(_passphrase=PASSPHRASE)
        admin.secrets.delete("logged_key")
        admin.secrets.import_secrets(entries, passphrase=PASSPHRASE)
        assert _exported(admin, "logged_key") == ("never-in-the-log", True)
    finally:
        server.stop()
    log = server.log.read_text()
    assert "/secrets/share/export?_passphrase=******" in log
    assert PASSPHRASE.split()[0] not in log and "never-in-the-log" not in log


def test_cfy_deployments_set_owner_is_the_operators_to_a_known_user(server, tmp_path):
    cfy = cfy_on(server, tmp_path)
    cfy("blueprints", "upload", _blueprint(tmp_path, "owned"), "-b", "owned-bp")
    cfy("deployments", "create", "owned-dep", "-b", "owned-bp", "--labels", "env:dev")
    assert "Deployment `owned-dep` is now owned by user `bob`" in cfy("deployments", "set-owner", "owned-dep",
                                                                      "-s", "bob")
    assert "does not exist" in cfy("deployments", "set-owner", "owned-dep", "-s", "nobody", ok=False)
    operator = rest_client(server)
    owned = operator.deployments.get("owned-dep")
    assert (owned["created_by"], [(x["key"], x["value"]) for x in owned["labels"]]) == ("bob", [("env", "dev")])
    assert _refused(operator.deployments.set_attributes, "no-such-dep", creator="bob").status_code == 404
    # a tenant's manager is not the operator: refused, nothing changed
    ann = rest_client(server, "ann", "team-a")
    ann.blueprints.upload(_blueprint(tmp_path, "anns-owned"), "anns-owned")
    ann.deployments.create("anns-owned", "anns-dep")
    refused = _refused(ann.deployments.set_attributes, "anns-dep", creator="amy")
    assert (refused.status_code, refused.error_code) == (403, "forbidden_error")
    assert ann.deployments.get("anns-dep")["created_by"] == "ann"


#: its create reads a private secret, and so does its output
PRIVATE_READER = PLAIN.replace("node_templates: {}\n", """node_templates:
  reader:
    type: cloudify.nodes.Root
    interfaces: {cloudify.interfaces.lifecycle: {create: {implementation: scripts/say.sh,
                                                          inputs: {word: {get_secret: anns_private}}}}}
""") + "outputs:\n  word: {value: {get_secret: anns_private}}\n"


def test_get_secret_of_a_private_secret_reads_with_the_deployment_creators_permissions(server, tmp_path):
    ann, amy = rest_client(server, "ann", "team-a"), rest_client(server, "amy", "team-a")
    ann.secrets.create("anns_private", "p-value", visibility="private")
    path = _blueprint(tmp_path, "priv-reader", PRIVATE_READER)
    (tmp_path / "priv-reader" / "scripts").mkdir()
    (tmp_path / "priv-reader" / "scripts" / "say.sh").write_text('ctx logger info "said $word"\n')
    ann.blueprints.upload(path, "priv-reader")
    # amy may not see it: her deployment is refused as Cloudify refuses one reading a secret it cannot get
    refused = _refused(amy.deployments.create, "priv-reader", "amys-reader")
    assert "Required secrets: [anns_private] don't exist in this tenant" in str(refused)
    assert "amys-reader" not in [d.id for d in ann.deployments.list()]
    # the secret's creator (a manager too) reads it
    ann.deployments.create("priv-reader", "anns-reader")
    assert ann.deployments.outputs.get("anns-reader").outputs == {"word": "p-value"}
    # given to amy, the deployment reads it with her permissions: not at all, as a secret that is not there
    rest_client(server, "admin", "team-a").deployments.set_attributes("anns-reader", creator="amy")
    assert ann.deployments.outputs.get("anns-reader").outputs == {}
    execution = amy.executions.start("anns-reader", "install")
    for _ in range(300):
        ended = amy.executions.get(execution.id)
        if ended.status in ("terminated", "failed"):
            break
        time.sleep(0.2)
    assert ended.status == "failed" and "secret 'anns_private' does not exist" in ended.error
    # a secret the tenant sees is read by every deployment of the tenant
    ann.secrets.update("anns_private", visibility="tenant")
    assert amy.deployments.outputs.get("anns-reader").outputs == {"word": "p-value"}
