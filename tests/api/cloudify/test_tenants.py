"""``cfy tenants`` and ``cfy users`` on ``stoker api``: the operator manages tenants and users, at once."""

from __future__ import annotations

import pytest

from .conftest import PASSWORD, admin_server, cfy_on, noop_blueprint, refused_status, rest_client


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    yield from admin_server(tmp_path_factory, "tenants")


def test_operator_makes_a_tenant_and_a_user_who_works_there(server, tmp_path):
    cfy = cfy_on(server, tmp_path)
    cfy("tenants", "create", "team1")
    cfy("users", "create", "alice", "-p", PASSWORD)
    cfy("tenants", "add-user", "alice", "-t", "team1", "-r", "user")
    assert "alice" in cfy("tenants", "get", "team1", "--get-data")
    cfy("blueprints", "upload", str(noop_blueprint(tmp_path)), "-b", "admins-bp")
    alice = rest_client(server, "alice", "team1")
    alice.blueprints.upload(str(noop_blueprint(tmp_path, "a")), "alices-bp")
    assert [b.id for b in alice.blueprints.list()] == ["alices-bp"]
    assert refused_status(lambda: rest_client(server, "alice").blueprints.list()) == 403
    me = alice.users.get_self(_get_data=True)
    assert (me.role, me.user_tenants, me.active) == ("default", {"team1": "user"}, True)
    assert [t.name for t in alice.tenants.list()] == ["team1"]
    assert {t.name for t in rest_client(server).tenants.list()} >= {"default_tenant", "team1"}
    # a viewer now: the next upload is refused
    cfy("tenants", "update-user", "alice", "-t", "team1", "-r", "viewer")
    assert refused_status(lambda: alice.blueprints.upload(str(noop_blueprint(tmp_path, "b")), "again")) == 403
    # operations is Stoker's user
    cfy("tenants", "update-user", "alice", "-t", "team1", "-r", "operations")
    assert rest_client(server).tenants.get("team1", _get_data=True).direct_users == {"alice": "user"}
    # removed: refused at once
    cfy("tenants", "remove-user", "alice", "-t", "team1")
    assert refused_status(lambda: alice.blueprints.list()) in (401, 403)


def test_deactivated_user_cannot_log_in_until_activated(server, tmp_path):
    cfy = cfy_on(server, tmp_path)
    cfy("users", "create", "bob", "-p", PASSWORD, "-t", "default_tenant", "-l", "viewer")
    bob = rest_client(server, "bob")
    token = bob.tokens.create().value
    from cloudify_rest_client import CloudifyClient

    by_token = CloudifyClient(host="127.0.0.1", port=int(server.url.rsplit(":", 1)[1]), token=token,
                              tenant="default_tenant")
    assert by_token.blueprints.list() is not None
    cfy("users", "deactivate", "bob")
    assert refused_status(lambda: bob.blueprints.list()) == 401
    assert refused_status(lambda: by_token.blueprints.list()) == 401
    assert "False" in cfy("users", "get", "bob")
    assert rest_client(server).users.get("bob", _get_data=True).user_tenants == {"default_tenant": "viewer"}
    cfy("users", "activate", "bob")
    assert bob.blueprints.list() is not None


def test_set_password_own_and_by_operator(server, tmp_path):
    cfy = cfy_on(server, tmp_path)
    cfy("users", "create", "carol", "-p", PASSWORD, "-t", "default_tenant", "-l", "viewer")
    carol = rest_client(server, "carol")
    carol.users.set_password("carol", "new-Pass-1")
    assert refused_status(lambda: rest_client(server, "carol").blueprints.list()) == 401
    from cloudify_rest_client import CloudifyClient

    port = int(server.url.rsplit(":", 1)[1])
    renewed = CloudifyClient(host="127.0.0.1", port=port, username="carol", password="new-Pass-1",
                             tenant="default_tenant")
    assert renewed.blueprints.list() is not None
    cfy("users", "set-password", "carol", "-p", PASSWORD)
    assert rest_client(server, "carol").blueprints.list() is not None
    assert refused_status(lambda: renewed.blueprints.list()) == 401


