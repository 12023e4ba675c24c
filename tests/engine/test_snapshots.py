"""Stack snapshots through the CLI (``stoker stack snapshot ...``), as Heat takes them: the
definition and every resource's data kept; a restore updates the stack back to it and hands
each plug-in its snapshot entry."""

from __future__ import annotations

import sqlalchemy

PLUGIN = '''
from stoker.resources import attributes, properties
from stoker.resources.resource import Resource


class Disk(Resource):
    """A disk whose content a snapshot backs up and a restore brings back."""

    run_in_thread = False
    properties_schema = {"size": properties.Schema(properties.Schema.INTEGER, "Size.", update_allowed=True)}
    attributes_schema = {"content": attributes.Schema("What the disk holds.")}

    def handle_create(self):
        self.resource_id_set("disk-%d" % self.properties["size"])
        self.data_set("content", "made")

    def handle_update(self, json_snippet, tmpl_diff, prop_diff):
        self.data_set("content", "changed")

    def handle_snapshot(self):
        self.data_set("backup", self._data.get("content"))

    def handle_restore(self, entry):
        self.data_set("content", "restored from " + entry["resource_data"]["backup"])

    def _resolve_attribute(self, name):
        return self._data.get(name)


def resource_mapping():
    return {"Test::Disk": Disk}
'''

TEMPLATE = """\
heat_template_version: 2018-08-31
parameters:
  size: {type: number, default: 1}
  secret: {type: string, hidden: true, default: s3cr3t-value}
resources:
  disk:
    type: Test::Disk
    properties: {size: {get_param: size}}
outputs:
  size: {value: {get_param: size}}
"""


def test_a_snapshot_keeps_the_stack_and_a_restore_brings_it_back(cli, tmp_path, db_url):
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "disk.py").write_text(PLUGIN)
    stoker = cli.with_plugins(plugins)
    (tmp_path / "t.yaml").write_text(TEMPLATE)
    stoker("stack", "create", "s", "-t", tmp_path / "t.yaml", "-P", "size=1", "--wait").expect(0)

    taken = stoker("stack", "snapshot", "create", "s", "--name", "before", "-f", "json").expect(0).json
    assert (taken["name"], taken["status"]) == ("before", "COMPLETE")
    assert stoker("stack", "show", "s", "-f", "json").expect(0).json["stack_status"] == "SNAPSHOT_COMPLETE"
    shown = stoker("stack", "snapshot", "show", "s", taken["id"], "-f", "json").expect(0).json
    data = shown["data"]
    assert data["template"]["resources"]["disk"]["type"] == "Test::Disk"
    assert data["environment"]["parameters"]["size"] == "1"  # as given
    assert data["resources"]["disk"]["resource_data"] == {"content": "made", "backup": "made"}
    assert data["resources"]["disk"]["action"] == "SNAPSHOT"
    # kept encrypted: neither the data nor the hidden default is in the database in clear
    with sqlalchemy.create_engine(db_url).connect() as conn:
        stored = str(conn.execute(sqlalchemy.text("SELECT data FROM stack_snapshot")).scalar())
    assert "Test::Disk" not in stored and "s3cr3t-value" not in stored

    stoker("stack", "update", "s", "-t", tmp_path / "t.yaml", "-P", "size=2", "--wait").expect(0)
    assert stoker("stack", "output", "show", "s", "size", "-f", "json").expect(0).json["output_value"] == 2

    restored = stoker("stack", "snapshot", "restore", "s", taken["id"], "-f", "json").expect(0).json
    assert restored["stack_status"] == "RESTORE_COMPLETE", restored["stack_status_reason"]
    assert stoker("stack", "output", "show", "s", "size", "-f", "json").expect(0).json["output_value"] == 1
    disk = stoker("stack", "resource", "show", "s", "disk", "-f", "json").expect(0).json
    assert disk["physical_resource_id"] == "disk-1"
    assert disk["attributes"]["content"] == "restored from made"

    listed = stoker("stack", "snapshot", "list", "s", "-f", "json").expect(0).json
    assert [s["id"] for s in listed] == [taken["id"]]
    stoker("stack", "snapshot", "delete", "s", taken["id"]).expect(0)
    assert stoker("stack", "snapshot", "list", "s", "-f", "json").expect(0).json == []
    gone = stoker("stack", "snapshot", "show", "s", taken["id"]).expect(1)
    assert f"The Snapshot ({taken['id']}) could not be found." in gone.stderr


def test_a_snapshot_of_a_stack_in_an_action_or_of_no_stack_is_refused(cli, tmp_path, engine):
    (tmp_path / "t.yaml").write_text("heat_template_version: 2018-08-31\nresources:\n  n: {type: OS::Heat::None}\n")
    cli("stack", "create", "s", "-t", tmp_path / "t.yaml", "--wait").expect(0)
    record = engine.get_record("s")
    engine.store.update_stack(record.id, action="UPDATE", status="IN_PROGRESS")
    refused = cli("stack", "snapshot", "create", "s").expect(1)
    assert "Stack s already has an action (UPDATE) in progress." in refused.stderr
    assert "Stack nope not found" in cli("stack", "snapshot", "list", "nope").expect(1).stderr


def test_deleting_a_stack_deletes_its_snapshots(cli, tmp_path, db_url):
    (tmp_path / "t.yaml").write_text("heat_template_version: 2018-08-31\nresources:\n  n: {type: OS::Heat::None}\n")
    cli("stack", "create", "s", "-t", tmp_path / "t.yaml", "--wait").expect(0)
    cli("stack", "snapshot", "create", "s").expect(0)
    cli("stack", "snapshot", "create", "s").expect(0)
    count = "SELECT count(*) FROM stack_snapshot"
    with sqlalchemy.create_engine(db_url).connect() as conn:
        assert conn.execute(sqlalchemy.text(count)).scalar() == 2
    cli("stack", "delete", "s", "--yes", "--wait").expect(0)
    with sqlalchemy.create_engine(db_url).connect() as conn:
        assert conn.execute(sqlalchemy.text(count)).scalar() == 0
