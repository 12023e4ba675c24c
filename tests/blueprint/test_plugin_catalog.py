"""The plugin catalog: `stoker plugin upload` and the imports it answers (plugin:, plugin URLs, rules)."""

from __future__ import annotations

import io
import json
import re
import tarfile
import zipfile

import pytest

from stoker.blueprint.parser import parse_file
from stoker.errors import ValidationFailed


def _plugin_yaml(version: str, dsl: str, node_type: str, package: str = "my-plugin") -> str:
    return (f"tosca_definitions_version: cloudify_dsl_{dsl}\n"
            f"plugins:\n  mine:\n    executor: central_deployment_agent\n"
            f"    package_name: {package}\n    package_version: '{version}'\n"
            f"node_types:\n  {node_type}:\n    derived_from: cloudify.nodes.Root\n")


@pytest.fixture
def source(tmp_path):
    """A plugin's source folder with the three YAMLs Cloudify plugins ship."""
    folder = tmp_path / "my-plugin"
    (folder / "my_plugin").mkdir(parents=True)
    (folder / "my_plugin" / "__init__.py").write_text("")
    for name, dsl, node_type in (("plugin.yaml", "1_3", "t.Plain"), ("plugin_1_4.yaml", "1_4", "t.V14"),
                                 ("plugin_1_5.yaml", "1_5", "t.V15")):
        (folder / name).write_text(_plugin_yaml("1.0", dsl, node_type))
    return folder


def _types(write, dsl: str, imports: str) -> set[str]:
    """Which of the test plugins' node types a blueprint importing ``imports`` can use."""
    found = set()
    for node_type in ("t.Plain", "t.V14", "t.V15"):
        text = (f"tosca_definitions_version: cloudify_dsl_{dsl}\nimports: [cloudify/types/types.yaml, '{imports}']\n"
                f"node_templates:\n  n: {{type: {node_type}}}\n")
        try:
            parse_file(write("probe.yaml", text))
            found.add(node_type)
        except ValidationFailed:
            pass
    return found


def test_a_source_folder_upload_answers_plugin_imports_by_dsl_version(cli, write, source):
    uploaded = cli("plugin", "upload", source, "-f", "json")
    assert uploaded.exit_code == 0, uploaded.stderr
    assert json.loads(uploaded.stdout) == {"package_name": "my-plugin", "package_version": "1.0", "package": "source",
                                           "yaml_files": ["plugin.yaml", "plugin_1_4.yaml", "plugin_1_5.yaml"],
                                           "visibility": "tenant", "tenant_name": "default_tenant"}
    assert _types(write, "1_3", "plugin:my-plugin") == {"t.Plain"}
    assert _types(write, "1_4", "plugin:my-plugin") == {"t.V14"}
    assert _types(write, "1_5", "plugin:my-plugin?version=1.0") == {"t.V15"}
    listed = json.loads(cli("plugin", "list", "-f", "json").stdout)
    assert [(p["package_name"], p["package_version"]) for p in listed] == [("my-plugin", "1.0")]


def _wheel(tmp_path, version: str):
    path = tmp_path / f"my_plugin-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("my_plugin/__init__.py", "")
    return path


def _wagon(tmp_path, version: str):
    path = tmp_path / f"my_plugin-{version}.wgn"
    data = json.dumps({"package_name": "my-plugin", "package_version": version}).encode()
    with tarfile.open(path, "w:gz") as archive:
        info = tarfile.TarInfo("my_plugin/package.json")
        info.size = len(data)
        archive.addfile(info, io.BytesIO(data))
    return path


def test_wheels_and_wagons_and_versions(cli, write, tmp_path):
    yaml_20 = write("y20/plugin.yaml", _plugin_yaml("2.0", "1_3", "t.V14"))
    yaml_10 = write("y10/plugin.yaml", _plugin_yaml("1.0", "1_3", "t.Plain"))
    assert cli("plugin", "upload", _wagon(tmp_path, "2.0"), "-y", yaml_20).exit_code == 0
    wheel = cli("plugin", "upload", _wheel(tmp_path, "1.0"), "--yaml-path", yaml_10, "-f", "json")
    assert json.loads(wheel.stdout)["package"] == "my_plugin-1.0-py3-none-any.whl"
    assert _types(write, "1_4", "plugin:my-plugin") == {"t.V14"}  # the newest
    assert _types(write, "1_4", "plugin:my-plugin?version=1.0") == {"t.Plain"}
    assert _types(write, "1_4", "plugin:my-plugin?version= >=1.5") == {"t.V14"}  # specifiers, as Cloudify's
    assert _types(write, "1_4", "plugin:my-plugin?version=<2,>0.9") == {"t.Plain"}
    assert _types(write, "1_4", "plugin:my-plugin?version=>=3") == set()
    assert cli("plugin", "delete", "my-plugin", "--version", "2.0").exit_code == 0
    assert _types(write, "1_4", "plugin:my-plugin") == {"t.Plain"}


