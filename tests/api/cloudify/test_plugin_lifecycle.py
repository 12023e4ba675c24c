"""``cfy plugins install``, ``set-owner``, ``update`` (with ``get-update`` and ``history``), a plugin in use,
and ``--all-tenants`` lists, against a Stoker server with users in several tenants."""

from __future__ import annotations

import json
import subprocess
import time

import pytest
from wheel_cache import PLUGIN_WHEELS

from .conftest import cfy_on, cloudify_server
from .test_plugin_tenants import _blueprint, _client, _zip
from .test_plugins_queue_validate import _wagon

pytest.importorskip("cloudify_rest_client")
pytestmark = pytest.mark.slow  # a server, `cfy` processes, a plugin virtualenv

#: admin is the operator (a manager of default_tenant); cat belongs to two tenants
USERS = [("admin", "default_tenant", "manager"), ("admin", "team-a", "manager"), ("ann", "team-a", "manager"),
         ("amy", "team-a", "user"), ("bob", "team-b", "manager"), ("cat", "team-a", "user"),
         ("cat", "team-b", "viewer"), ("dan", "team-d", "manager")]

PLAIN = ("tosca_definitions_version: cloudify_dsl_1_4\nimports: [cloudify/types/types.yaml]\n"
         "node_templates:\n  n: {type: cloudify.nodes.Root}\n")
USES_PLUGIN = ("tosca_definitions_version: cloudify_dsl_1_4\nimports: [cloudify/types/types.yaml, 'plugin:my-plugin']\n"
               "inputs:\n  gate: {type: string, default: ''}\nnode_templates:\n  thing: {type: my.Thing}\n"
               "  held:\n    type: cloudify.nodes.Root\n    interfaces:\n      cloudify.interfaces.lifecycle:\n"
               "        create: {implementation: scripts/hold.sh, inputs: {GATE: {get_input: gate}}}\n")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("plugin-lifecycle")
    # plugin virtualenvs take their wheels from the tests' cache (``plugin_wheels`` fills it)
    started = cloudify_server(tmp, USERS, extra=("--allow-local-resources",),
                              env={"STOKER_PLUGIN_WHEELS": str(PLUGIN_WHEELS)})
    started.home = tmp
    yield started
    started.stop()


def _upload(client, folder, version: str, visibility: str = "tenant"):
    folder.mkdir(parents=True, exist_ok=True)
    return client.plugins.upload(_zip(folder / "up", *_wagon(folder, version)), visibility=visibility)


def _code(call, *args, **kwargs) -> tuple[int, str]:
    from cloudify_rest_client.exceptions import CloudifyClientError

    with pytest.raises(CloudifyClientError) as refused:
        call(*args, **kwargs)
    return refused.value.status_code, refused.value.error_code


