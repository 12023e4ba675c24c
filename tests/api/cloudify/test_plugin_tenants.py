"""The plugin catalog per tenant, as on Cloudify: a plugin belongs to the tenant it was uploaded to, with a
visibility (private / tenant / global); another tenant neither sees, imports, runs nor deletes it until
the operator makes it global; ``stoker --url ... plugin`` goes over the same REST API."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from ..helpers import create_token
from .conftest import PASSWORD, cfy_on, cloudify_server
from .test_plugins_queue_validate import _wagon

pytest.importorskip("cloudify_rest_client")

USERS = [("admin", "default_tenant", "manager"), ("admin", "team-a", "manager"), ("ann", "team-a", "manager"),
         ("amy", "team-a", "user"), ("bob", "team-b", "manager")]

USES_PLUGIN = ("tosca_definitions_version: cloudify_dsl_1_4\nimports: [cloudify/types/types.yaml, "
               "'plugin:my-plugin']\nnode_templates:\n  thing: {type: my.Thing}\n")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    started = cloudify_server(tmp_path_factory.mktemp("plugin-tenants"), USERS)
    yield started
    started.stop()


def _client(server, user: str, tenant: str):
    from cloudify_rest_client import CloudifyClient

    return CloudifyClient(host="127.0.0.1", port=int(server.url.rsplit(":", 1)[1]), username=user,
                          password=PASSWORD, tenant=tenant)


def _status(call, *args, **kwargs) -> int:
    from cloudify_rest_client.exceptions import CloudifyClientError

    with pytest.raises(CloudifyClientError) as refused:
        call(*args, **kwargs)
    return refused.value.status_code


def _blueprint(tmp_path, name: str, text: str = USES_PLUGIN):
    path = tmp_path / name / "blueprint.yaml"
    path.parent.mkdir()
    path.write_text(text)
    return str(path)


def test_a_tenants_plugin_is_its_own_until_the_operator_makes_it_global(server, tmp_path):
    ann, amy, bob = (_client(server, "ann", "team-a"), _client(server, "amy", "team-a"),
                     _client(server, "bob", "team-b"))
    wagon, yaml = _wagon(tmp_path, "1.0")
    uploaded = ann.plugins.upload(_zip(tmp_path / "upload", wagon, yaml))
    assert (uploaded["visibility"], uploaded.tenant_name, uploaded.created_by) == ("tenant", "team-a", "ann")
    assert [p.id for p in amy.plugins.list()] == [uploaded.id]  # the tenant's users see it
    # another tenant: not listed, not found, not deletable, not importable
    assert bob.plugins.list().items == []
    assert _status(bob.plugins.get, uploaded.id) == 404
    assert _status(bob.plugins.delete, uploaded.id) == 404
    assert _status(bob.blueprints.upload, _blueprint(tmp_path, "b1"), "uses") == 400
    ann.blueprints.upload(_blueprint(tmp_path, "a1"), "uses")
    assert "thing" in [n["id"] for n in ann.blueprints.get("uses").plan["nodes"]]
    # the same name and version again in the tenant is refused; another tenant holds its own
    assert _status(ann.plugins.upload, _zip(tmp_path / "a-again", wagon, yaml)) == 409
    (tmp_path / "b").mkdir()
    b_wagon, b_yaml = _wagon(tmp_path / "b", "1.0")
    b_yaml.write_text(b_yaml.read_text() + "  bob.Only:\n    derived_from: cloudify.nodes.Root\n")
    bobs = bob.plugins.upload(_zip(tmp_path / "b-up", b_wagon, b_yaml))
    assert bobs.id != uploaded.id and bobs.tenant_name == "team-b"
    assert [p.id for p in bob.plugins.list()] == [bobs.id] and [p.id for p in amy.plugins.list()] == [uploaded.id]
    only_bobs = USES_PLUGIN + "  other: {type: bob.Only}\n"
    bob.blueprints.upload(_blueprint(tmp_path, "b0", only_bobs), "bobs")  # his own plugin's YAML
    assert _status(ann.blueprints.upload, _blueprint(tmp_path, "a0", only_bobs), "bobs") == 400
    bob.blueprints.delete("bobs")
    assert _status(bob.plugins.upload, _zip(tmp_path / "b-again", b_wagon, b_yaml)) == 409
    # while team-b holds its own 1.0, team-a's may not become global (team-b would see two)
    assert _status(_client(server, "admin", "team-a").plugins.set_global, uploaded.id) == 409
    bob.plugins.delete(bobs.id)
    assert [p.id for p in amy.plugins.list()] == [uploaded.id]  # team-a's stays

    # a tenant's manager may not make it global (nor upload a global one); a visibility only widens
    assert _status(ann.plugins.set_global, uploaded.id) == 403
    (tmp_path / "g").mkdir()
    global_upload = _zip(tmp_path / "g-up", *_wagon(tmp_path / "g", "2.0"))
    assert _status(ann.plugins.upload, global_upload, visibility="global") == 403
    admin = _client(server, "admin", "team-a")
    made = admin.plugins.set_global(uploaded.id)
    assert made["visibility"] == "global"
    assert _status(admin.plugins.set_visibility, uploaded.id, "tenant") == 409

    # global: every tenant lists and imports it; only its own tenant deletes it
    assert [(p.id, p["visibility"], p.tenant_name) for p in bob.plugins.list()] == [(uploaded.id, "global", "team-a")]
    bob.blueprints.upload(_blueprint(tmp_path, "b2"), "uses")
    assert _status(bob.plugins.delete, uploaded.id) == 403
    bob.blueprints.delete("uses")
    ann.blueprints.delete("uses")
    ann.plugins.delete(uploaded.id)
    assert bob.plugins.list().items == [] and ann.plugins.list().items == []


def test_a_private_plugin_is_its_uploaders_and_the_tenant_managers(server, tmp_path):
    ann, amy = _client(server, "ann", "team-a"), _client(server, "amy", "team-a")
    wagon, yaml = _wagon(tmp_path, "3.0")
    private = ann.plugins.upload(_zip(tmp_path / "up", wagon, yaml), visibility="private")
    assert private["visibility"] == "private"
    assert amy.plugins.list().items == [] and _status(amy.plugins.get, private.id) == 404
    assert _status(amy.blueprints.upload, _blueprint(tmp_path, "amy1"), "uses") == 400  # nor imports it
    assert [p.id for p in _client(server, "admin", "team-a").plugins.list()] == [private.id]
    widened = ann.plugins.set_visibility(private.id, "tenant")
    assert widened["visibility"] == "tenant" and [p.id for p in amy.plugins.list()] == [private.id]
    amy.blueprints.upload(_blueprint(tmp_path, "amy2"), "uses")
    amy.blueprints.delete("uses")
    ann.plugins.delete(private.id)


def test_stoker_plugin_over_url_uses_the_servers_catalog_in_the_urls_tenant(server, tmp_path):
    from stoker.cli import main

    token = create_token(server.db_url, "team-b")
    home = tmp_path / "client-home"  # the client's own home: nothing is uploaded there

    def stoker(*args: str, ok: bool = True) -> str:
        done = CliRunner().invoke(main, ["--url", f"{server.url}/v1/team-b", "--token", token, "plugin", *args],
                                  env={"STOKER_HOME": str(home)}, catch_exceptions=False)
        assert (done.exit_code == 0) == ok, done.output
        return done.output

    wagon, yaml = _wagon(tmp_path, "4.0")
    shown = json.loads(stoker("upload", str(wagon), "-y", str(yaml), "-f", "json"))
    assert shown == {"package_name": "my-plugin", "package_version": "4.0", "yaml_files": ["plugin.yaml"],
                     "package": wagon.name, "visibility": "tenant", "tenant_name": "team-b"}
    assert not (home / "plugins").exists()
    bob = _client(server, "bob", "team-b")
    assert [(p.package_name, p.package_version) for p in bob.plugins.list()] == [("my-plugin", "4.0")]
    assert _client(server, "ann", "team-a").plugins.list().items == []
    assert [p["package_version"] for p in json.loads(stoker("list", "-f", "json"))] == ["4.0"]
    assert json.loads(stoker("show", "my-plugin", "-f", "json"))["tenant_name"] == "team-b"
    # a project's token is the tenant's manager, never the operator
    assert "only the operator" in stoker("set-visibility", "my-plugin", "global", ok=False)
    assert "over --url a plugin is a wagon" in stoker("upload", str(tmp_path), "-y", str(yaml), ok=False)
    assert json.loads(stoker("delete", "my-plugin", "--version", "4.0", "-f", "json"))["package_version"] == "4.0"
    assert bob.plugins.list().items == []
    assert "is not uploaded" in stoker("show", "my-plugin", ok=False)


def _zip(folder, wagon, yaml) -> str:
    """The zip cloudify-rest-client's ``plugins.upload`` sends (``cfy plugins upload`` zips the wagon and YAML
    itself; the client takes it made)."""
    import zipfile

    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "plugin.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.write(wagon, wagon.name)
        archive.write(yaml, yaml.name)
    return str(path)


def test_cfy_uploads_with_a_visibility_and_sets_global(server, tmp_path):
    cfy = cfy_on(server, tmp_path)
    wagon, yaml = _wagon(tmp_path, "5.0")
    cfy("plugins", "upload", str(wagon), "-y", str(yaml), "--visibility", "private")
    [listed] = json.loads(cfy("plugins", "list", "--json"))
    assert (listed["visibility"], listed["tenant_name"]) == ("private", "default_tenant")
    cfy("plugins", "set-global", listed["id"])
    assert [(p.id, p["visibility"]) for p in _client(server, "bob", "team-b").plugins.list()] == [
        (listed["id"], "global")]
    cfy("plugins", "delete", listed["id"])


def test_a_plugin_downloads_as_uploaded_and_its_yaml_by_dsl_version(server, tmp_path):
    """``cfy plugins download`` / ``download_yaml``, the client's ``get_yaml`` and ``full_archive``, and
    ``stoker plugin download`` over --url and here: what was uploaded comes back; another tenant gets 404."""
    import zipfile

    from stoker.cli import main


    wagon, yaml = _wagon(tmp_path, "6.0")
    yaml_14 = tmp_path / "plugin_1_4.yaml"
    yaml_14.write_text(yaml.read_text().replace("my.Thing", "my.Thing14"))
    upload = tmp_path / "up"
    upload.mkdir()
    with zipfile.ZipFile(upload / "plugin.zip", "w") as archive:
        for path in (wagon, yaml, yaml_14):
            archive.write(path, path.name)
    bob = _client(server, "bob", "team-b")
    uploaded = bob.plugins.upload(str(upload / "plugin.zip"))
    assert bob.plugins.get_yaml(uploaded.id, dsl_version="1_4") == yaml_14.read_text()
    assert bob.plugins.get_yaml(uploaded.id, dsl_version="1_5") == yaml.read_text()  # the unversioned one
    bob.plugins.download(uploaded.id, str(tmp_path / "full.zip"), full_archive=True)
    with zipfile.ZipFile(tmp_path / "full.zip") as archive:
        assert sorted(archive.namelist()) == sorted([wagon.name, "plugin.yaml", "plugin_1_4.yaml"])
        assert archive.read(wagon.name) == wagon.read_bytes()
    assert _status(_client(server, "ann", "team-a").plugins.download, uploaded.id, str(tmp_path / "x")) == 404

    cfy = cfy_on(server, tmp_path, "bob", "team-b")
    cfy("plugins", "download", uploaded.id, "-o", str(tmp_path / "cfy.wgn"))
    assert (tmp_path / "cfy.wgn").read_bytes() == wagon.read_bytes()
    cfy("plugins", "download_yaml", uploaded.id, "-o", str(tmp_path / "cfy.yaml"))
    assert (tmp_path / "cfy.yaml").read_text() == yaml.read_text()

    token = create_token(server.db_url, "team-b")
    out = tmp_path / "stoker-out"
    out.mkdir()

    def stoker(*args: str) -> str:
        done = CliRunner().invoke(main, ["--url", f"{server.url}/v1/team-b", "--token", token, "plugin", *args],
                                  env={"STOKER_HOME": str(tmp_path / "client-home")}, catch_exceptions=False)
        assert done.exit_code == 0, done.output
        return done.output.strip()

    assert stoker("download", "my-plugin", "-o", str(out)) == str(out / wagon.name)
    assert (out / wagon.name).read_bytes() == wagon.read_bytes()
    got = stoker("download", "my-plugin", "--yaml", "--dsl-version", "cloudify_dsl_1_4", "-o", str(out))
    assert got == str(out / "plugin_1_4.yaml") and (out / "plugin_1_4.yaml").read_text() == yaml_14.read_text()
    bob.plugins.delete(uploaded.id)