def test_plugin_urls_and_import_rules_resolve_locally(cli, write, tmp_path, home):
    yaml = write("aws/plugin.yaml", _plugin_yaml("3.1", "1_3", "t.Plain", package="cloudify-aws-plugin"))
    assert cli("plugin", "upload", _wheel(tmp_path, "3.1"), "-y", yaml).exit_code == 0
    for url in ("https://github.com/cloudify-cosmo/cloudify-aws-plugin/releases/download/3.1/plugin.yaml",
                "http://www.getcloudify.org/spec/aws-plugin/1.4.1/plugin.yaml"):
        assert _types(write, "1_4", url) == {"t.Plain"}
    mirror = tmp_path / "mirror"
    (mirror / "lib").mkdir(parents=True)
    (mirror / "lib" / "common.yaml").write_text("tosca_definitions_version: cloudify_dsl_1_4\n"
                                                "node_types:\n  t.V15: {derived_from: cloudify.nodes.Root}\n")
    (home / "stoker.conf").write_text(f"[imports]\nrules =\n    https://example.com/blueprints/ {mirror}\n")
    assert _types(write, "1_4", "https://example.com/blueprints/lib/common.yaml") == {"t.V15"}


def test_what_cannot_be_resolved_or_uploaded_is_one_clear_error(cli, write, tmp_path, source):
    with pytest.raises(ValidationFailed) as failure:
        parse_file(write("b.yaml", "tosca_definitions_version: cloudify_dsl_1_4\n"
                                   "imports: ['plugin:nobody', 'plugin:my-plugin?version=9', 'https://x.org/a.yaml']\n"))
    assert [p.message for p in failure.value.problems] == [
        "cannot import plugin:nobody: plugin nobody is not uploaded (stoker plugin upload)",
        "cannot import plugin:my-plugin?version=9: plugin my-plugin 9 is not uploaded (stoker plugin upload)",
        "cannot import https://x.org/a.yaml: imports over the network are not fetched (use a relative path, the "
        "standard types URL, plugin:NAME of an uploaded plugin, or an [imports] rule)"]
    no_yaml = cli("plugin", "upload", _wheel(tmp_path, "1.0"))
    assert no_yaml.exit_code == 1 and "a plugin needs its plugin YAML (--yaml-path)" in no_yaml.stderr
    bogus = tmp_path / "bogus.wgn"
    bogus.write_bytes(b"not a tar")
    bad = cli("plugin", "upload", bogus, "-y", source / "plugin.yaml")
    assert bad.exit_code == 1 and "bogus.wgn is not a wagon" in bad.stderr and "Traceback" not in bad.stderr


def test_the_database_s_catalog_is_unpacked_on_every_host_that_reads_it(tmp_path, source):
    """Two homes sharing one database: what one uploads, deletes or uploads again, the other follows;
    a plugin uploaded to a home only (before the catalog was in the database) stays there."""
    from stoker.blueprint.plugin_catalog import DIGEST_FILE, PluginCatalog
    from stoker.store.db import open_store
    from stoker.store.plugin_packages import PluginPackages

    store = open_store(f"sqlite:///{tmp_path / 'shared.db'}")
    api_host = PluginCatalog(tmp_path / "api" / "plugins", PluginPackages(store))
    worker = PluginCatalog(tmp_path / "worker" / "plugins", PluginPackages(store))
    PluginCatalog(tmp_path / "worker" / "plugins").upload(source, [source / "plugin.yaml"])  # local only
    api_host.upload(source, [source / "plugin_1_5.yaml"])
    found = worker.find("my-plugin", "1.0")
    assert found is not None and found.folder == tmp_path / "worker" / "plugins" / "@default" / "my-plugin" / "1.0"
    assert [p.name for p in found.yaml_files] == ["plugin_1_5.yaml"]  # the stored copy replaced the local one
    assert (found.folder / "package" / "my_plugin" / "__init__.py").is_file()
    (source / "my_plugin" / "__init__.py").write_text("VERSION = 2\n")
    (source / "plugin.yaml").write_text(_plugin_yaml("1.1", "1_3", "t.Plain"))
    api_host.upload(source, [source / "plugin.yaml"])
    local_only = tmp_path / "worker" / "plugins" / "my-plugin" / "0.9"
    (local_only / "package").mkdir(parents=True)
    (local_only / "plugin.yaml").write_text(_plugin_yaml("0.9", "1_3", "t.Plain"))
    assert [(p.name, p.version) for p in worker.list()] == [("my-plugin", "0.9"), ("my-plugin", "1.0"),
                                                            ("my-plugin", "1.1")]
    (source / "my_plugin" / "__init__.py").write_text("VERSION = 3\n")
    api_host.upload(source, [source / "plugin_1_5.yaml"])  # 1.0 again, other files: the worker's copy follows
    assert (worker.find("my-plugin", "1.0").folder / "package" / "my_plugin" / "__init__.py").read_text() \
        == "VERSION = 3\n"
    api_host.delete("my-plugin", "1.1")
    assert [p.version for p in worker.list()] == ["0.9", "1.0"]
    assert (worker.find("my-plugin", "1.0").folder / DIGEST_FILE).read_text() == \
        (api_host.find("my-plugin", "1.0").folder / DIGEST_FILE).read_text()
    store.close()


