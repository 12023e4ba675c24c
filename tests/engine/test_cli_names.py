"""The names a Heat user types with ``openstack stack ...``, on ``stoker stack``: ``-c``,
``--deleted``, several stacks at once, ``resource mark unhealthy``, ``event show``,
``event list --sort/--limit``, ``--with_conditions``."""

from __future__ import annotations

TEMPLATE = "heat_template_version: 2018-08-31\nresources:\n  a: {type: OS::Heat::None}\n  b: {type: OS::Heat::None}\n"


def test_openstack_spellings(cli, tmp_path):
    path = tmp_path / "t.yaml"
    path.write_text(TEMPLATE)
    for name in ("one", "two", "gone"):
        cli("stack", "create", name, "-t", path, "--wait").expect(0)
    cli("stack", "delete", "gone", "--yes", "--wait").expect(0)

    # -c keeps only those fields, on a show and on a list
    assert cli("stack", "show", "one", "-c", "stack_status", "-f", "json").expect(0).json == {
        "stack_status": "CREATE_COMPLETE"}
    listed = cli("stack", "list", "-c", "stack_name", "-f", "json").expect(0).json
    assert sorted(listed, key=lambda r: r["stack_name"]) == [{"stack_name": "one"}, {"stack_name": "two"}]
    wrong = cli("stack", "show", "one", "-c", "nope")
    assert wrong.exit_code == 2 and "No recognized column names in ['nope']" in wrong.stderr
    # --deleted (and --show-deleted)
    for flag in ("--deleted", "--show-deleted"):
        names = {r["stack_name"] for r in cli("stack", "list", flag, "-f", "json").expect(0).json}
        assert names == {"one", "two", "gone"}

    # several stacks at once
    cli("stack", "suspend", "one", "two", "--wait").expect(0)
    for name in ("one", "two"):
        assert cli("stack", "show", name, "-c", "stack_status", "-f", "value").expect(0).stdout.strip() == \
            "SUSPEND_COMPLETE"
    cli("stack", "resume", "one", "two", "--wait").expect(0)

    # resource mark unhealthy, as openstack spells it
    cli("stack", "resource", "mark", "unhealthy", "one", "a", "bad disk").expect(0)
    shown = cli("stack", "resource", "show", "one", "a", "-c", "resource_status", "-c", "resource_status_reason",
                "-f", "json").expect(0).json
    assert shown == {"resource_status": "CHECK_FAILED", "resource_status_reason": "bad disk"}

    # event list --sort/--limit, event show
    events = cli("stack", "event", "list", "one", "--resource", "b", "-f", "json").expect(0).json
    newest = cli("stack", "event", "list", "one", "--resource", "b", "--sort", "event_time:desc", "--limit", "1",
                 "-f", "json").expect(0).json
    assert len(newest) == 1 and newest[0]["event_time"] == max(e["event_time"] for e in events)
    one = cli("stack", "event", "show", "one", "b", events[0]["id"], "-f", "json").expect(0).json
    assert one["id"] == events[0]["id"] and one["resource_name"] == "b"
    missing = cli("stack", "event", "show", "one", "b", "no-such-event").expect(1)
    assert "No event no-such-event of resource b in stack one" in missing.stderr

    functions = cli("template", "function", "list", "2018-08-31", "--with_conditions", "-f", "json").expect(0).json
    assert "equals" in {f["functions"] for f in functions}


