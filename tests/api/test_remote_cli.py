"""`stoker --url URL --token T stack ...`: the CLI working on a remote `stoker api`."""

from __future__ import annotations

import json
import uuid

import pytest
from click.testing import CliRunner

from stoker.cli import main
from stoker.cli.remote import endpoint_of, install_remote

from .helpers import TEMPLATES

install_remote(main)


def stoker(*args: str, env: dict | None = None):
    return CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)


@pytest.fixture
def remote(noauth_server):
    endpoint = noauth_server.endpoint(f"cli-{uuid.uuid4().hex[:6]}")
    return lambda *args: stoker("--url", endpoint, *args)


def test_endpoint_of():
    assert endpoint_of("http://h:8004/v1/p") == "http://h:8004/v1/p"
    assert endpoint_of("http://h:8004/", "team") == "http://h:8004/v1/team"
    assert endpoint_of("http://h:8004/v1", "team") == "http://h:8004/v1/team"


def test_stack_lifecycle_through_the_server(remote):
    template = str(TEMPLATES / "basic.yaml")
    created = remote("stack", "create", "web", "-t", template, "-P", "label=remote", "--wait", "-f", "json")
    assert created.exit_code == 0, created.output
    info = json.loads(created.stdout)
    assert info["stack_status"] == "CREATE_COMPLETE"
    assert {o["output_key"]: o["output_value"] for o in info["outputs"]}["label"] == "remote"
    listed = json.loads(remote("stack", "list", "-f", "json").stdout)
    assert [s["stack_name"] for s in listed] == ["web"]
    shown = json.loads(remote("stack", "output", "show", "web", "label", "-f", "json").stdout)
    assert shown["output_value"] == "remote"
    updated = remote("stack", "update", "web", "--existing", "-P", "label=changed", "--wait", "-f", "json")
    assert updated.exit_code == 0, updated.output
    assert "UPDATE_COMPLETE" in updated.output
    plan = json.loads(remote("stack", "update", "web", "--existing", "-P", "length=30", "--dry-run",
                             "-f", "json").stdout)
    assert [e["resource_name"] for e in plan["replaced"]] == ["secret"]
    resources = json.loads(remote("stack", "resource", "list", "web", "-f", "json").stdout)
    assert {r["resource_name"] for r in resources} == {"secret", "holder"}
    events = json.loads(remote("stack", "event", "list", "web", "-f", "json").stdout)
    assert events[-1]["resource_status"] == "UPDATE_COMPLETE"
    assert remote("stack", "check", "web", "-f", "json").exit_code == 0
    template_shown = remote("stack", "template", "show", "web", "-f", "json")
    assert json.loads(template_shown.stdout)["description"].startswith("A random string")
    deleted = remote("stack", "delete", "web", "--yes", "--wait")
    assert deleted.exit_code == 0, deleted.output
    missing = remote("stack", "show", "web")
    assert missing.exit_code == 1 and "could not be found" in missing.output


def test_errors_are_reported_like_local_ones(remote):
    failed = remote("stack", "create", "bad", "-t", str(TEMPLATES / "invalid.yaml"))
    assert failed.exit_code == 1
    assert "OS::Heat::Nonexistent" in failed.output
    assert remote("stack", "show", "nothing").exit_code == 1


def test_token_from_the_environment(token_server):
    endpoint = token_server.endpoint("alpha")
    env = {"STOKER_URL": endpoint, "STOKER_TOKEN": token_server.tokens["alpha"]}
    listed = stoker("stack", "list", "-f", "json", env=env)
    assert listed.exit_code == 0, listed.output
    refused = stoker("stack", "list", env={"STOKER_URL": endpoint, "STOKER_TOKEN": "stk_wrong"})
    assert refused.exit_code == 1 and "token" in refused.output.lower()


def test_without_wait_the_server_goes_on_and_a_delete_cancels_the_create(remote, tmp_path):
    path = tmp_path / "slow.yaml"
    path.write_text(json.dumps({"heat_template_version": "2018-08-31", "resources": {"slow": {
        "type": "OS::Heat::TestResource", "properties": {"action_wait_secs": {"create": 600, "delete": 0}}}}}))
    created = remote("stack", "create", "slow", "-t", str(path), "-f", "json")
    assert created.exit_code == 0, created.output
    assert json.loads(created.stdout)["stack_status"] == "CREATE_IN_PROGRESS"

    deleted = remote("stack", "delete", "slow", "--yes", "--wait")
    assert deleted.exit_code == 0, deleted.output
    assert remote("stack", "list", "-f", "json").stdout.strip() == "[]"
    listed = json.loads(remote("stack", "list", "--show-deleted", "-f", "json").stdout)
    assert [(s["stack_name"], s["stack_status"]) for s in listed] == [("slow", "DELETE_COMPLETE")]


def test_wait_exits_1_when_the_stack_fails(remote, tmp_path):
    path = tmp_path / "broken.yaml"
    path.write_text(json.dumps({"heat_template_version": "2018-08-31", "resources": {
        "broken": {"type": "OS::Heat::TestResource", "properties": {"fail": True}}}}))
    failed = remote("stack", "create", "broken", "-t", str(path), "--wait", "-f", "json")
    assert failed.exit_code == 1, failed.output
    assert json.loads(failed.stdout)["stack_status"] == "CREATE_FAILED"


