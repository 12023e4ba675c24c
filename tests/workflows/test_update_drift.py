"""A deployment update's changed instances as Cloudify 7's update workflow treats them: their drift checked
(unless ``skip_drift_check``), a drifted instance whose node can update itself healed if its status check fails
(unless ``skip_heal``) and updated by its ``update`` operations, one that cannot reinstalled (unless
``skip_reinstall``), ``force_reinstall`` reinstalling them all; a changed node without ``check_drift`` counts as
drifted; what was reinstalled or updated has no drift after."""

from __future__ import annotations

from health_blueprint import installed, instance


def _update(engine, **options) -> dict:
    done = engine.executions.updates.update("dep", inputs={"port": options.pop("port", 81)}, **options)
    assert done["state"] == "successful", engine.executions.get(done["execution_id"])["error"]
    return done


def _ops(lines: list[str]) -> list[str]:
    """The trace less its checks."""
    return [line for line in lines if not line.endswith(("check_drift", "check_status"))]


def test_a_changed_instance_that_found_no_drift_is_left_alone(engine, tmp_path):
    marks = installed(engine, tmp_path / "marks")
    _update(engine)
    lines = marks.trace()
    assert sorted(lines) == ["app check_drift", "host check_drift", "web check_drift"]  # each checked, none drifted


def test_a_drifted_instance_is_updated_if_it_can_be_and_reinstalled_if_not(engine, tmp_path):
    marks = installed(engine, tmp_path / "marks")
    marks.set("web", "drift", "port 81")
    marks.set("app", "drift", "port 81")
    _update(engine)
    lines = marks.trace()
    assert _ops(lines) == ["app delete", "web update", "web postupdate", "app create"] or \
        _ops(lines) == ["web update", "web postupdate", "app delete", "app create"]
    assert sorted(line for line in lines if line.endswith("check_status")) == ["web check_status"]  # before updating
    web, app = instance(engine, "dep", "web"), instance(engine, "dep", "app")
    assert web["system_properties"]["configuration_drift"] is None and not web["has_configuration_drift"]
    assert "configuration_drift" not in app["system_properties"] and not app["has_configuration_drift"]
    assert engine.blueprints.deployments.get("dep")["drifted_instances"] == 0
    assert not {"stoker_plan", "update_failed"} & set(web["system_properties"])


def test_skip_drift_check_counts_every_changed_instance_drifted(engine, tmp_path):
    marks = installed(engine, tmp_path / "marks")
    _update(engine, skip_drift_check=True)
    lines = marks.trace()
    assert not [line for line in lines if line.endswith("check_drift")]
    assert sorted(_ops(lines)) == ["app create", "app delete", "web postupdate", "web update"]  # host unchanged
    assert "configuration_drift" not in instance(engine, "dep", "web")["system_properties"]


def test_force_reinstall_reinstalls_what_would_be_updated(engine, tmp_path):
    marks = installed(engine, tmp_path / "marks")
    marks.set("web", "drift", "port 81")
    _update(engine, force_reinstall=True)
    assert _ops(marks.trace()) == ["web delete", "web create"]


def test_skip_reinstall_updates_but_reinstalls_nothing(engine, tmp_path):
    marks = installed(engine, tmp_path / "marks")
    marks.set("web", "drift", "port 81")
    marks.set("app", "drift", "port 81")
    _update(engine, skip_reinstall=True)
    assert _ops(marks.trace()) == ["web update", "web postupdate"]
    assert instance(engine, "dep", "app")["has_configuration_drift"]  # not reinstalled: still drifted


def test_a_failing_instance_to_update_heals_first_unless_skip_heal(engine, tmp_path):
    marks = installed(engine, tmp_path / "marks")
    marks.set("web", "drift", "port 81")
    marks.set("web", "down")
    _update(engine, skip_heal=True)
    assert _ops(marks.trace()) == ["web update", "web postupdate"]

    marks.set("web", "drift", "port 82")
    _update(engine, port=82)
    assert _ops(marks.trace()) == ["web preheal", "web heal", "web update", "web postupdate"]
    status = instance(engine, "dep", "web")["system_properties"]["status"]
    assert status["healed"] is True and status["ok"] is True


def test_a_failed_update_reinstalls_the_instance(engine, tmp_path):
    marks = installed(engine, tmp_path / "marks")
    marks.set("web", "drift", "port 81")
    (marks.folder / "fail-update").write_text("")
    done = _update(engine)
    lines = _ops(marks.trace())
    assert lines == ["web update", "web delete", "web create"]
    failed = [e for e in engine.executions.events(done["execution_id"]) if e["event_type"] == "task_failed"]
    assert [e["operation"] for e in failed] == ["cloudify.interfaces.lifecycle.update"]