def test_all_tenants_lists_every_tenant_of_the_user_and_every_tenant_for_the_operator(server, tmp_path):
    ann, bob = _client(server, "ann", "team-a"), _client(server, "bob", "team-b")
    made = {}
    for client, tenant in ((ann, "team-a"), (bob, "team-b")):
        client.blueprints.upload(_blueprint(tmp_path, f"bp-{tenant}", PLAIN), f"bp-{tenant}")
        client.deployments.create(f"bp-{tenant}", f"dep-{tenant}")
        made[tenant] = client.executions.start(f"dep-{tenant}", "install").id
        client.secrets.create(f"key-{tenant}", "value")
        _upload(client, tmp_path / tenant, {"team-a": "1.0", "team-b": "2.0"}[tenant])
        client.plugins_update.update_plugins(f"bp-{tenant}")
    for (client, tenant) in ((ann, "team-a"), (bob, "team-b")):
        deadline = time.monotonic() + 60
        while client.executions.get(made[tenant]).status != "terminated" and time.monotonic() < deadline:
            time.sleep(0.1)

    def seen(client, **query) -> dict:
        return {"blueprints": sorted((b.id, b["tenant_name"]) for b in client.blueprints.list(**query)),
                "deployments": sorted((d.id, d["tenant_name"]) for d in client.deployments.list(**query)),
                "executions": sorted((e.deployment_id, e["tenant_name"]) for e in client.executions.list(**query)),
                "secrets": sorted((s.key, s["tenant_name"]) for s in client.secrets.list(**query)),
                "plugins": sorted((p.package_version, p["tenant_name"]) for p in client.plugins.list(**query)),
                "updates": sorted((u.blueprint_id, u.tenant_name) for u in client.plugins_update.list(**query))}

    def of(*tenants: str) -> dict:
        return {"blueprints": [(f"bp-{t}", t) for t in tenants], "deployments": [(f"dep-{t}", t) for t in tenants],
                "executions": [(f"dep-{t}", t) for t in tenants], "secrets": [(f"key-{t}", t) for t in tenants],
                "plugins": [({"team-a": "1.0", "team-b": "2.0"}[t], t) for t in tenants],
                "updates": [(f"bp-{t}", t) for t in tenants]}

    operator = _client(server, "admin", "default_tenant")
    assert seen(operator) == of()  # its own tenant holds nothing
    assert seen(operator, _all_tenants=True) == of("team-a", "team-b")
    assert seen(ann, _all_tenants=True) == of("team-a")  # a member of team-a only
    assert [(e.deployment_id, e["tenant_name"]) for e in operator.executions.list(
        deployment_id="dep-team-b", _all_tenants=True)] == [("dep-team-b", "team-b")]
    assert seen(_client(server, "cat", "team-b"), _all_tenants=True) == of("team-a", "team-b")
    assert seen(_client(server, "cat", "team-b")) == of("team-b")
    cfy = cfy_on(server, tmp_path, "admin", "default_tenant")
    listed = json.loads(cfy("deployments", "list", "--all-tenants", "--json"))
    assert sorted((d["id"], d["tenant_name"]) for d in listed) == [("dep-team-a", "team-a"), ("dep-team-b", "team-b")]
    assert sorted(p["tenant_name"] for p in json.loads(cfy("plugins", "list", "--all-tenants", "--json"))) == [
        "team-a", "team-b"]
    # a project's token reads its own tenant only, as without the flag
    from ..helpers import create_token
    from cloudify_rest_client import CloudifyClient

    token = CloudifyClient(host="127.0.0.1", port=int(server.url.rsplit(":", 1)[1]),
                           token=create_token(server.db_url, "team-b"), tenant="team-b")
    assert [b.id for b in token.blueprints.list(_all_tenants=True)] == ["bp-team-b"]
    for client, tenant in ((ann, "team-a"), (bob, "team-b")):
        client.executions.start(f"dep-{tenant}", "uninstall")
        client.secrets.delete(f"key-{tenant}")
        for plugin in client.plugins.list():
            client.plugins.delete(plugin.id)


def test_the_operator_sets_a_plugins_owner_to_a_user_stoker_knows(server, tmp_path):
    ann, amy = _client(server, "ann", "team-a"), _client(server, "amy", "team-a")
    private = _upload(ann, tmp_path, "3.0", "private")
    assert amy.plugins.list().items == []  # ann's private plugin
    # a tenant's manager is not the operator; an unknown user, plugin or field is refused, nothing changed
    assert _code(ann.plugins.set_owner, private.id, "amy") == (403, "forbidden_error")
    admin = _client(server, "admin", "team-a")
    assert _code(admin.plugins.set_owner, private.id, "nobody") == (400, "bad_parameters_error")
    assert _code(admin.plugins.set_owner, "no-such-plugin", "amy") == (404, "not_found_error")
    assert _code(admin.plugins.update, private.id, creator="amy", title="x") == (400, "bad_parameters_error")
    assert _code(_client(server, "bob", "team-b").plugins.set_owner, private.id, "amy") == (403, "forbidden_error")
    assert admin.plugins.get(private.id).created_by == "ann"

    cfy = cfy_on(server, tmp_path, "admin", "team-a")
    assert f"Plugin `{private.id}` is now owned by user `amy`" in cfy("plugins", "set-owner", private.id, "-s", "amy")
    assert admin.plugins.get(private.id).created_by == "amy"
    assert [p.id for p in amy.plugins.list()] == [private.id]  # a private plugin is its owner's
    ann.plugins.delete(private.id)