def test_wait_on_a_server_shows_each_new_event_once_in_order(remote):
    template = str(TEMPLATES / "basic.yaml")
    # (created to its end: an update of a stack still being created is refused, and its events are not the update's)
    assert remote("stack", "create", "web", "-t", template, "-P", "label=one", "--wait").exit_code == 0
    updated = remote("stack", "update", "web", "--existing", "-P", "label=two", "--wait", "-f", "json")
    assert updated.exit_code == 0, updated.output
    shown = [line.split(" ", 1)[1] for line in updated.stderr.splitlines() if "]: " in line]
    stored = [f"[{e['resource_name']}]: {e['resource_status']}"
              for e in json.loads(remote("stack", "event", "list", "web", "-f", "json").stdout)]
    # only what happened after the command began, each once, as the server stored it
    assert [line.split(" ", 2)[0] + " " + line.split(" ", 2)[1] for line in shown] == \
        stored[stored.index("[web]: UPDATE_IN_PROGRESS"):]
    assert shown[-1].startswith("[web]: UPDATE_COMPLETE")


def word_template(tmp_path, default: str | None = None):
    """A template whose output ``word`` is its parameter ``word``."""
    path = tmp_path / "t.yaml"
    schema = "{type: string}" if default is None else f"{{type: string, default: {default}}}"
    path.write_text(f"heat_template_version: 2018-08-31\nparameters:\n  word: {schema}\nresources:\n"
                    "  v: {type: OS::Heat::Value, properties: {value: {get_param: word}}}\n"
                    "outputs:\n  word: {value: {get_attr: [v, value]}}\n")
    return path


def test_snapshots_through_the_server(remote, tmp_path):
    path = word_template(tmp_path)
    assert remote("stack", "create", "s", "-t", str(path), "-P", "word=one", "--wait").exit_code == 0
    taken = remote("stack", "snapshot", "create", "s", "--name", "one", "-f", "json")
    assert taken.exit_code == 0, taken.output
    snapshot_id = json.loads(taken.stdout)["id"]
    assert json.loads(taken.stdout)["status"] == "COMPLETE"
    assert remote("stack", "update", "s", "-t", str(path), "-P", "word=two", "--wait").exit_code == 0
    restored = remote("stack", "snapshot", "restore", "s", snapshot_id, "-f", "json")
    assert restored.exit_code == 0, restored.output
    assert json.loads(restored.stdout)["stack_status"] == "RESTORE_COMPLETE"
    word = remote("stack", "output", "show", "s", "word", "-f", "json")
    assert json.loads(word.stdout)["output_value"] == "one"
    listed = remote("stack", "snapshot", "list", "s", "-f", "json")
    assert [s["id"] for s in json.loads(listed.stdout)] == [snapshot_id]
    assert remote("stack", "snapshot", "delete", "s", snapshot_id).exit_code == 0
    gone = remote("stack", "snapshot", "show", "s", snapshot_id)
    assert gone.exit_code == 1 and "could not be found" in gone.output


def test_export_abandon_adopt_through_the_server(remote, tmp_path):
    path = tmp_path / "t.yaml"
    path.write_text("heat_template_version: 2018-08-31\nresources:\n"
                    "  r: {type: OS::Heat::RandomString, properties: {length: 9}}\n"
                    "outputs:\n  r: {value: {get_attr: [r, value]}}\n")
    assert remote("stack", "create", "old", "-t", str(path), "--wait").exit_code == 0
    value = json.loads(remote("stack", "output", "show", "old", "r", "-f", "json").stdout)["output_value"]
    assert json.loads(remote("stack", "export", "old").stdout)["resources"]["r"]["type"] == "OS::Heat::RandomString"
    assert remote("stack", "abandon", "old", "--output-file", str(tmp_path / "old.json")).exit_code == 0
    adopted = remote("stack", "adopt", "new", "--adopt-file", str(tmp_path / "old.json"), "-f", "json")
    assert adopted.exit_code == 0, adopted.output
    assert json.loads(adopted.stdout)["stack_status"] == "ADOPT_COMPLETE"
    assert json.loads(remote("stack", "output", "show", "new", "r", "-f", "json").stdout)["output_value"] == value


def test_update_clear_parameter_and_tags_through_the_server(remote, tmp_path):
    path = word_template(tmp_path, default="plain")
    assert remote("stack", "create", "c", "-t", str(path), "-P", "word=given", "--wait").exit_code == 0
    updated = remote("stack", "update", "c", "--existing", "--clear-parameter", "word", "--tags", "x", "--wait")
    assert updated.exit_code == 0, updated.output
    assert json.loads(remote("stack", "output", "show", "c", "word", "-f", "json").stdout)["output_value"] == "plain"
    assert json.loads(remote("stack", "show", "c", "-c", "tags", "-f", "json").stdout) == {"tags": ["x"]}
