"""Which resource types an API caller may use: local types off unless the operator allows
them, Heat's admin-only types for admin projects, and a rule table in stoker.conf."""

from __future__ import annotations

import time
import warnings

import pytest

with warnings.catch_warnings():  # starlette's notice about httpx versions
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from stoker.api.app import create_app
from stoker.engine.engine import Engine
from stoker.resources.policy import PolicyError, TypePolicy
from stoker.resources.resource import Resource

from .helpers import heat_error

COMMAND = {"heat_template_version": "2018-08-31",
           "resources": {"run": {"type": "Stoker::Local::Command", "properties": {"create": "true"}}}}


def command_template(marker) -> dict:
    return {**COMMAND, "resources": {"run": {"type": "Stoker::Local::Command",
                                             "properties": {"create": f"touch {marker}"}}}}


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("STOKER_HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    return tmp_path / "home"


def client(tmp_path, **options) -> TestClient:
    return TestClient(create_app(f"sqlite:///{tmp_path / 's.db'}", **options))


def create(api: TestClient, project: str, template: dict, name: str = "s", **extra):
    return api.post(f"/v1/{project}/stacks", json={"stack_name": name, "template": template, **extra})


def wait_done(api: TestClient, project: str, name: str) -> dict:
    for _ in range(400):
        stack = api.get(f"/v1/{project}/stacks/{name}").json()["stack"]
        if not stack["stack_status"].endswith("IN_PROGRESS"):
            return stack
        time.sleep(0.05)
    raise AssertionError(f"{name} still in progress")


def test_api_refuses_a_local_command_naming_the_type_and_the_setting(tmp_path, home):
    api = client(tmp_path)
    marker = tmp_path / "ran"
    error = heat_error(create(api, "alpha", command_template(marker)), 403)  # as Heat's policy answers
    assert error["type"] == "Forbidden" and "Stoker::Local::Command" in error["message"]
    assert "--allow-local-resources" in error["message"] and "local_resource_projects" in error["message"]
    assert not marker.exists()
    # validation says the same, and so does a type mapped to it through the environment
    assert "Stoker::Local::Command" in heat_error(api.post("/v1/alpha/validate", json={
        "template": command_template(marker)}), 403)["message"]
    aliased = {**COMMAND, "resources": {"run": {"type": "My::Innocent", "properties": {"create": "true"}}}}
    error = heat_error(create(api, "alpha", aliased, environment={
        "resource_registry": {"My::Innocent": "Stoker::Local::Command"}}), 403)
    assert "My::Innocent (mapped to Stoker::Local::Command)" in error["message"]


def test_api_refuses_local_types_inside_provider_templates_and_groups(tmp_path, home):
    api = client(tmp_path)
    child = ("heat_template_version: 2018-08-31\nresources:\n  f:\n    type: Stoker::Local::File\n"
             "    properties: {path: /tmp/x, content: owned}\n")
    nested = {"heat_template_version": "2018-08-31", "resources": {"n": {"type": "child.yaml"}}}
    error = heat_error(create(api, "alpha", nested, files={"child.yaml": child}), 403)
    assert "Stoker::Local::File" in error["message"]
    group = {"heat_template_version": "2018-08-31", "resources": {"g": {
        "type": "OS::Heat::ResourceGroup",
        "properties": {"count": 2, "resource_def": {"type": "Stoker::Local::Command",
                                                   "properties": {"create": "true"}}}}}}
    assert "Stoker::Local::Command" in heat_error(create(api, "alpha", group, name="g"), 403)["message"]


def test_allow_local_resources_turns_them_on(tmp_path, home):
    api = client(tmp_path, allow_local_resources=True)
    marker = tmp_path / "ran"
    assert create(api, "alpha", command_template(marker)).status_code == 201
    assert wait_done(api, "alpha", "s")["stack_status"] == "CREATE_COMPLETE"
    assert marker.exists()


def test_per_project_allow_list_in_stoker_conf(tmp_path, home):
    (home / "stoker.conf").write_text("[api]\nlocal_resource_projects = ops, infra\n")
    api = client(tmp_path)
    assert create(api, "ops", command_template(tmp_path / "ops")).status_code == 201
    assert wait_done(api, "ops", "s")["stack_status"] == "CREATE_COMPLETE"
    error = heat_error(create(api, "alpha", command_template(tmp_path / "alpha")), 403)
    assert "'alpha'" in error["message"]
    assert not (tmp_path / "alpha").exists()


def test_rule_table_denies_and_reserves_types_for_admins(tmp_path, home):
    (home / "stoker.conf").write_text(
        "[api]\nadmin_projects = admin\n[resource_types]\nOS::Heat::RandomString = !\n"
        "resource_types:OS::Heat::TestResource = rule:project_admin\n")
    api = client(tmp_path)
    random = {"heat_template_version": "2018-08-31", "resources": {"r": {"type": "OS::Heat::RandomString"}}}
    assert "OS::Heat::RandomString is not allowed" in heat_error(create(api, "alpha", random), 403)["message"]
    test = {"heat_template_version": "2018-08-31", "resources": {"t": {"type": "OS::Heat::TestResource"}}}
    assert "admin projects only" in heat_error(create(api, "alpha", test, name="t"), 403)["message"]
    mixed = {**test, "resources": {**test["resources"], "bad": {"type": "OS::Heat::Value"}}}
    assert heat_error(create(api, "alpha", mixed, name="m"), 400)["type"] == "StackValidationFailed"
    assert create(api, "admin", test, name="t").status_code == 201
    assert wait_done(api, "admin", "t")["stack_status"] == "CREATE_COMPLETE"


def test_a_bad_rule_is_a_clear_error(home):
    (home / "stoker.conf").write_text("[resource_types]\nOS::Heat::None = rule:whoever\n")
    with pytest.raises(PolicyError, match="OS::Heat::None: unknown rule"):
        TypePolicy.from_config()


def test_plugin_types_acting_on_the_host_are_local(tmp_path, home):
    class Shell(Resource):
        acts_on_host = True

    policy = TypePolicy()
    assert "acts on the server host" in policy.refusal(["Acme::Shell"], Shell, "alpha")
    assert policy.refusal(["Acme::Shell"], Shell, "alpha") is not None
    assert TypePolicy(local_projects=True).refusal(["Acme::Shell"], Shell, "alpha") is None
    assert policy.refusal(["OS::Nova::Flavor"], Resource, "alpha")  # Heat's admin-only default
    assert policy.refusal(["OS::Keystone::Project"], Resource, "alpha")  # a wildcard rule


def test_the_cli_engine_keeps_local_types(tmp_path, home):
    engine = Engine(db_url=f"sqlite:///{tmp_path / 'cli.db'}")
    marker = tmp_path / "cli-ran"
    result = engine.create_stack("s", command_template(marker))
    assert result["stack_status"] == "CREATE_COMPLETE" and marker.exists()


def test_heats_default_rules_apply_to_the_simulated_openstack_types(tmp_path, home):
    (home / "stoker.conf").write_text("[api]\nadmin_projects = admin\n")
    api = client(tmp_path)
    flavor = {"heat_template_version": "2018-08-31",
              "resources": {"f": {"type": "OS::Nova::Flavor", "properties": {"ram": 512, "vcpus": 1}}}}
    assert "admin projects only" in heat_error(create(api, "alpha", flavor, name="f"), 403)["message"]
    assert create(api, "admin", flavor, name="f").status_code == 201
    assert wait_done(api, "admin", "f")["stack_status"] == "CREATE_COMPLETE"


def test_policy_comes_first_for_listed_types_not_installed(tmp_path, home):
    # Heat answers 403 for a type its policy reserves even where the type is not installed
    (home / "stoker.conf").write_text("[resource_types]\nMy::Absent::Type = !\n")
    api = client(tmp_path)
    for name, kind in (("flavor", "OS::Nova::Flavor"), ("absent", "My::Absent::Type")):
        template = {"heat_template_version": "2018-08-31", "resources": {"r": {"type": kind}}}
        refused = heat_error(create(api, "alpha", template, name=name), 403)
        assert kind in refused["message"] and refused["type"] == "Forbidden"
    unknown = {"heat_template_version": "2018-08-31", "resources": {"r": {"type": "My::Other::Type"}}}
    assert "could not be found" in heat_error(create(api, "alpha", unknown, name="u"), 400)["message"]