def test_a_plugin_a_deployment_runs_is_deleted_only_with_force_and_update_moves_it(server, tmp_path):
    ann = _client(server, "ann", "team-a")
    old = _upload(ann, tmp_path / "v1", "1.0")
    folder = tmp_path / "bp"
    (folder / "scripts").mkdir(parents=True)
    (folder / "blueprint.yaml").write_text(USES_PLUGIN)
    (folder / "scripts" / "hold.sh").write_text('[ -z "$GATE" ] || { touch "$GATE.held"; '
                                                'while [ ! -e "$GATE" ]; do sleep 0.05; done; }\n')
    ann.blueprints.upload(str(folder / "blueprint.yaml"), "uses")
    ann.deployments.create("uses", "user-of-1", inputs={"gate": str(tmp_path / "gate")})
    assert _code(ann.plugins.delete, old.id) == (405, "plugin_in_use")
    assert [p.id for p in ann.plugins.list()] == [old.id]
    cfy = cfy_on(server, tmp_path, "ann", "team-a")
    assert "Successfully updated plugins for blueprint uses" in cfy("plugins", "update", "uses")
    [nothing] = ann.plugins_update.list(blueprint_id="uses")
    assert (nothing.state, nothing.deployments_to_update) == ("no_changes_required", [])

    minor, major = _upload(ann, tmp_path / "v15", "1.5", "private"), _upload(ann, tmp_path / "v2", "2.0")
    # a running execution holds the deployment's plugins: refused, nothing changed
    install = ann.executions.start("user-of-1", "install")
    deadline = time.monotonic() + 30
    while not (tmp_path / "gate.held").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _code(ann.plugins_update.update_plugins, "uses") == (400, "plugins_update_failed")
    assert _versions(ann, "uses") == "1.0" and len(ann.plugins_update.list(blueprint_id="uses")) == 1
    (tmp_path / "gate").touch()
    while ann.executions.get(install.id).status != "terminated" and time.monotonic() < deadline + 30:
        time.sleep(0.1)

    # amy's deployment runs its plugins as amy, who does not see ann's private 1.5
    _client(server, "amy", "team-a").deployments.create("uses", "amys")
    from cloudify_rest_client.exceptions import CloudifyClientError

    with pytest.raises(CloudifyClientError) as refused:
        ann.plugins_update.update_plugins("uses", all_to_minor=True, all_to_latest=False)
    assert refused.value.error_code == "plugins_update_failed" and "'amy', who does not see" in str(refused.value)
    assert _versions(ann, "uses") == "1.0"
    ann.plugins.set_visibility(minor.id, "tenant")
    cfy("plugins", "update", "uses", "--all-to-minor")
    assert _versions(ann, "uses") == "1.5"
    ann.plugins.delete(old.id)  # no deployment runs 1.0 any more
    assert _code(ann.plugins.delete, minor.id) == (405, "plugin_in_use")
    out = cfy("plugins", "update", "uses")
    assert "Successfully updated plugins for blueprint uses" in out
    assert _versions(ann, "uses") == "2.0"
    history = json.loads(cfy("plugins", "history", "--blueprint-id", "uses", "--json"))
    assert [(h["state"], h["deployments_to_update"]) for h in history] == [
        ("no_changes_required", []), ("successful", ["user-of-1", "amys"]), ("successful", ["user-of-1", "amys"])]
    shown = json.loads(cfy("plugins", "get-update", history[-1]["id"], "--json"))
    assert shown["execution_id"] == history[-1]["execution_id"] and shown["blueprint_id"] == "uses"
    assert ann.executions.get(shown["execution_id"]).status == "terminated"
    every = cfy("plugins", "update", "--all-blueprints")  # each blueprint of the tenant: nothing newer now
    assert "Successfully updated" in every and "Failed" not in every
    assert ann.plugins_update.list(blueprint_id="uses", _sort="-created_at")[0].state == "no_changes_required"

    # another tenant neither updates nor reads them; a user is no manager; no such blueprint
    bob = _client(server, "bob", "team-b")
    assert _code(bob.plugins_update.update_plugins, "uses") == (404, "not_found_error")
    assert _code(bob.plugins_update.get, shown["id"]) == (404, "not_found_error")
    assert not {h["id"] for h in history} & {u.id for u in bob.plugins_update.list(_all_tenants=True)}
    assert _code(_client(server, "amy", "team-a").plugins_update.update_plugins, "uses") == (403, "forbidden_error")
    assert _code(ann.plugins_update.update_plugins, "no-such-blueprint") == (404, "not_found_error")
    assert _code(ann.plugins.delete, major.id) == (405, "plugin_in_use")
    ann.plugins.delete(major.id, force=True)
    assert [p.id for p in ann.plugins.list()] == [minor.id]
    ann.plugins.delete(minor.id, force=True)


