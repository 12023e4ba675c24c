"""Python plugin operations run unchanged: a plugin written here (a source folder and a wheel) is
uploaded, imported with plugin:, and its tasks run in the plugin's own virtualenv with Cloudify's
@operation keyword inputs, ctx and exceptions."""

from __future__ import annotations

import io
import json
import tarfile
import textwrap
import zipfile

import pytest

from stoker.blueprint.plugin_catalog import PluginCatalog
from stoker.errors import Conflict

pytestmark = pytest.mark.slow  # plugin virtualenvs made with pip

TASKS = '''
import json, sys
import cloudify, cloudify.dispatch
from cloudify import ctx as global_ctx
from cloudify.decorators import operation
from cloudify.exceptions import NonRecoverableError, OperationRetry
from cloudify.state import ctx_parameters


@operation
def create(ctx, size, greeting="hello", **kwargs):
    props = ctx.instance.runtime_properties
    props["size"] = size * 2
    props["greeting"] = greeting
    props["node_port"] = ctx.node.properties["port"]
    props["region"] = ctx.plugin.properties["region"]["value"]
    props["plugin"] = [ctx.plugin.package_name, ctx.plugin.package_version]
    props["operation"] = ctx.operation.name
    props["deployment"] = ctx.deployment.id
    props["parameters"] = sorted(ctx_parameters)
    props["resource"] = ctx.get_resource("data/motd.txt").decode().strip()
    props["dirty"] = props.dirty
    props["isolated"] = not any("stoker" in p and "site-packages" in p for p in sys.path)
    props["real_cloudify"] = "plugin-envs" in cloudify.__file__ and hasattr(cloudify, "dispatch")
    props["scratch"] = "gone at update"
    ctx.instance.update()
    ctx.logger.info("created %s", ctx.instance.id)
    return {"made": size}


@operation
def configure(ctx, **kwargs):
    if ctx.operation.retry_number < 2:
        raise OperationRetry("not yet", retry_after=0)
    ctx.instance.runtime_properties["tries"] = ctx.operation.retry_number
    del ctx.instance.runtime_properties["scratch"]


def start(**kwargs):
    global_ctx.instance.runtime_properties["started"] = True


@operation
def stop(ctx, **kwargs):
    raise NonRecoverableError("cannot stop this")


@operation
def link(ctx, **kwargs):
    """A relationship's source side: both ends' instances, written from here."""
    ctx.source.instance.runtime_properties["linked_to"] = [ctx.target.node.id, ctx.target.instance.id]
    ctx.target.instance.runtime_properties["linked_from"] = ctx.source.node.id


@operation
def linked(ctx, **kwargs):
    """...and its target side."""
    ctx.target.instance.runtime_properties["established"] = [ctx.type, ctx.source.node.properties["port"]]
'''

PLUGIN_YAML = """\
tosca_definitions_version: cloudify_dsl_1_5
plugins:
  demo:
    executor: central_deployment_agent
    package_name: demo-plugin
    package_version: '1.0'
    properties:
      region: {type: string, description: where}
node_types:
  demo.Thing:
    derived_from: cloudify.nodes.Root
    properties:
      port: {default: 80}
    interfaces:
      cloudify.interfaces.lifecycle:
        create:
          implementation: demo.demo_plugin.tasks.create
          inputs: {size: {default: 1}}
        configure: demo.demo_plugin.tasks.configure
        start: demo.demo_plugin.tasks.start
        stop: demo.demo_plugin.tasks.stop
"""

BLUEPRINT = """\
tosca_definitions_version: cloudify_dsl_1_5
imports:
  - cloudify/types/types.yaml
  - plugin:demo-plugin:
      region: eu-west
node_templates:
  peer:
    type: cloudify.nodes.Root
  thing:
    type: demo.Thing
    properties: {port: 8080}
    interfaces:
      cloudify.interfaces.lifecycle:
        create:
          inputs: {size: 21}
    relationships:
      - type: cloudify.relationships.connected_to
        target: peer
        source_interfaces:
          cloudify.interfaces.relationship_lifecycle:
            preconfigure: demo.demo_plugin.tasks.link
        target_interfaces:
          cloudify.interfaces.relationship_lifecycle:
            establish: demo.demo_plugin.tasks.linked
"""