def test_non_operator_is_refused_every_admin_action(server, tmp_path):
    cfy = cfy_on(server, tmp_path)
    cfy("tenants", "create", "team2")
    cfy("users", "create", "dave", "-p", PASSWORD, "-t", "team2", "-l", "manager")
    cfy("users", "create", "erin", "-p", PASSWORD, "-t", "team2", "-l", "user")
    dave = rest_client(server, "dave", "team2")
    refused = [lambda: dave.tenants.create("mine"), lambda: dave.tenants.delete("team2"),
               lambda: dave.tenants.add_user("erin", "default_tenant", "manager"),
               lambda: dave.tenants.add_user("erin", "team2", "manager"),
               lambda: dave.tenants.update_user("erin", "team2", "viewer"),
               lambda: dave.tenants.remove_user("erin", "team2"),
               lambda: dave.users.create("mallory", PASSWORD, "sys_admin"), lambda: dave.users.delete("erin"),
               lambda: dave.users.set_role("dave", "sys_admin"), lambda: dave.users.set_password("erin", "x-Pass-9"),
               lambda: dave.users.deactivate("erin"), lambda: dave.users.activate("erin"),
               lambda: dave.users.get("erin")]
    assert [refused_status(call) for call in refused] == [403] * len(refused)
    assert [u.username for u in dave.users.list()] == ["dave"]
    assert refused_status(lambda: dave.tenants.get("default_tenant")) == 404
    assert rest_client(server, "erin", "team2").users.get_self().role == "default"


def test_tenant_with_a_blueprint_is_not_deleted_an_empty_one_is(server, tmp_path):
    cfy = cfy_on(server, tmp_path)
    cfy("tenants", "create", "full")
    cfy("tenants", "create", "empty")
    rest_client(server, tenant="full").blueprints.upload(str(noop_blueprint(tmp_path)), "kept")
    out = cfy("tenants", "delete", "full", ok=False)
    assert "still holds blueprints" in out
    cfy("tenants", "delete", "empty")
    assert "empty" not in [t.name for t in rest_client(server).tenants.list()]
    assert "Cannot delete the default tenant" in cfy("tenants", "delete", "default_tenant", ok=False)
    assert refused_status(lambda: rest_client(server).tenants.create("full")) == 409
    assert refused_status(lambda: rest_client(server).tenants.create("users")) == 400


def test_hostile_names_roles_and_references_are_clear_4xx(server):
    from cloudify_rest_client.exceptions import CloudifyClientError

    admin = rest_client(server)
    with pytest.raises(CloudifyClientError) as raised:
        admin.tenants.create("bad name!")
    assert (raised.value.status_code, raised.value.error_code) == (400, "bad_parameters_error")
    assert "illegal characters" in str(raised.value)
    assert refused_status(lambda: admin.users.create("9lives", PASSWORD, "default")) == 400
    assert refused_status(lambda: admin.users.create("gina", PASSWORD, "root")) == 400
    admin.users.create("gina", PASSWORD, "default")
    assert refused_status(lambda: admin.users.create("gina", PASSWORD, "default")) == 409
    assert refused_status(lambda: admin.tenants.add_user("gina", "default_tenant", "admin")) == 400
    assert refused_status(lambda: admin.tenants.add_user("nobody", "default_tenant", "user")) == 404
    assert refused_status(lambda: admin.tenants.add_user("gina", "no-such-tenant", "user")) == 404
    assert refused_status(lambda: admin.tenants.remove_user("gina", "default_tenant")) == 404
    admin.tenants.add_user("gina", "default_tenant", "viewer")
    assert refused_status(lambda: admin.tenants.add_user("gina", "default_tenant", "user")) == 409
    assert refused_status(lambda: admin.users.get("nobody")) == 404
    assert refused_status(lambda: admin.tenants.get("no-such-tenant")) == 404


def test_last_operator_cannot_be_removed(server, tmp_path):
    cfy = cfy_on(server, tmp_path)
    admin = rest_client(server)
    for call in (lambda: admin.users.delete("admin"), lambda: admin.users.deactivate("admin"),
                 lambda: admin.users.set_role("admin", "default"),
                 lambda: admin.tenants.remove_user("admin", "default_tenant"),
                 lambda: admin.tenants.update_user("admin", "default_tenant", "user")):
        assert refused_status(call) == 400
    cfy("users", "create", "frank", "-p", PASSWORD, "-r", "sys_admin")
    assert admin.users.get("frank").role == "sys_admin"
    frank = rest_client(server, "frank")
    frank.users.set_role("frank", "default")
    assert refused_status(lambda: frank.tenants.create("nope")) == 403
    assert "last operator" in cfy("users", "delete", "admin", ok=False)
    cfy("users", "delete", "frank")
    assert "frank" not in cfy("users", "list")