def test_an_update_brings_what_the_newer_plugin_yaml_declares_into_the_deployment(server, tmp_path):
    """As Cloudify's, a plugins update moves each deployment onto the blueprint parsed again on the new
    versions (a deployment update that runs no operation): a property only 3.1's YAML declares reaches it."""
    dan = _client(server, "dan", "team-d")
    _upload(dan, tmp_path / "v30", "3.0")
    (tmp_path / "v31").mkdir()
    wagon, yaml = _wagon(tmp_path / "v31", "3.1")
    yaml.write_text(yaml.read_text() + "    properties:\n      color: {default: blue}\n")
    dan.plugins.upload(_zip(tmp_path / "v31" / "up", wagon, yaml))
    blueprint = tmp_path / "grows" / "blueprint.yaml"
    blueprint.parent.mkdir()
    blueprint.write_text(PLAIN.replace("types.yaml]", "types.yaml, 'plugin:my-plugin?version=3.0']").replace(
        "cloudify.nodes.Root", "my.Thing"))
    dan.blueprints.upload(str(blueprint), "grows")
    dan.deployments.create("grows", "grown")
    assert "color" not in dan.nodes.get("grown", "n").properties
    out = cfy_on(server, tmp_path, "dan", "team-d")("plugins", "update", "grows")
    assert "Successfully updated plugins for blueprint grows" in out
    assert dan.nodes.get("grown", "n").properties["color"] == "blue"
    assert _versions(dan, "grows") == "3.1"
    [moved] = dan.deployment_updates.list(deployment_id="grown")
    assert moved.state == "successful" and moved.execution_id == dan.plugins_update.list(
        blueprint_id="grows")[0].execution_id
    assert {"action": "add", "entity_type": "property", "entity_id": ["nodes", "n", "properties", "color"],
            "topology_order": 0} in moved.steps


def _versions(client, blueprint_id: str) -> str:
    """The version of my-plugin the blueprint's plan (and so its deployments') run."""
    return client.blueprints.get(blueprint_id).plan["plugins"]["mine"]["package_version"]


def test_cfy_plugins_install_makes_the_virtualenv_now(server, tmp_path, plugin_wheels):
    bob = _client(server, "bob", "team-b")
    plugin = _upload(bob, tmp_path, "7.0")
    assert bob.plugins.get(plugin.id)["installation_state"] == []  # made at first use, not yet
    env = server.home / "plugin-envs" / "@team-b" / "my-plugin" / "7.0"
    assert not env.exists()
    cfy = cfy_on(server, tmp_path, "bob", "team-b")
    # a file where the virtualenv goes: the install fails, and says why until an install succeeds
    env.parent.mkdir(parents=True)
    env.write_text("in the way")
    assert "Encountered errors while installing plugins" in cfy("plugins", "install", plugin.id, ok=False)
    [state] = bob.plugins.get(plugin.id)["installation_state"]
    assert (state["state"], "cannot prepare plugin my-plugin 7.0" in state["error"]) == ("error", True)
    env.unlink()
    assert "Finished installing on manager 127.0.0.1" in cfy("plugins", "install", plugin.id)
    [state] = bob.plugins.get(plugin.id)["installation_state"]
    assert (state["manager"], state["state"]) == ("127.0.0.1", "installed")
    ran = subprocess.run([str(env / "bin" / "python"), "-c", "import cloudify.decorators"], capture_output=True)
    assert ran.returncode == 0, ran.stderr
    listed = json.loads(cfy("plugins", "list", "--json"))
    assert [p["installed on"] for p in listed] == ["1 managers"]
    # no agents, no other manager, no such plugin, not by a viewer, no other action
    assert _code(bob.plugins.install, plugin.id, agents=["agent-1"]) == (404, "not_found_error")
    assert _code(bob.plugins.install, plugin.id, managers=["other-host"]) == (404, "not_found_error")
    assert _code(bob.plugins.install, "no-such-plugin", managers=["127.0.0.1"]) == (404, "not_found_error")
    assert _code(_client(server, "cat", "team-b").plugins.install, plugin.id, managers=["127.0.0.1"]) == (
        403, "forbidden_error")
    assert _code(bob.plugins.api.post, f"/plugins/{plugin.id}", data={"action": "uninstall"}) == (
        400, "bad_parameters_error")
    bob.plugins.delete(plugin.id)


