"""Secrets (encrypted at rest, hidden ones masked), labels, and capabilities across deployments."""

from __future__ import annotations

import sqlite3

import pytest

from stoker.errors import Conflict


def test_secret_commands(cli, tmp_path):
    cli("secret", "create", "api_key", "-s", "first-value").expect(0)
    assert cli("secret", "get", "api_key", "-f", "json").expect(0).json["value"] == "first-value"
    assert "already exists" in cli("secret", "create", "api_key", "-s", "x").expect(1).stderr
    cli("secret", "create", "api_key", "-s", "second-value", "--update-if-exists").expect(0)
    assert cli("secret", "get", "api_key", "-f", "json").expect(0).json["value"] == "second-value"
    cli("secret", "create", "token", "-s", "top-secret-token", "--hidden").expect(0)
    shown = cli("secret", "get", "token", "-f", "json").expect(0)
    assert shown.json["value"] == "******" and "top-secret-token" not in shown.output
    cli("secret", "update", "token", "-s", "newer-token").expect(0)
    listed = cli("secret", "list", "-f", "json").expect(0).json
    assert [(s["key"], s["is_hidden_value"]) for s in listed] == [("api_key", False), ("token", True)]
    assert all("value" not in s for s in listed)

    # at rest, in the database file, no value is in clear
    database = sqlite3.connect(tmp_path / "stoker.db")
    stored = database.execute("SELECT value FROM secret").fetchall()
    database.close()
    assert len(stored) == 2
    raw = (tmp_path / "stoker.db").read_bytes() + b"".join(v.encode() for (v,) in stored)
    for clear in (b"second-value", b"newer-token", b"top-secret-token", b"first-value"):
        assert clear not in raw

    cli("secret", "delete", "api_key").expect(0)
    assert "not found" in cli("secret", "get", "api_key").expect(1).stderr


def test_secret_key_file_is_private(engine, home):
    engine.blueprints.secrets.create("k", "v")
    key = home / "secret.key"
    assert key.is_file() and key.stat().st_mode & 0o777 == 0o600


ENVIRONMENT = """\
tosca_definitions_version: cloudify_dsl_1_4
inputs:
  region: {default: eu-west}
capabilities:
  region: {value: {get_input: region}}
  endpoints: {value: {primary: {get_input: region}, all: [a, b]}}
"""
APP = """\
tosca_definitions_version: cloudify_dsl_1_4
labels:
  tier:
    values: [backend, Backend]
blueprint_labels:
  owner: {values: [team-a]}
outputs:
  region: {value: {get_environment_capability: region}}
  second: {value: {get_environment_capability: [endpoints, all, 1]}}
  direct: {value: {get_capability: [env, endpoints, primary]}}
  tiers: {value: {get_label: tier}}
  first_tier: {value: {get_label: [tier, 0]}}
  name: {value: {get_sys: [deployment, name]}}
  tenant: {value: {get_sys: [tenant, name]}}
"""


def test_labels_and_environment_capabilities(cli, write):
    cli("blueprint", "upload", write("env.yaml", ENVIRONMENT), "-b", "env").expect(0)
    cli("deployment", "create", "env", "-b", "env", "-i", "region=us-east").expect(0)
    cli("blueprint", "upload", write("app.yaml", APP), "-b", "app").expect(0)
    assert cli("blueprint", "get", "app", "-f", "json").expect(0).json["labels"] == [
        {"key": "owner", "value": "team-a"}]
    cli("deployment", "create", "app", "-b", "app", "--label", "csys-obj-parent:env", "--label", "TIER:api",
        "--display-name", "The App").expect(0)
    outputs = cli("deployment", "outputs", "app", "-f", "json").expect(0).json
    assert outputs == {"region": "us-east", "second": "b", "direct": "us-east",
                       "tiers": ["Backend", "api", "backend"], "first_tier": "Backend", "name": "The App",
                       "tenant": "default_tenant"}

    labels = cli("deployment", "labels", "list", "app", "-f", "json").expect(0).json
    assert ("tier", "api") in {(label["key"], label["value"]) for label in labels}
    cli("deployment", "labels", "add", "tier:web", "app").expect(0)
    cli("deployment", "labels", "delete", "tier:api", "app").expect(0)
    assert cli("deployment", "outputs", "app", "-f", "json").expect(0).json["tiers"] == [
        "Backend", "backend", "web"]
    cli("deployment", "labels", "delete", "csys-obj-parent", "app").expect(0)
    failed = cli("deployment", "outputs", "app").expect(1)
    assert "csys-obj-parent" in failed.stderr and "get_environment_capability" in failed.stderr
    assert "no label" in cli("deployment", "labels", "delete", "nope", "app").expect(1).stderr


def test_projects_are_separate(engine, write):
    path = write("env.yaml", ENVIRONMENT)
    one, two = engine.for_project("one").blueprints, engine.for_project("two").blueprints
    one.upload(path, "env")
    two.upload(path, "env")
    one.deployments.create("d", "env")
    assert [d["id"] for d in two.deployments.list()] == []
    one.secrets.create("s", "v")
    assert two.secrets.list() == []
    with pytest.raises(Conflict):
        one.upload(path, "env")


