"""The ``stoker stack ...`` commands end to end: in-process (click's runner) and as real processes."""

from __future__ import annotations

import pytest

from .helpers import files_under, index, template

DEPS = template("dependencies.yaml")


def test_create_outputs_resources_events(cli, files):
    created = cli("stack", "create", "deps", "-t", DEPS, "-P", f"dir={files}", "--wait", "-f", "json").expect(0)
    assert created.json["stack_status"] == "CREATE_COMPLETE"
    # --wait shows the progress on stderr, in order
    progress = [line for line in created.stderr.splitlines() if "[" in line]
    assert any("[base]: CREATE_IN_PROGRESS" in line for line in progress)
    assert progress[-1].split("]: ")[1].startswith("CREATE_COMPLETE")

    outputs = cli("stack", "output", "show", "deps", "--all", "-f", "json").expect(0).json
    assert isinstance(outputs, list)
    by_key = {o["output_key"]: o for o in outputs}
    assert set(by_key) == {"reference", "file_path", "file_size", "broken"}
    for key in ("reference", "file_path", "file_size"):
        assert set(by_key[key]) == {"output_key", "output_value", "description"}, by_key[key]
    assert by_key["file_path"]["output_value"] == str(files / "out.txt")
    assert by_key["file_size"]["output_value"] == len("hello-derived")
    assert by_key["reference"]["description"] == "the physical id of derived"
    assert by_key["broken"]["output_value"] is None and "map_merge" in by_key["broken"]["output_error"]
    one = cli("stack", "output", "show", "deps", "file_path", "-f", "json").expect(0).json
    assert one == by_key["file_path"]
    cli("stack", "output", "show", "deps", "nothing").expect(1)
    listed = cli("stack", "output", "list", "deps", "-f", "json").expect(0).json
    assert sorted(o["output_key"] for o in listed) == sorted(by_key)

    shown = cli("stack", "show", "deps", "-f", "json").expect(0).json
    assert shown["stack_status"] == "CREATE_COMPLETE"  # despite the broken output
    assert shown["parameters"]["dir"] == str(files)
    assert shown["description"].startswith("Resources linked by")

    resources = {r["resource_name"]: r for r in cli("stack", "resource", "list", "deps", "-f", "json")
                 .expect(0).json}
    assert set(resources) == {"base", "derived", "reference", "file", "independent"}
    assert {r["resource_status"] for r in resources.values()} == {"CREATE_COMPLETE"}
    assert resources["file"]["physical_resource_id"] == str(files / "out.txt")
    assert resources["file"]["resource_type"] == "Stoker::Local::File"
    shown = cli("stack", "resource", "show", "deps", "file", "-f", "json").expect(0).json
    assert shown["attributes"]["path"] == str(files / "out.txt")
    assert shown["attributes"]["size"] == len("hello-derived")

    events = cli("stack", "event", "list", "deps", "-f", "json").expect(0).json
    pairs = [(e["resource_name"], e["resource_status"]) for e in events]
    assert pairs[0] == ("deps", "CREATE_IN_PROGRESS") and pairs[-1] == ("deps", "CREATE_COMPLETE")
    assert index(pairs, "derived", "CREATE_COMPLETE") < index(pairs, "file", "CREATE_IN_PROGRESS")
    only = cli("stack", "event", "list", "deps", "--resource", "file", "-f", "json").expect(0).json
    assert [e["resource_status"] for e in only] == ["CREATE_IN_PROGRESS", "CREATE_COMPLETE"]

    listed = cli("stack", "list", "-f", "json").expect(0).json
    assert [(s["stack_name"], s["stack_status"]) for s in listed] == [("deps", "CREATE_COMPLETE")]
    template_shown = cli("stack", "template", "show", "deps", "-f", "json").expect(0).json
    assert set(template_shown["resources"]) == set(resources)

    cli("stack", "delete", "deps", "--yes", "--wait").expect(0)
    assert files_under(files) == []
    assert cli("stack", "list", "-f", "json").expect(0).json == []


