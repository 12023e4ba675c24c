"""Heal and a deployment update's drift checks on ``stoker worker`` processes: each worker reads what the
deciding step kept on the instances, so the heals, updates and reinstalls are those an in-process run makes."""

from __future__ import annotations

from health_blueprint import installed, instance

from .test_executions import finish


def test_heal_and_an_update_s_drift_checks_run_on_the_workers(cluster, tmp_path):
    engine = cluster.engine
    cluster.start_worker(concurrency=2)
    cluster.listening(1)
    marks = installed(engine, tmp_path / "marks", start=lambda *args: finish(cluster, engine.executions.start(*args)))
    marks.set("web", "down")
    marks.set("app", "down")
    healed = finish(cluster, engine.executions.start("heal", "dep"))
    assert healed["status"] == "terminated", healed["error"]
    lines = marks.trace()
    assert {"web preheal", "web heal", "app delete", "app create"} <= set(lines)
    assert not {"web delete", "host delete", "host create"} & set(lines)
    web = instance(engine, "dep", "web")
    assert web["system_properties"]["status"]["healed"] and "stoker_plan" not in web["system_properties"]

    marks.set("web", "drift", "port 81")
    found, started = engine.executions.updates.begin("dep", inputs={"port": 81})
    assert finish(cluster, engine.executions.get(started.id))["status"] == "terminated"
    assert [line for line in marks.trace() if not line.endswith(("check_drift", "check_status"))] == [
        "web update", "web postupdate"]
    assert not instance(engine, "dep", "web")["has_configuration_drift"]