def test_stoker_plugin_download_gives_back_the_package_and_the_yaml_by_dsl_version(cli, source, tmp_path):
    """A source folder comes back as a tar.gz of its files; --yaml picks as plugin: imports do; --full-archive
    zips the package and the YAMLs."""
    assert cli("plugin", "upload", source).exit_code == 0
    out = tmp_path / "out"
    out.mkdir()
    got = cli("plugin", "download", "my-plugin", "-o", out)
    assert got.exit_code == 0, got.stderr
    with tarfile.open(got.stdout.strip()) as archive:
        assert "my_plugin/__init__.py" in archive.getnames() and "plugin_1_4.yaml" in archive.getnames()
    yaml = cli("plugin", "download", "my-plugin", "--version", "1.0", "--yaml", "--dsl-version", "1_4", "-o", out)
    assert yaml.stdout.strip() == str(out / "plugin_1_4.yaml")
    assert (out / "plugin_1_4.yaml").read_text() == (source / "plugin_1_4.yaml").read_text()
    full = cli("plugin", "download", "my-plugin", "--full-archive", "-o", out / "all.zip")
    with zipfile.ZipFile(full.stdout.strip()) as archive:
        assert sorted(archive.namelist()) == ["my-plugin-1.0.tar.gz", "plugin.yaml", "plugin_1_4.yaml",
                                              "plugin_1_5.yaml"]
    missing = cli("plugin", "download", "other-plugin")
    assert missing.exit_code == 1 and "plugin other-plugin is not uploaded" in missing.stderr


def test_stoker_plugin_delete_refuses_a_plugin_a_blueprint_uses_unless_forced_as_cfy(cli, write, tmp_path):
    for version in ("1.0", "2.0"):
        yaml = write(f"y{version}/plugin.yaml", _plugin_yaml(version, "1_3", "t.Plain"))
        cli("plugin", "upload", _wheel(tmp_path, version), "-y", yaml).expect(0)
    blueprint = write("bp/blueprint.yaml", "tosca_definitions_version: cloudify_dsl_1_4\nimports: "
                      "[cloudify/types/types.yaml, 'plugin:my-plugin?version=1.0']\nnode_templates:\n  n: {type: t.Plain}\n")
    cli("blueprint", "upload", blueprint, "-b", "uses").expect(0)
    refused = cli("plugin", "delete", "my-plugin", "--version", "1.0").expect(1)
    assert re.search(r'Plugin "[0-9a-f-]{36}" is currently in use in blueprints: uses\. You can "force" plugin '
                     r'removal if needed\.', refused.stderr), refused.stderr
    cli("plugin", "delete", "my-plugin", "--version", "2.0").expect(0)  # no blueprint uses it
    cli("plugin", "delete", "my-plugin", "--version", "1.0", "--force").expect(0)
    assert json.loads(cli("plugin", "list", "-f", "json").stdout) == []


def test_a_plugin_imported_under_two_specs_is_imported_twice(cli, write, source):
    """As Cloudify keys imports by what they say: ``plugin:X?version=>0`` and ``plugin:X?version=1.0``
    both find the one uploaded plugin, and its plugin is then defined twice (cloudify-manager's
    blueprint_with_plugins_from_catalog_conflicting_versions); the same spec twice is one import."""
    assert cli("plugin", "upload", source).exit_code == 0
    head = "tosca_definitions_version: cloudify_dsl_1_4\nimports: [cloudify/types/types.yaml, "
    with pytest.raises(ValidationFailed) as failure:
        parse_file(write("b.yaml", head + "'plugin:my-plugin?version= >0', 'plugin:my-plugin?version=1.0']\n"))
    assert [(p.path, p.code) for p in failure.value.problems] == [(("plugins", "mine"), "import-conflict"),
                                                                   (("node_types", "t.V14"), "import-conflict")]
    plan = parse_file(write("c.yaml", head + "'plugin:my-plugin?version=1.0', 'plugin:my-plugin?version=1.0']\n"
                                             "node_templates:\n  n: {type: t.V14}\n"))
    assert plan["nodes"][0]["type"] == "t.V14"