def test_runtime_properties_are_written_optimistically(engine, write):
    from stoker.errors import StaleWrite

    service = engine.blueprints
    service.upload(write("b.yaml", "tosca_definitions_version: cloudify_dsl_1_4\n"
                                   "node_types: {t: {}}\nnode_templates:\n  n: {type: t}\n"), "b")
    service.deployments.create("d", "b")
    (instance,) = service.deployments.node_instances("d")
    assert instance["version"] == 1
    updated = service.deployments.update_node_instance(instance["id"], "d", expected_version=1,
                                                       runtime_properties={"a": 1}, state="started")
    assert (updated["version"], updated["state"], updated["runtime_properties"]) == (2, "started", {"a": 1})
    with pytest.raises(StaleWrite):
        service.deployments.update_node_instance(instance["id"], "d", expected_version=1,
                                                 runtime_properties={"a": 2})


RUNTIME_ONLY = """\
tosca_definitions_version: cloudify_dsl_1_4
inputs:
  name: {default: web}
node_types:
  t:
    properties:
      label: {default: {concat: [node-, {get_input: name}]}}
node_templates:
  n: {type: t}
outputs:
  label: {value: {get_property: [n, label]}}
  upper: {value: {string_upper: {get_input: name}}}
"""


def test_runtime_only_evaluation_keeps_functions_until_runtime(cli, engine, write):
    cli("blueprint", "upload", write("b.yaml", RUNTIME_ONLY), "-b", "b").expect(0)
    cli("deployment", "create", "static", "-b", "b").expect(0)
    cli("deployment", "create", "late", "-b", "b", "--runtime-only-evaluation").expect(0)
    deployments = engine.blueprints.deployments
    assert deployments.plan("static")["outputs"]["upper"]["value"] == "WEB"
    assert deployments.plan("late")["outputs"]["upper"]["value"] == {"string_upper": {"get_input": "name"}}
    assert deployments.nodes("late")[0]["properties"]["label"] == {"concat": ["node-", {"get_input": "name"}]}
    for name in ("static", "late"):
        assert cli("deployment", "outputs", name, "-f", "json").expect(0).json == {"label": "node-web",
                                                                                  "upper": "WEB"}
    assert cli("deployment", "get", "late", "-f", "json").expect(0).json["runtime_only_evaluation"] is True


def test_remote_url_is_refused_clearly(cli):
    """Secrets are not served over ``--url``: refused before any connection; blueprints are, and a
    server that is not there is one line too."""
    secrets = cli("--url", "http://127.0.0.1:18699/v1/default", "secret", "list")
    assert secrets.exit_code == 1 and "without --url" in secrets.stderr and "Traceback" not in secrets.output
    blueprints = cli("--url", "http://127.0.0.1:18699/v1/default", "blueprint", "list")
    assert blueprints.exit_code == 1 and "cannot reach the Stoker API" in blueprints.stderr
    assert "Traceback" not in blueprints.output


def test_environment_capabilities_are_checked_at_creation(cli, write):
    """As Cloudify's manager: no parent label, a missing parent or a capability it lacks fails the creation."""
    cli("blueprint", "upload", write("env.yaml", ENVIRONMENT), "-b", "env").expect(0)
    cli("deployment", "create", "env", "-b", "env", "-i", "region=us-east").expect(0)
    cli("blueprint", "upload", write("app.yaml", APP), "-b", "app").expect(0)
    orphan = cli("deployment", "create", "orphan", "-b", "app").expect(1)
    assert "outputs region uses get_environment_capability" in orphan.stderr and "csys-obj-parent" in orphan.stderr
    lost = cli("deployment", "create", "lost", "-b", "app", "--label", "csys-obj-parent:nowhere").expect(1)
    assert "parent deployment `nowhere`" in lost.stderr
    needy = APP.replace("get_environment_capability: region", "get_environment_capability: zone")
    cli("blueprint", "upload", write("needy.yaml", needy), "-b", "needy").expect(0)
    lacking = cli("deployment", "create", "needy", "-b", "needy", "--label", "csys-obj-parent:env").expect(1)
    assert "requested capability `zone` is not declared in deployment `env`" in lacking.stderr
    assert "Traceback" not in lacking.stderr
    assert [d["id"] for d in cli("deployment", "list", "-f", "json").expect(0).json] == ["env"]


@pytest.mark.parametrize("secret", ['pa"ss\\word', "back\\slash", 'quo"te'])
def test_a_secret_with_characters_json_escapes_is_still_masked(secret):
    from stoker.blueprint.secrets import MASK, masked_values, masker

    mask = masker([secret])
    shown = masked_values({"plain": secret, "inside": {"list": ["x", f"pre-{secret}"]}, "other": "fine"}, mask)
    assert shown == {"plain": MASK, "inside": MASK, "other": "fine"}
