"""The `openstack` command (python-openstackclient + python-heatclient) against `stoker api`."""

from __future__ import annotations

import json
import uuid

import pytest

from engine.helpers import wait_until

from .helpers import TEMPLATES, heat, openstack_on, wait_for

pytestmark = pytest.mark.slow  # `openstack` commands against a server


def test_stack_create_wait_show_outputs_resources_events(noauth_server, openstack_cli):
    project = f"osc-{uuid.uuid4().hex[:6]}"
    name = "web"
    run = openstack_on(openstack_cli, noauth_server, project)

    created = run("stack", "create", "-t", str(TEMPLATES / "basic.yaml"), "--parameter", "label=osc",
                  "--wait", "--poll", "1", "-f", "json", name)
    assert "CREATE_COMPLETE" in created.stdout + created.stderr
    shown = json.loads(run("stack", "show", name, "-f", "json").stdout)  # by name: a redirect
    assert shown["stack_status"] == "CREATE_COMPLETE" and shown["stack_name"] == name
    output = json.loads(run("stack", "output", "show", name, "label", "-f", "json").stdout)
    assert output["output_value"] == "osc"
    resources = json.loads(run("stack", "resource", "list", name, "-f", "json").stdout)
    assert {r["resource_name"] for r in resources} == {"secret", "holder"}
    events = json.loads(run("stack", "event", "list", name, "-f", "json").stdout)
    assert events[-1]["resource_status"] == "CREATE_COMPLETE" and events[-1]["resource_name"] == name
    listed = json.loads(run("stack", "list", "-f", "json").stdout)
    assert [s["Stack Name"] for s in listed] == [name]

    run("stack", "update", "--existing", "--parameter", "label=again", name)
    client = heat(noauth_server, project)
    assert wait_for(client, name).stack_status == "UPDATE_COMPLETE"
    assert client.stacks.output_show(name, "label")["output"]["output_value"] == "again"
    client.stacks.delete(name)
    assert wait_for(client, shown["id"]).stack_status == "DELETE_COMPLETE"


def test_errors_reach_the_user(noauth_server, openstack_cli):
    openstack = openstack_on(openstack_cli, noauth_server, f"osc-{uuid.uuid4().hex[:6]}", ok=False)
    missing = openstack("stack", "show", "nothing-here")
    assert missing.returncode != 0 and "not found" in missing.stderr.lower()
    invalid = openstack("stack", "create", "-t", str(TEMPLATES / "invalid.yaml"), "bad")
    assert invalid.returncode != 0 and "OS::Heat::Nonexistent" in invalid.stderr


def test_stack_snapshot_commands(noauth_server, openstack_cli):
    project = f"osc-{uuid.uuid4().hex[:6]}"
    run = openstack_on(openstack_cli, noauth_server, project)

    run("stack", "create", "-t", str(TEMPLATES / "basic.yaml"), "--parameter", "label=one", "--wait", "snap")
    taken = {k.lower(): v for k, v in
             json.loads(run("stack", "snapshot", "create", "--name", "first", "snap", "-f", "json").stdout).items()}
    client = heat(noauth_server, project)
    wait_until(lambda: client.stacks.snapshot_show("snap", taken["id"])["snapshot"]["status"] == "COMPLETE")
    listed = [{k.lower(): v for k, v in s.items()}
              for s in json.loads(run("stack", "snapshot", "list", "snap", "-f", "json").stdout)]
    assert [s["id"] for s in listed] == [taken["id"]] and listed[0]["status"] == "COMPLETE"
    shown = run("stack", "snapshot", "show", "snap", taken["id"]).stdout
    assert "basic" in shown or "holder" in shown
    run("stack", "update", "--existing", "--parameter", "label=two", "--wait", "snap")
    run("stack", "snapshot", "restore", "snap", taken["id"])
    assert wait_for(client, "snap").stack_status == "RESTORE_COMPLETE"
    assert client.stacks.output_show("snap", "label")["output"]["output_value"] == "one"
    run("stack", "snapshot", "delete", "--yes", "snap", taken["id"])
    assert json.loads(run("stack", "snapshot", "list", "snap", "-f", "json").stdout) == []