def _source(tmp_path):
    folder = tmp_path / "demo-plugin"
    (folder / "demo_plugin").mkdir(parents=True)
    (folder / "demo_plugin" / "__init__.py").write_text("")
    (folder / "demo_plugin" / "tasks.py").write_text(textwrap.dedent(TASKS))
    (folder / "plugin_1_5.yaml").write_text(PLUGIN_YAML)
    return folder


def _install(engine, tmp_path, blueprint=BLUEPRINT, **options):
    """Upload ``blueprint``, create its deployment and install it (``options``: the start's, ``dry_run``...)."""
    folder = tmp_path / "bp"
    (folder / "data").mkdir(parents=True)
    (folder / "data" / "motd.txt").write_text("welcome\n")
    (folder / "blueprint.yaml").write_text(blueprint)
    engine.blueprints.upload(folder / "blueprint.yaml", "bp")
    engine.blueprints.deployments.create("dep", "bp")
    return engine.executions.start("install", "dep", {"task_retries": 3, "task_retry_interval": 0}, **options)


def _runtime(engine, node="thing"):
    [instance] = [i for i in engine.blueprints.deployments.node_instances("dep") if i["node_id"] == node]
    return instance["state"], instance["runtime_properties"]


def _instance_id(engine, node):
    return next(i["id"] for i in engine.blueprints.deployments.node_instances("dep") if i["node_id"] == node)


def test_a_plugin_task_runs_with_cloudify_ctx_inputs_and_exceptions(engine, tmp_path, plugin_wheels):
    PluginCatalog(tmp_path / "home" / "plugins").upload(_source(tmp_path), [])
    execution = _install(engine, tmp_path)
    assert execution["status"] == "terminated", execution
    state, props = _runtime(engine)
    assert state == "started"
    assert props == {"size": 42, "greeting": "hello", "node_port": 8080, "region": "eu-west",
                     "plugin": ["demo-plugin", "1.0"], "operation": "cloudify.interfaces.lifecycle.create",
                     "deployment": "dep", "parameters": ["ctx", "size"], "resource": "welcome", "dirty": True,
                     "isolated": True, "real_cloudify": True, "tries": 2, "started": True,
                     "linked_to": ["peer", _instance_id(engine, "peer")]}
    assert _runtime(engine, "peer") == ("started", {"linked_from": "thing",
                                                   "established": ["relationship-instance", 8080]})
    messages = [e["message"] for e in engine.executions.events(execution["id"], include_logs=True)]
    assert any(m.startswith("created thing_") for m in messages)
    failed = engine.executions.start("uninstall", "dep")
    assert failed["status"] == "failed" and "cannot stop this" in failed["error"]


def _wheel(folder, name, version, files):
    wheel = folder / f"{name.replace('-', '_')}-{version}-py3-none-any.whl"
    info = f"{name.replace('-', '_')}-{version}.dist-info"
    with zipfile.ZipFile(wheel, "w") as archive:
        for inside, text in files.items():
            archive.writestr(inside, text)
        archive.writestr(f"{info}/METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
        archive.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
                                          "Tag: py3-none-any\n")
        archive.writestr(f"{info}/RECORD", "")
    return wheel


def _demo_wheel(tmp_path, source):
    return _wheel(tmp_path, "demo-plugin", "1.0", {"demo_plugin/__init__.py": "",
                                                   "demo_plugin/tasks.py": (source / "demo_plugin" / "tasks.py").read_text()})


