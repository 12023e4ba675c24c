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
