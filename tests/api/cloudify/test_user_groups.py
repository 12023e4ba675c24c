"""``cfy user-groups`` and ``cfy tenants add-user-group|update-user-group|remove-user-group`` on ``stoker api``: a
user reaches a tenant through a group with the group's role there (the highest of its own and its groups'), loses
it at its next request once out of the group, and the views of users, tenants and groups count the groups as
Cloudify's do."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from .conftest import PASSWORD, admin_server, cfy_on, noop_blueprint, refused_status, rest_client


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    yield from admin_server(tmp_path_factory, "usergroups")


def test_a_user_reaches_a_tenants_deployments_only_through_a_group_until_removed(server, tmp_path):
    cfy = cfy_on(server, tmp_path)
    cfy("tenants", "create", "shop")
    cfy("users", "create", "gus", "-p", PASSWORD)
    cfy("user-groups", "create", "devs", "-l", "CN=devs,DC=example,DC=com")
    cfy("tenants", "add-user-group", "devs", "-t", "shop", "-r", "user")
    owner = rest_client(server, tenant="shop")
    owner.blueprints.upload(str(noop_blueprint(tmp_path)), "app")
    owner.deployments.create("app", "web")
    gus = rest_client(server, "gus", "shop")
    assert refused_status(lambda: gus.deployments.list()) == 403  # in no group yet
    cfy("user-groups", "add-user", "gus", "-g", "devs")
    assert [d.id for d in gus.deployments.list()] == ["web"]
    gus.deployments.create("app", "guss")  # the group's role, user, deploys
    assert owner.blueprints.update("app", {"creator": "gus"})["created_by"] == "gus"  # a user Stoker knows
    assert [t.name for t in gus.tenants.list()] == ["shop"]
    me = gus.users.get_self(_get_data=True)
    assert (me.groups, me.user_tenants, me.group_tenants) == (["devs"], {}, {"shop": {"user": ["devs"]}})
    assert me["tenants"] == {"shop": {"tenant-role": None, "roles": ["user"]}}
    assert "already associated" in cfy("user-groups", "add-user", "gus", "-g", "devs")  # cfy's graceful 409
    cfy("user-groups", "remove-user", "gus", "-g", "devs")
    assert refused_status(lambda: gus.deployments.list()) == 403  # at its next request
    assert rest_client(server).users.get("gus", _get_data=True).group_tenants == {}


def test_the_highest_of_own_and_group_roles_holds(server, tmp_path):
    cfy = cfy_on(server, tmp_path)
    cfy("tenants", "create", "lab")
    cfy("users", "create", "hal", "-p", PASSWORD, "-t", "lab", "-l", "viewer")
    cfy("user-groups", "create", "leads")
    cfy("user-groups", "add-user", "hal", "-g", "leads")
    hal = rest_client(server, "hal", "lab")
    assert refused_status(lambda: hal.secrets.create("k", "v")) == 403  # a viewer
    cfy("tenants", "add-user-group", "leads", "-t", "lab", "-r", "manager")
    hal.secrets.create("k", "v")  # a manager through the group
    tenant = rest_client(server).tenants.get("lab", _get_data=True)
    assert tenant.groups == {"leads": "manager"}
    assert tenant["users"] == {"hal": {"tenant-role": "viewer", "roles": ["manager", "viewer"]}}
    assert (tenant.direct_users, tenant.group_users) == ({"hal": "viewer"}, {"leads": {"role": "manager",
                                                                                         "users": ["hal"]}})
    counted = rest_client(server).tenants.get("lab")
    assert (counted.groups, counted["users"], counted["user_roles"]) == (1, 1, None)
    cfy("tenants", "update-user-group", "leads", "-t", "lab", "-r", "operations")  # Stoker's user
    assert refused_status(lambda: hal.secrets.create("k2", "v")) == 403
    hal.blueprints.upload(str(noop_blueprint(tmp_path)), "halbp")
    cfy("tenants", "remove-user-group", "leads", "-t", "lab")
    assert refused_status(lambda: hal.blueprints.upload(str(noop_blueprint(tmp_path, "b")), "again")) == 403
    assert [b.id for b in hal.blueprints.list()] == ["halbp"]  # still its own viewer
    assert "not associated" in cfy("tenants", "remove-user-group", "leads", "-t", "lab")  # cfy's graceful 404


def test_cfy_shows_groups_users_and_tenants_as_cloudify(server, tmp_path):
    cfy = cfy_on(server, tmp_path)
    cfy("tenants", "create", "ops")
    cfy("users", "create", "ida", "-p", PASSWORD)
    cfy("user-groups", "create", "oncall", "-l", "CN=oncall,DC=example,DC=com")
    cfy("user-groups", "add-user", "ida", "-g", "oncall")
    cfy("tenants", "add-user-group", "oncall", "-t", "ops", "-r", "viewer")
    admin = rest_client(server)
    group = admin.user_groups.get("ONCALL")  # found in any case
    assert (group.name, group.ldap_dn, group.role, group.users, group.tenants) == (
        "oncall", "CN=oncall,DC=example,DC=com", "default", 1, 1)
    full = admin.user_groups.get("oncall", _get_data=True)
    assert (full.users, full.tenants) == (["ida"], {"ops": "viewer"})
    assert [g.ldap_dn for g in admin.user_groups.list(_search="oncall")] == ["CN=oncall,DC=example,DC=com"]
    assert "'ops': 'viewer'" in cfy("user-groups", "list", "--get-data")
    assert "ida" in cfy("user-groups", "get", "oncall", "--get-data")
    ida = admin.users.get("ida")
    assert (ida.groups, ida.tenants, ida.group_system_roles) == (1, 1, {"default": ["oncall"]})
    assert "oncall" in cfy("users", "get", "ida", "--get-data")
    [listed] = [u for u in admin.users.list(_get_data=True) if u.username == "ida"]
    assert listed.group_tenants == {"ops": {"viewer": ["oncall"]}}
    assert "'oncall': 'viewer'" in cfy("tenants", "get", "ops", "--get-data")
    [row] = [t for t in admin.tenants.list() if t.name == "ops"]
    assert (row.groups, row["users"]) == (1, 1)


def test_a_sys_admin_group_makes_its_members_operators(server, tmp_path):
    from cloudify_rest_client.exceptions import CloudifyClientError

    cfy = cfy_on(server, tmp_path)
    cfy("users", "create", "jo", "-p", PASSWORD)
    cfy("user-groups", "create", "admins", "-r", "sys_admin")
    jo = rest_client(server, "jo")
    assert refused_status(lambda: jo.tenants.create("jos")) == 403
    cfy("user-groups", "add-user", "jo", "-g", "admins")
    jo.tenants.create("jos")
    assert jo.users.get("jo").role == "default"  # its own system role
    cfy("user-groups", "set-role", "admins", "-r", "default")
    assert refused_status(lambda: jo.tenants.create("jos2")) == 403
    # the only operator left through the group: the group cannot be emptied nor demoted, the user can go
    cfy("user-groups", "set-role", "admins", "-r", "sys_admin")
    cfy("users", "create", "kim", "-p", PASSWORD, "-r", "sys_admin")
    kim = rest_client(server, "kim")
    jo.users.set_role("admin", "default")
    kim.users.set_role("kim", "default")
    assert refused_status(lambda: jo.user_groups.remove_user("jo", "admins")) == 400
    assert refused_status(lambda: jo.user_groups.delete("admins")) == 400
    with pytest.raises(CloudifyClientError) as raised:
        jo.user_groups.set_role("admins", "default")
    assert raised.value.status_code == 400 and "last operator" in str(raised.value)
    jo.users.set_role("admin", "sys_admin")
    cfy("user-groups", "delete", "admins")
    assert refused_status(lambda: jo.tenants.create("jos3")) == 403


def test_only_the_operator_manages_groups(server, tmp_path):
    cfy = cfy_on(server, tmp_path)
    cfy("tenants", "create", "team3")
    cfy("users", "create", "lou", "-p", PASSWORD, "-t", "team3", "-l", "manager")
    cfy("user-groups", "create", "crew")
    lou = rest_client(server, "lou", "team3")
    refused = [lambda: lou.user_groups.list(), lambda: lou.user_groups.get("crew"),
               lambda: lou.user_groups.create("mine", "default"), lambda: lou.user_groups.delete("crew"),
               lambda: lou.user_groups.set_role("crew", "sys_admin"),
               lambda: lou.user_groups.add_user("lou", "crew"), lambda: lou.user_groups.remove_user("lou", "crew"),
               lambda: lou.tenants.add_user_group("crew", "team3", "manager"),
               lambda: lou.tenants.update_user_group("crew", "team3", "viewer"),
               lambda: lou.tenants.remove_user_group("crew", "team3"), lambda: lou.tenants.list(_get_data=True)]
    assert [refused_status(call) for call in refused] == [403] * len(refused)
    assert rest_client(server).user_groups.get("crew", _get_data=True).users == []


def test_deleting_a_group_a_tenant_or_a_user_drops_what_names_it(server, tmp_path):
    cfy = cfy_on(server, tmp_path)
    cfy("tenants", "create", "temp")
    cfy("users", "create", "max", "-p", PASSWORD)
    cfy("user-groups", "create", "temps")
    cfy("user-groups", "add-user", "max", "-g", "temps")
    cfy("tenants", "add-user-group", "temps", "-t", "temp", "-r", "user")
    maxi = rest_client(server, "max", "temp")
    assert maxi.blueprints.list() is not None
    cfy("user-groups", "delete", "temps")  # with its members and its tenant
    assert refused_status(lambda: maxi.blueprints.list()) == 403
    assert rest_client(server).tenants.get("temp").groups == 0
    cfy("user-groups", "create", "temps")  # the name is free again, the group new and empty
    cfy("user-groups", "add-user", "max", "-g", "temps")
    cfy("tenants", "add-user-group", "temps", "-t", "temp", "-r", "user")
    cfy("tenants", "delete", "temp")
    assert rest_client(server).user_groups.get("temps", _get_data=True).tenants == {}
    cfy("users", "delete", "max")
    assert rest_client(server).user_groups.get("temps", _get_data=True).users == []


def test_hostile_names_roles_and_references_are_clear_4xx(server):
    from cloudify_rest_client.exceptions import CloudifyClientError

    admin = rest_client(server)
    with pytest.raises(CloudifyClientError) as raised:
        admin.user_groups.create("bad group!", "default")
    assert (raised.value.status_code, raised.value.error_code) == (400, "bad_parameters_error")
    assert refused_status(lambda: admin.user_groups.create("users", "default")) == 400
    assert refused_status(lambda: admin.user_groups.create("grp", "root")) == 400
    assert refused_status(lambda: admin.user_groups.create("grp", "default", ldap_group_dn="x" * 2000)) == 400
    admin.user_groups.create("grp", "default", ldap_group_dn="CN=grp")
    with pytest.raises(CloudifyClientError) as raised:
        admin.user_groups.create("GRP", "default")
    assert raised.value.status_code == 409 and "already exists" in str(raised.value)
    assert refused_status(lambda: admin.user_groups.create("other", "default", ldap_group_dn="cn=GRP")) == 409
    assert refused_status(lambda: admin.user_groups.get("nogroup")) == 404
    assert refused_status(lambda: admin.user_groups.add_user("nobody", "grp")) == 404
    assert refused_status(lambda: admin.user_groups.add_user("admin", "nogroup")) == 404
    assert refused_status(lambda: admin.user_groups.remove_user("admin", "grp")) == 404
    assert refused_status(lambda: admin.tenants.add_user_group("grp", "no-such-tenant", "user")) == 404
    assert refused_status(lambda: admin.tenants.add_user_group("grp", "default_tenant", "admin")) == 400
    assert refused_status(lambda: admin.tenants.update_user_group("grp", "default_tenant", "viewer")) == 404
    admin.tenants.add_user_group("grp", "default_tenant", "viewer")
    assert refused_status(lambda: admin.tenants.add_user_group("grp", "default_tenant", "user")) == 409
    assert refused_status(lambda: admin.tenants.create("user-groups")) == 400


def test_backups_carry_groups_and_their_tenant_roles_not_their_members(server, tmp_path, monkeypatch):
    from stoker.cli import main

    # the server's secret key, made when it first seals something (this secret, if no other test of the module
    # ran on this worker before): the backup holds what the server sealed
    rest_client(server).secrets.create("backed-up", "value", update_if_exists=True)
    home = Path(server.db_url.removeprefix("sqlite:///")).parent
    monkeypatch.setenv("STOKER_SECRET_KEY", (home / "secret.key").read_text().strip())

    def stoker(db_url: str, *args: str):
        done = CliRunner().invoke(main, ["--db-url", db_url, *args], catch_exceptions=False)
        assert done.exit_code == 0, done.output
        return done.stdout

    cfy = cfy_on(server, tmp_path)
    cfy("tenants", "create", "kept")
    cfy("users", "create", "ned", "-p", PASSWORD)
    cfy("user-groups", "create", "keepers", "-l", "CN=keepers")
    cfy("user-groups", "add-user", "ned", "-g", "keepers")
    cfy("tenants", "add-user-group", "keepers", "-t", "kept", "-r", "manager")
    cfy("user-groups", "create", "movers", "-r", "sys_admin", "-l", "CN=movers")
    cfy("user-groups", "add-user", "ned", "-g", "movers")
    cfy("tenants", "add-user-group", "movers", "-t", "kept", "-r", "viewer")
    stoker(server.db_url, "backup", "create", str(tmp_path / "b.zip"))
    target = f"sqlite:///{tmp_path / 'target.db'}"
    stoker(target, "user-group", "create", "keepers")  # the restoring server's own group stays as it is
    stoker(target, "backup", "restore", str(tmp_path / "b.zip"))
    groups = {g["name"]: g for g in json.loads(stoker(target, "user-group", "list", "-f", "json"))}
    assert groups["keepers"] == {"name": "keepers", "role": "default", "ldap_dn": None, "users": [], "tenants": {}}
    assert groups["movers"] == {"name": "movers", "role": "sys_admin", "ldap_dn": "CN=movers", "users": [],
                                "tenants": {"kept": "viewer"}}


def test_stoker_user_group_keeps_groups_on_the_database(tmp_path):
    from stoker.cli import main

    db_url = f"sqlite:///{tmp_path / 'local.db'}"
    password = tmp_path / "pw"
    password.write_text(PASSWORD + "\n")

    def stoker(*args: str, ok: bool = True) -> str:
        done = CliRunner().invoke(main, ["--db-url", db_url, *args], catch_exceptions=False)
        assert (done.exit_code == 0) == ok, done.output
        return done.output

    stoker("user", "create", "pat", "--password-file", str(password), "--tenant", "crew", "--role", "viewer")
    stoker("user-group", "create", "riggers", "-l", "CN=riggers")
    stoker("user-group", "add-user", "pat", "-g", "RIGGERS")
    stoker("user-group", "add-tenant", "riggers", "-t", "crew", "-r", "manager")
    [group] = json.loads(stoker("user-group", "list", "-f", "json"))
    assert group == {"name": "riggers", "role": "default", "ldap_dn": "CN=riggers", "users": ["pat"],
                     "tenants": {"crew": "manager"}}
    from stoker.api.cloudify.users import UserStore
    from stoker.store.db import open_store

    users = UserStore(open_store(db_url).engine)
    assert (users.role("pat", "crew"), users.own_role("pat", "crew")) == ("manager", "viewer")
    assert "already associated" in stoker("user-group", "add-user", "pat", "-g", "riggers", ok=False)
    assert "was not found" in stoker("user-group", "add-tenant", "riggers", "-t", "nowhere", "-r", "user", ok=False)
    stoker("user-group", "remove-tenant", "riggers", "-t", "crew")
    assert users.role("pat", "crew") == "viewer"
    stoker("user-group", "remove-user", "pat", "-g", "riggers")
    stoker("user-group", "delete", "riggers")
    assert json.loads(stoker("user-group", "list", "-f", "json")) == []