def test_export_abandon_adopt_and_file_list(cli, tmp_path):
    (tmp_path / "data.txt").write_text("kept")
    path = tmp_path / "t.yaml"
    path.write_text("heat_template_version: 2018-08-31\nresources:\n"
                    "  r: {type: OS::Heat::RandomString, properties: {length: 9}}\n"
                    "  v: {type: OS::Heat::Value, properties: {value: {get_file: data.txt}}}\n"
                    "outputs:\n  r: {value: {get_attr: [r, value]}}\n")
    cli("stack", "create", "old", "-t", path, "--wait").expect(0)
    value = cli("stack", "output", "show", "old", "r", "-f", "json").expect(0).json["output_value"]
    exported = cli("stack", "export", "old").expect(0).json
    assert exported["resources"]["r"]["type"] == "OS::Heat::RandomString"
    files = cli("stack", "file", "list", "old", "-f", "json").expect(0).json
    assert list(files.values()) == ["kept"]

    cli("stack", "abandon", "old", "--output-file", tmp_path / "old.json").expect(0)
    assert "Stack old not found" in cli("stack", "show", "old").expect(1).stderr
    adopted = cli("stack", "adopt", "new", "--adopt-file", tmp_path / "old.json", "--wait", "-f", "json").expect(0)
    assert adopted.json["stack_status"] == "ADOPT_COMPLETE"
    # the resources were taken over, not made again: the same random value
    assert cli("stack", "output", "show", "new", "r", "-f", "json").expect(0).json["output_value"] == value
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    refused = cli("stack", "adopt", "worse", "--adopt-file", bad).expect(1)
    assert "Invalid adopt data" in refused.stderr


def test_update_clear_parameter_tags_and_rollback_keep(cli, tmp_path):
    path = tmp_path / "t.yaml"
    path.write_text("heat_template_version: 2018-08-31\nparameters:\n  word: {type: string, default: plain}\n"
                    "resources:\n  v: {type: OS::Heat::Value, properties: {value: {get_param: word}}}\n"
                    "outputs:\n  word: {value: {get_attr: [v, value]}}\n")
    cli("stack", "create", "s", "-t", path, "-P", "word=given", "--tags", "a", "--wait").expect(0)
    cli("stack", "update", "s", "--existing", "--clear-parameter", "word", "--tags", "b,c", "--rollback", "keep",
        "--wait").expect(0)
    assert cli("stack", "output", "show", "s", "word", "-f", "json").expect(0).json["output_value"] == "plain"
    assert cli("stack", "show", "s", "-c", "tags", "-f", "json").expect(0).json == {"tags": ["b", "c"]}
    preview = cli("stack", "update", "s", "-t", path, "-P", "word=new", "--dry-run", "--show-nested", "-f", "json")
    assert preview.expect(0).json["updated"][0]["resource_name"] == "v"


def test_event_list_follow_prints_the_events_of_a_stack_that_has_settled(cli, tmp_path):
    path = tmp_path / "t.yaml"
    path.write_text(TEMPLATE)
    cli("stack", "create", "f", "-t", path, "--wait").expect(0)
    followed = cli("stack", "event", "list", "f", "--follow").expect(0)
    lines = followed.stderr.splitlines()
    assert lines[0].endswith("[f]: CREATE_IN_PROGRESS Stack CREATE started")
    assert lines[-1].endswith("[f]: CREATE_COMPLETE Stack CREATE completed successfully")


NESTED = ("heat_template_version: 2018-08-31\nresources:\n  inner: {type: OS::Heat::None}\n"
          "outputs:\n  greeting: {value: hello}\n")
OUTER = ("heat_template_version: 2018-08-31\nresources:\n"
         "  word: {type: OS::Heat::RandomString, properties: {length: 6}}\n"
         "  plain: {type: OS::Heat::None}\n"
         "  child: {type: nested.yaml}\n")


