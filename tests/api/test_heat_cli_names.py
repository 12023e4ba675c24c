"""The last of ``openstack stack``'s names through the API: ``resource show --with-attr``,
``resource list --long|--filter``, ``update --converge``, ``create --poll``; with heatclient,
``openstack`` and ``stoker --url``.  The server lets projects use local types (a file is the
resource that drifts)."""

from __future__ import annotations

import json
import uuid

import pytest
from click.testing import CliRunner
from heatclient import exc

from stoker.cli import main
from stoker.cli.remote import install_remote

from .helpers import heat, openstack_on, start_server, wait_for

install_remote(main)

NESTED = ("heat_template_version: 2018-08-31\nresources:\n  inner: {type: OS::Heat::None}\n"
          "outputs:\n  greeting: {value: hello}\n")


def _template(target) -> dict:
    return {"heat_template_version": "2018-08-31", "resources": {
        "motd": {"type": "Stoker::Local::File", "properties": {"path": str(target), "content": "welcome"}},
        "plain": {"type": "OS::Heat::None"},
        "child": {"type": "nested.yaml"}}}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("names")
    running = start_server(tmp, f"sqlite:///{tmp / 'stoker.db'}", extra=("--allow-local-resources",))
    yield running
    running.stop()


def _project() -> str:
    return f"names-{uuid.uuid4().hex[:6]}"


def test_with_attr_filters_and_converge_with_heatclient(server, tmp_path):
    client = heat(server, _project())
    target = tmp_path / "motd.txt"
    stack_id = client.stacks.create(stack_name="web", template=_template(target),
                                    files={"nested.yaml": NESTED})["stack"]["id"]
    assert wait_for(client, stack_id).stack_status == "CREATE_COMPLETE"

    shown = client.resources.get(stack_id, "child", with_attr=["greeting", "nosuch"])
    assert shown.attributes["greeting"] == "hello" and shown.attributes["nosuch"] is None
    assert "greeting" not in client.resources.get(stack_id, "child").attributes

    nones = client.resources.list(stack_id, nested_depth=1, filters={"type": "OS::Heat::None"})
    assert sorted((r.resource_name, r.stack_name == "web") for r in nones) == [("inner", False), ("plain", True)]
    either = client.resources.list(stack_id, filters={"name": ["motd", "plain"], "status": "COMPLETE"})
    assert sorted(r.resource_name for r in either) == ["motd", "plain"]
    with pytest.raises(exc.HTTPBadRequest, match="Invalid filter parameters"):
        client.resources.list(stack_id, filters={"colour": "red"})

    target.write_text("edited by hand")
    client.stacks.update(stack_id, existing=True)
    assert wait_for(client, stack_id).stack_status == "UPDATE_COMPLETE"
    assert target.read_text() == "edited by hand"  # an unchanged template changes nothing
    client.stacks.update(stack_id, existing=True, converge=True)
    assert wait_for(client, stack_id).stack_status == "UPDATE_COMPLETE"
    assert target.read_text() == "welcome"
    assert client.resources.get(stack_id, "motd").resource_status == "UPDATE_COMPLETE"
    assert client.resources.get(stack_id, "plain").resource_status == "CREATE_COMPLETE"


def test_the_same_names_with_openstack_and_stoker_url(server, tmp_path, openstack_cli):
    project = _project()
    (tmp_path / "nested.yaml").write_text(NESTED)
    target = tmp_path / "motd.txt"
    path = tmp_path / "web.yaml"
    path.write_text(json.dumps(_template(target)))

    openstack = openstack_on(openstack_cli, server, project)

    def stoker(*args: str):
        done = CliRunner().invoke(main, ["--url", server.endpoint(project), *args], catch_exceptions=False)
        assert done.exit_code == 0, done.output
        return done

    created = stoker("stack", "create", "web", "-t", str(path), "--poll", "0.2")
    assert "[web]: CREATE_COMPLETE" in created.stderr and "CREATE_COMPLETE" in created.stdout

    shown = json.loads(openstack("stack", "resource", "show", "web", "child", "--with-attr", "greeting",
                                 "-f", "json").stdout)
    assert shown["attributes"]["greeting"] == "hello"
    ours = json.loads(stoker("stack", "resource", "show", "web", "child", "--with-attr", "greeting",
                             "-c", "attributes", "-f", "json").stdout)
    assert ours["attributes"]["greeting"] == "hello"

    listed = json.loads(openstack("stack", "resource", "list", "web", "--long", "--filter", "type=OS::Heat::None",
                                  "-f", "json").stdout)
    assert [(r["resource_name"], r["stack_name"]) for r in listed] == [("plain", "web")]
    ours = json.loads(stoker("stack", "resource", "list", "web", "--long", "-n", "1", "--filter",
                             "type=OS::Heat::None", "-f", "json").stdout)
    assert sorted(r["resource_name"] for r in ours) == ["inner", "plain"] and "stack_name" in ours[0]

    target.write_text("edited by hand")
    openstack("stack", "update", "--existing", "--converge", "--wait", "web")
    assert target.read_text() == "welcome"
    target.write_text("again")
    stoker("stack", "update", "web", "--existing", "--converge", "--wait")
    assert target.read_text() == "welcome"