@pytest.mark.sqlite_only
def test_create_failure_and_rollback(cli, files):
    failed = cli("stack", "create", "broken", "-t", template("failure.yaml"), "-P", f"dir={files}",
                 "--wait", "-f", "json").expect(1)
    assert failed.json["stack_status"] == "CREATE_FAILED"
    failures = cli("stack", "failures", "list", "broken", "-f", "json").expect(0).json
    assert [(f["resource_name"], f["resource_status"]) for f in failures] == [("broken", "CREATE_FAILED")]
    assert "Test Resource failed broken" in failures[0]["resource_status_reason"]
    assert files_under(files) == ["first.txt", "second.txt"]

    rolled = cli("stack", "create", "rolled", "-t", template("failure.yaml"), "-P", f"dir={files / 'r'}",
                 "--enable-rollback", "--wait", "-f", "json").expect(1)
    assert rolled.json["stack_status"] == "ROLLBACK_COMPLETE"
    assert files_under(files / "r") == []
    assert cli("stack", "resource", "list", "rolled", "-f", "json").expect(0).json == []


@pytest.mark.sqlite_only
def test_a_create_that_rolled_back_is_a_failure_for_wait(cli, files):
    cli("stack", "create", "rolled", "-t", template("failure.yaml"), "-P", f"dir={files}",
        "--enable-rollback", "--wait").expect(1)


@pytest.mark.sqlite_only
def test_wait_progress_keeps_each_event_on_one_line(cli, files):
    run = cli("stack", "create", "broken", "-t", template("failure.yaml"), "-P", f"dir={files}", "--wait")
    reason = "Resource CREATE failed: ValueError: resources.broken: Test Resource failed broken"
    assert any(line.endswith(f"[broken]: CREATE_FAILED {reason}") for line in run.stderr.splitlines()) \
        or any(f"CREATE_FAILED {reason}" in line for line in run.stderr.splitlines()), run.stderr


def test_update_dry_run_then_update(cli, files):
    v1, v2 = template("update_v1.yaml"), template("update_v2.yaml")
    cli("stack", "create", "site", "-t", v1, "-P", f"dir={files}", "--wait").expect(0)
    before = {r["resource_name"]: r["physical_resource_id"]
              for r in cli("stack", "resource", "list", "site", "-f", "json").expect(0).json}

    plan = cli("stack", "update", "site", "-t", v2, "-P", f"dir={files}", "--dry-run", "-f", "json").expect(0).json
    assert [e["resource_name"] for e in plan["added"]] == ["added"]
    assert [e["resource_name"] for e in plan["deleted"]] == ["removed"]
    assert any(e["resource_name"] == "token" and "length" in e["reason"] for e in plan["replaced"])
    table = cli("stack", "update", "site", "-t", v2, "-P", f"dir={files}", "--dry-run").expect(0)
    assert "added" in table.stdout and "token" in table.stdout
    assert files_under(files) == ["in_place.txt", "old_place.txt", "removed.txt", "untouched.txt"]

    done = cli("stack", "update", "site", "-t", v2, "-P", f"dir={files}", "-P", "value=two", "--wait",
               "-f", "json").expect(0)
    assert done.json["stack_status"] == "UPDATE_COMPLETE"
    after = {r["resource_name"]: r for r in cli("stack", "resource", "list", "site", "-f", "json").expect(0).json}
    assert sorted(after) == ["added", "in_place", "moved", "token", "untouched"]
    assert after["moved"]["physical_resource_id"] == str(files / "new_place.txt")
    assert after["untouched"]["physical_resource_id"] == before["untouched"]
    assert after["in_place"]["resource_status"] == "UPDATE_COMPLETE"
    moved = cli("stack", "event", "list", "site", "--resource", "moved", "-f", "json").expect(0).json
    statuses = [e["resource_status"] for e in moved]
    # both resources: the new one created, the old one deleted after it
    assert statuses.index("CREATE_COMPLETE", 1) < statuses.index("DELETE_COMPLETE")
    assert files_under(files) == ["added.txt", "in_place.txt", "new_place.txt", "untouched.txt"]

    # --existing keeps the template: only the parameter changes
    cli("stack", "update", "site", "--existing", "-P", "value=three", "--wait").expect(0)
    assert (files / "in_place.txt").read_text() == "three changed"
    cli("stack", "update", "site", "-P", "value=four").expect(1)  # neither -t nor --existing