def test_resource_show_with_attr_and_resource_list_long_and_filter(cli, tmp_path):
    (tmp_path / "nested.yaml").write_text(NESTED)
    path = tmp_path / "outer.yaml"
    path.write_text(OUTER)
    cli("stack", "create", "--poll", "0.2", "web", "-t", path).expect(0)  # --poll waits, as --wait

    # --with-attr: attributes resolved into the answer, those get_attr cannot give as null
    shown = cli("stack", "resource", "show", "web", "child", "--with-attr", "greeting", "--with-attr", "nosuch",
                "-c", "attributes", "-f", "json").expect(0).json["attributes"]
    assert shown["greeting"] == "hello" and shown["nosuch"] is None
    plain = cli("stack", "resource", "show", "web", "child", "-c", "attributes", "-f", "json").expect(0).json
    assert "greeting" not in plain["attributes"]

    # --long: the stack each resource is in; --filter: Heat's filters (one key twice: either value)
    rows = cli("stack", "resource", "list", "web", "--long", "-n", "1", "-f", "json").expect(0).json
    assert {(r["resource_name"], r["stack_name"] == "web") for r in rows} == {
        ("word", True), ("plain", True), ("child", True), ("inner", False)}
    assert "stack_name" in cli("stack", "resource", "list", "web", "--long", "-f", "json").expect(0).json[0]
    nones = cli("stack", "resource", "list", "web", "-n", "1", "--filter", "type=OS::Heat::None", "-f", "json")
    assert sorted(r["resource_name"] for r in nones.expect(0).json) == ["inner", "plain"]
    either = cli("stack", "resource", "list", "web", "--filter", "name=word", "--filter", "name=plain",
                 "--filter", "status=CREATE_COMPLETE", "-f", "json").expect(0).json
    assert sorted(r["resource_name"] for r in either) == ["plain", "word"]
    assert cli("stack", "resource", "list", "web", "--filter", "status=FAILED", "-f", "json").expect(0).json == []
    wrong = cli("stack", "resource", "list", "web", "--filter", "colour=red")
    assert wrong.exit_code == 2 and "'colour' is not a filter; the filters are: type, status" in wrong.stderr
    assert "is not KEY=VALUE" in cli("stack", "resource", "list", "web", "--filter", "red").stderr


def test_create_poll_prints_the_events_and_fails_as_wait_does(cli, tmp_path):
    path = tmp_path / "t.yaml"
    path.write_text("heat_template_version: 2018-08-31\nresources:\n"
                    "  bad: {type: OS::Heat::TestResource, properties: {fail: true}}\n")
    failed = cli("stack", "create", "broken", "-t", path, "--poll")
    assert failed.exit_code == 1
    assert "[bad]: CREATE_FAILED" in failed.stderr and "[broken]: CREATE_FAILED" in failed.stderr
    assert "Invalid value for '--poll'" in cli("stack", "create", "x", "-t", path, "--poll", "0").stderr


def test_update_converge_puts_right_a_resource_that_drifted(cli, tmp_path):
    target = tmp_path / "out" / "motd.txt"
    path = tmp_path / "t.yaml"
    path.write_text("heat_template_version: 2018-08-31\nresources:\n"
                    f"  motd: {{type: Stoker::Local::File, properties: {{path: '{target}', content: welcome}}}}\n"
                    "  other: {type: OS::Heat::None}\n")
    cli("stack", "create", "host", "-t", path, "--wait").expect(0)
    target.write_text("edited by hand")
    target.chmod(0o600)

    # an ordinary update of an unchanged template leaves it as it is
    cli("stack", "update", "host", "--existing", "--wait").expect(0)
    assert target.read_text() == "edited by hand"
    # --converge finds the drift and updates the resource back to the template's
    cli("stack", "update", "host", "--existing", "--converge", "--wait").expect(0)
    assert target.read_text() == "welcome" and target.stat().st_mode & 0o777 == 0o644
    events = cli("stack", "event", "list", "host", "-f", "json").expect(0).json
    assert [e["resource_status"] for e in events if e["resource_name"] == "motd"][-1] == "UPDATE_COMPLETE"
    assert [e["resource_status"] for e in events if e["resource_name"] == "other"] == [
        "CREATE_IN_PROGRESS", "CREATE_COMPLETE"]  # nothing drifted there: not touched

    # a file that is gone is made again
    target.unlink()
    cli("stack", "update", "host", "--existing", "--converge", "--wait").expect(0)
    assert target.read_text() == "welcome"