def test_the_operator_acts_as_a_manager_in_a_tenant_it_is_no_member_of_and_nobody_else_does(server, tmp_path):
    """As Cloudify's sys_admin: ``cfy plugins update --all-blueprints --all-tenants`` reaches team-b, of which
    admin (a manager of default_tenant and team-a) is no member; a tenant's manager does not reach another."""
    bob = _client(server, "bob", "team-b")
    old = _upload(bob, tmp_path / "v4", "4.0")
    bob.blueprints.upload(_blueprint(tmp_path, "bobs", "tosca_definitions_version: cloudify_dsl_1_4\nimports: "
                                     "[cloudify/types/types.yaml, 'plugin:my-plugin']\nnode_templates:\n"
                                     "  thing: {type: my.Thing}\n"), "bobs-uses")
    bob.deployments.create("bobs-uses", "bobs-dep")
    new = _upload(bob, tmp_path / "v41", "4.1")
    for user in ("ann", "amy"):  # team-a's manager and user: no members of team-b
        stranger = _client(server, user, "team-b")
        assert _code(stranger.plugins.list) == (403, "forbidden_error")
        assert _code(stranger.plugins.delete, old.id) == (403, "forbidden_error")
        assert _code(stranger.plugins_update.update_plugins, "bobs-uses") == (403, "forbidden_error")
    refused = cfy_on(server, tmp_path, "ann", "team-a")("plugins", "update", "bobs-uses", "-t", "team-b", ok=False)
    assert "403: User 'ann' is not a member of tenant 'team-b'" in refused
    assert _code(_client(server, "admin", "no-such-tenant").plugins.list) == (403, "forbidden_error")
    assert _versions(bob, "bobs-uses") == "4.0"

    out = cfy_on(server, tmp_path, "admin", "default_tenant")("plugins", "update", "--all-blueprints", "--all-tenants")
    assert "Failed" not in out and "Successfully updated plugins for blueprint bobs-uses" in out
    assert _versions(bob, "bobs-uses") == "4.1"
    [update] = bob.plugins_update.list(blueprint_id="bobs-uses")
    assert (update["created_by"], update.deployments_to_update, update.tenant_name) == ("admin", ["bobs-dep"], "team-b")
    admin = _client(server, "admin", "team-b")
    assert sorted(p.id for p in admin.plugins.list()) == sorted([old.id, new.id])
    admin.plugins.delete(old.id)  # no blueprint uses 4.0 any more
    assert _code(admin.plugins.delete, new.id) == (405, "plugin_in_use")
    bob.deployments.delete("bobs-dep")
    bob.blueprints.delete("bobs-uses")
    admin.plugins.delete(new.id)
    assert bob.plugins.list().items == []


def test_an_updates_mapping_pins_a_plugin_to_its_suggested_version_older_or_newer(server, tmp_path):
    """``update_plugins(mapping=...)`` (the rest client's): each update names a plugin and the version it
    goes to exactly, as Cloudify's resolver reads it."""
    bob = _client(server, "bob", "team-b")
    plugins = [_upload(bob, tmp_path / version, version) for version in ("5.0", "5.1", "6.0")]
    bob.blueprints.upload(_blueprint(tmp_path, "pinned", "tosca_definitions_version: cloudify_dsl_1_4\nimports: "
                                     "[cloudify/types/types.yaml, 'plugin:my-plugin?version=5.1']\n"
                                     "node_templates:\n  thing: {type: my.Thing}\n"), "pinned")

    def pin(version: str):
        mapping = {"updates": [{"plugin:my-plugin?version=5.1": {"plugin_name": "my-plugin",
                                                                 "suggested_version": version}}]}
        with pytest.warns(RuntimeWarning):  # the client's reminder to change the blueprint's files too
            return bob.plugins_update.update_plugins("pinned", mapping=mapping, auto_correct_types=True)

    assert pin("5.1").state == "no_changes_required"  # not to the newest, 6.0
    assert (pin("5.0").state, _versions(bob, "pinned")) == ("successful", "5.0")  # older
    assert _code(pin, "7.0") == (400, "plugins_update_failed") and _versions(bob, "pinned") == "5.0"
    with pytest.warns(RuntimeWarning):
        assert _code(bob.plugins_update.update_plugins, "pinned", mapping={"updates": [{"line": "5.1"}]}) == (
            400, "bad_parameters_error")
    assert bob.plugins_update.update_plugins("pinned").state == "successful" and _versions(bob, "pinned") == "6.0"
    bob.blueprints.delete("pinned")
    for plugin in plugins:
        bob.plugins.delete(plugin.id)