@pytest.mark.sqlite_only
def test_suspend_resume_check_and_mark_unhealthy(cli, files):
    cli("stack", "create", "life", "-t", template("lifecycle.yaml"), "-P", f"dir={files}", "--wait").expect(0)
    for verb, state in (("suspend", "SUSPEND_COMPLETE"), ("resume", "RESUME_COMPLETE"),
                        ("check", "CHECK_COMPLETE")):
        shown = cli("stack", verb, "life", "-f", "json").expect(0).json
        assert shown["stack_status"] == state
        rows = cli("stack", "resource", "list", "life", "-f", "json").expect(0).json
        assert {r["resource_status"] for r in rows} == {state}
    before = {r["resource_name"]: r["physical_resource_id"]
              for r in cli("stack", "resource", "list", "life", "-f", "json").expect(0).json}

    cli("stack", "resource", "mark-unhealthy", "life", "service", "it hangs").expect(0)
    shown = cli("stack", "resource", "show", "life", "service", "-f", "json").expect(0).json
    assert shown["resource_status"] == "CHECK_FAILED" and shown["resource_status_reason"] == "it hangs"
    cli("stack", "update", "life", "--existing", "--wait").expect(0)

    after = {r["resource_name"]: r for r in cli("stack", "resource", "list", "life", "-f", "json").expect(0).json}
    assert after["service"]["physical_resource_id"] != before["service"]
    assert after["service"]["resource_status"] == "CREATE_COMPLETE"
    assert after["frontend"]["physical_resource_id"] == before["frontend"]

    (files / "config.txt").unlink()
    failed = cli("stack", "check", "life", "-f", "json").expect(0)
    assert failed.json["stack_status"] == "CHECK_FAILED"


@pytest.mark.sqlite_only
def test_check_then_update_repairs_a_missing_file(cli, files):
    cli("stack", "create", "life", "-t", template("lifecycle.yaml"), "-P", f"dir={files}", "--wait").expect(0)
    (files / "config.txt").unlink()
    cli("stack", "check", "life").expect(0)
    cli("stack", "update", "life", "--existing", "--wait").expect(0)
    assert (files / "config.txt").read_text() == "settings"


def test_the_real_executable(tmp_path, files, home):
    """The installed ``stoker`` program itself (once: the process tests run it on both databases)."""
    import subprocess

    from .helpers import Run, process_env, stoker_executable

    url = f"sqlite:///{tmp_path / 'real.db'}"

    def stoker(*args):
        argv = ["--db-url", url, *map(str, args)]
        done = subprocess.run([stoker_executable(), *argv], capture_output=True, text=True, timeout=60,
                              env=process_env(home))
        return Run(argv, done.returncode, done.stdout, done.stderr)

    run = stoker("stack", "create", "deps", "-t", DEPS, "-P", f"dir={files}", "--wait", "-f", "json")
    assert run.expect(0).json["stack_status"] == "CREATE_COMPLETE"
    assert "[file]: CREATE_COMPLETE" in run.stderr
    outputs = stoker("stack", "output", "show", "deps", "--all", "-f", "json").expect(0).json
    assert {o["output_key"]: o["output_value"] for o in outputs}["file_path"] == str(files / "out.txt")
    from stoker.engine.engine import Engine

    other = Engine(db_url=url)  # and what the processes stored reads back in this one
    assert other.delete_stack("deps")["stack_status"] == "DELETE_COMPLETE"
    other.close()
    assert files_under(files) == []