def test_a_wheel_is_installed_into_the_plugin_virtualenv(engine, tmp_path, plugin_wheels):
    source = _source(tmp_path)
    PluginCatalog(tmp_path / "home" / "plugins").upload(_demo_wheel(tmp_path, source), [source / "plugin_1_5.yaml"])
    assert _install(engine, tmp_path)["status"] == "terminated"
    site = next((tmp_path / "home" / "plugin-envs" / "demo-plugin" / "1.0").glob("lib/python*/site-packages"))
    assert (site / "demo_plugin" / "tasks.py").is_file()
    assert _runtime(engine)[1]["size"] == 42


def test_a_wagon_runs_from_its_wheels_with_the_virtualenv_s_cloudify_common(engine, tmp_path, plugin_wheels):
    """A wagon bundles the cloudify-common it was built with: the virtualenv keeps its own (7.0.5)."""
    source = _source(tmp_path)
    (tmp_path / "wheels").mkdir()
    wheels = [_demo_wheel(tmp_path / "wheels", source),
              _wheel(tmp_path / "wheels", "cloudify-common", "6.0.0", {"cloudify/__init__.py": "raise ImportError"})]
    wagon = tmp_path / "demo_plugin-1.0-py311-none-linux_x86_64.wgn"
    with tarfile.open(wagon, "w:gz") as archive:
        data = json.dumps({"package_name": "demo-plugin", "package_version": "1.0"}).encode()
        info = tarfile.TarInfo("demo_plugin/package.json")
        info.size = len(data)
        archive.addfile(info, io.BytesIO(data))
        for wheel in wheels:
            archive.add(wheel, f"demo_plugin/wheels/{wheel.name}")
    PluginCatalog(tmp_path / "home" / "plugins").upload(wagon, [source / "plugin_1_5.yaml"])
    assert _install(engine, tmp_path)["status"] == "terminated"
    state, props = _runtime(engine)
    assert (state, props["size"], props["real_cloudify"]) == ("started", 42, True)


def test_an_operation_of_a_plugin_not_uploaded_fails_clearly(engine, tmp_path):
    """The plugin YAML is beside the blueprint, the plugin itself was never uploaded."""
    (tmp_path / "bp" / "plugin").mkdir(parents=True)
    (tmp_path / "bp" / "plugin" / "plugin.yaml").write_text(PLUGIN_YAML.replace(
        "    properties:\n      region: {type: string, description: where}\n", ""))
    blueprint = BLUEPRINT.replace("  - plugin:demo-plugin:\n      region: eu-west\n", "  - plugin/plugin.yaml\n")
    execution = _install(engine, tmp_path, blueprint)
    assert execution["status"] == "failed"
    assert "plugin demo-plugin 1.0 is not uploaded (stoker plugin upload)" in execution["error"]


def test_another_tenants_plugin_does_not_run_for_a_blueprint_declaring_it_itself(engine, tmp_path):
    """Tenant team-a's plugin, declared by team-b's blueprint in a plugin YAML of its own (no plugin:
    import to refuse it): the task finds no plugin team-b may use."""
    from stoker.store.plugin_packages import Owner

    PluginCatalog.at_home(create=True, store=engine.store).upload(_source(tmp_path), [],
                                                                  Owner("team-a", "tenant", "ann"))
    (tmp_path / "bp" / "plugin").mkdir(parents=True)
    (tmp_path / "bp" / "plugin" / "plugin.yaml").write_text(PLUGIN_YAML.replace(
        "    properties:\n      region: {type: string, description: where}\n", ""))
    blueprint = BLUEPRINT.replace("  - plugin:demo-plugin:\n      region: eu-west\n", "  - plugin/plugin.yaml\n")
    execution = _install(engine.for_project("team-b"), tmp_path, blueprint)
    assert execution["status"] == "failed"
    assert "plugin demo-plugin 1.0 is not uploaded (stoker plugin upload)" in execution["error"]


#: PLUGIN_YAML's plugin (no properties), its node type with one task
TINY_YAML = (PLUGIN_YAML.replace("    properties:\n      region: {type: string, description: where}\n", "", 1)
             .split("    properties:")[0] + "    interfaces:\n      cloudify.interfaces.lifecycle:\n"
             "        create: demo.demo_plugin.tasks.create\n")
TINY_BLUEPRINT = ("tosca_definitions_version: cloudify_dsl_1_5\nimports: [cloudify/types/types.yaml, "
                  "'plugin:demo-plugin']\nnode_templates:\n  thing: {type: demo.Thing}\n")


def _tiny_plugin(folder, whose: str):
    """demo-plugin 1.0 whose create task writes ``whose`` to the instance."""
    (folder / "demo_plugin").mkdir(parents=True)
    (folder / "demo_plugin" / "__init__.py").write_text("")
    (folder / "demo_plugin" / "tasks.py").write_text(
        "from cloudify.decorators import operation\n\n\n@operation\ndef create(ctx, **kwargs):\n"
        f"    ctx.instance.runtime_properties['whose'] = {whose!r}\n")
    (folder / "plugin_1_5.yaml").write_text(TINY_YAML)
    return folder


def test_two_tenants_each_run_their_own_plugin_of_one_name_and_version(engine, tmp_path, plugin_wheels):
    """team-a and team-b each upload demo-plugin 1.0 (other code): each tenant's plugin: import and tasks
    take its own, from a folder and a virtualenv of its own; the same tenant uploading it again replaces it."""
    from stoker.store.plugin_packages import Owner

    catalog = PluginCatalog.at_home(create=True, store=engine.store)
    for tenant in ("team-a", "team-b"):
        catalog.upload(_tiny_plugin(tmp_path / tenant / "demo-plugin", tenant), [], Owner(tenant, "tenant", None))
    for tenant in ("team-a", "team-b"):
        project = engine.for_project(tenant)
        execution = _install(project, tmp_path / f"run-{tenant}", TINY_BLUEPRINT)
        assert execution["status"] == "terminated", execution["error"]
        assert _runtime(project) == ("started", {"whose": tenant})
    home = tmp_path / "home"
    assert sorted(p.parent.parent.name for p in (home / "plugin-envs").glob("*/demo-plugin/1.0")) == [
        "@team-a", "@team-b"]
    with pytest.raises(Conflict):
        catalog.upload(tmp_path / "team-a" / "demo-plugin", [], Owner("team-a", "tenant", None), replace=False)


def test_a_private_plugin_runs_only_for_deployments_of_those_who_see_it(engine, tmp_path, plugin_wheels):
    """ann's private plugin: a deployment amy (a user of the tenant) made does not run it, as the API would
    not show it to her; ann's and the tenant manager's do (the rule of the API's routes: ``viewer_of``)."""
    from stoker.api.cloudify.users import UserStore
    from stoker.store.plugin_packages import Owner

    users = UserStore(engine.store.engine)
    for name, role in (("ann", "user"), ("amy", "user"), ("meg", "manager")):
        users.create(name, "secret-pw", "team-a", role)
    PluginCatalog.at_home(create=True, store=engine.store).upload(
        _tiny_plugin(tmp_path / "demo-plugin", "ann"), [], Owner("team-a", "private", "ann"))
    project = engine.for_project("team-a")
    (tmp_path / "bp").mkdir()
    (tmp_path / "bp" / "blueprint.yaml").write_text(TINY_BLUEPRINT)
    project.blueprints.upload(tmp_path / "bp" / "blueprint.yaml", "bp")  # here, as the host: it sees all
    ended = {}
    for user in ("amy", "ann", "meg"):
        project.blueprints.deployments.create(f"dep-{user}", "bp", created_by=user)
        ended[user] = project.executions.start("install", f"dep-{user}")
    assert ended["amy"]["status"] == "failed"
    assert "plugin demo-plugin 1.0 is not uploaded (stoker plugin upload)" in ended["amy"]["error"]
    assert (ended["ann"]["status"], ended["meg"]["status"]) == ("terminated", "terminated")
