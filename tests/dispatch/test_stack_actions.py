"""Updates (in place, replacing, rolled back), suspend, resume and check run by real
``stoker worker`` processes (RabbitMQ, PostgreSQL), every resource action once."""

from __future__ import annotations

from collections import Counter

from stoker.resources.resource import POLL_KEY

from .test_cancel import rows, wait_for
from .test_workers import log_lines


def recorded(log, value, tag="", **more):
    return {"type": "Test::Recorded", "properties": {"log": str(log), "value": value, "tag": tag}, **more}


def stack_template(resources, **outputs):
    return {"heat_template_version": "2018-08-31", "resources": resources,
            "outputs": {name: {"value": value} for name, value in outputs.items()}}


def actions_of(log, verb):
    return Counter(fields[1] for fields in log_lines(log) if fields[0] == verb)


def rows_by_name(cluster, stack_id):
    rows = {}
    for row in cluster.engine.store.get_resources(stack_id):
        rows.setdefault(row.name, []).append(row)
    return rows


def test_an_update_in_place_replacing_adding_and_removing_runs_on_the_workers(cluster, tmp_path):
    cluster.start_worker(), cluster.start_worker()
    log = tmp_path / "made.log"
    before = stack_template({"a": recorded(log, "a1"),
                             "b": recorded(log, {"get_attr": ["a", "value"]}),
                             "c": recorded(log, "c1", depends_on=["b"])},
                            b={"get_attr": ["b", "value"]})
    started = cluster.engine.create_stack("upd", before)
    assert cluster.settle(started["id"])["stack_status"] == "CREATE_COMPLETE"
    old_b = rows_by_name(cluster, started["id"])["b"][0].id

    after = stack_template({"a": recorded(log, "a1", tag="new"),          # in place
                            "b": recorded(log, "b2"),                     # replaced
                            "d": recorded(log, {"get_attr": ["b", "value"]})},  # added; c removed
                           d={"get_attr": ["d", "value"]})
    updating = cluster.engine.update_stack("upd", after)
    assert updating["stack_status"] == "UPDATE_IN_PROGRESS"  # the asking side only starts it
    done = cluster.settle(started["id"])
    assert done["stack_status"] == "UPDATE_COMPLETE", done["stack_status_reason"]

    assert actions_of(log, "update") == {"a": 1}
    assert actions_of(log, "create") == {"a": 1, "b": 2, "c": 1, "d": 1}
    assert actions_of(log, "delete") == {"b": 1, "c": 1}  # the replaced b and the removed c, once each
    rows = rows_by_name(cluster, started["id"])
    assert sorted(rows) == ["a", "b", "d"] and all(len(found) == 1 for found in rows.values())
    assert rows["b"][0].id != old_b and rows["b"][0].replaces == old_b
    assert (rows["a"][0].action, rows["a"][0].status) == ("UPDATE", "COMPLETE")
    assert cluster.engine.outputs("upd")[0]["output_value"] == "b2"

    # PATCH: the stored template, one parameter more... here a new tag through --existing
    cluster.engine.update_stack("upd", after | {"parameters": {"t": {"type": "string"}}}, parameters={"t": "x"})
    assert cluster.settle(started["id"])["stack_status"] == "UPDATE_COMPLETE"
    patched = stack_template({"a": recorded(log, "a1", tag={"get_param": "t"}),
                              "b": recorded(log, "b2"), "d": recorded(log, {"get_attr": ["b", "value"]})})
    cluster.engine.update_stack("upd", patched | {"parameters": {"t": {"type": "string"}}},
                                parameters={"t": "y"}, existing=True)
    done = cluster.settle(started["id"])
    assert done["stack_status"] == "UPDATE_COMPLETE", done["stack_status_reason"]
    assert actions_of(log, "update") == {"a": 2}  # "new" -> "y" in place; nothing else touched
    assert cluster.engine.show_stack("upd")["parameters"]["t"] == "y"


def test_a_failed_update_rolls_back_on_the_workers(cluster, tmp_path):
    cluster.start_worker(), cluster.start_worker()
    log = tmp_path / "made.log"
    before = stack_template({"a": recorded(log, "a1"), "b": recorded(log, "b1")}, b={"get_attr": ["b", "value"]})
    started = cluster.engine.create_stack("back", before)
    assert cluster.settle(started["id"])["stack_status"] == "CREATE_COMPLETE"
    kept = {name: found[0].id for name, found in rows_by_name(cluster, started["id"]).items()}

    bad = recorded(log, "x", depends_on=["b"])
    bad["properties"]["fail"] = True
    after = stack_template({"a": recorded(log, "a1"), "b": recorded(log, "b2"), "bad": bad},
                           b={"get_attr": ["b", "value"]})
    cluster.engine.update_stack("back", after, disable_rollback=False)
    done = cluster.settle(started["id"])
    assert done["stack_status"] == "ROLLBACK_COMPLETE", done["stack_status_reason"]

    failed = [e for e in cluster.engine.events("back") if e["resource_status"] == "UPDATE_FAILED"]
    assert [e["resource_name"] for e in failed] == ["back"]
    assert "bad was told to fail" in failed[0]["resource_status_reason"]
    assert actions_of(log, "create") == {"a": 1, "b": 2}  # b's replacement made once, bad never
    assert actions_of(log, "delete") == {"b": 1}  # the replacement went, the original stayed
    rows = rows_by_name(cluster, started["id"])
    assert {name: found[0].id for name, found in rows.items()} == kept
    assert all(len(found) == 1 and found[0].replaced_by is None for found in rows.values())
    assert cluster.engine.template("back") == before
    assert cluster.engine.outputs("back")[0]["output_value"] == "b1"


def test_suspend_resume_and_check_run_on_the_workers(cluster, tmp_path):
    cluster.start_worker(), cluster.start_worker()
    log = tmp_path / "made.log"
    chain = {"r0": recorded(log, "v0")}
    for i in range(1, 4):
        chain[f"r{i}"] = recorded(log, {"get_attr": [f"r{i - 1}", "value"]})
    started = cluster.engine.create_stack("pause", stack_template(chain))
    assert cluster.settle(started["id"])["stack_status"] == "CREATE_COMPLETE"

    def run(action, expected):
        cluster.engine.__getattribute__(f"{action}_stack")("pause")
        done = cluster.settle(started["id"])
        assert done["stack_status"] == expected, done["stack_status_reason"]
        return done

    run("suspend", "SUSPEND_COMPLETE")
    assert [f[1] for f in log_lines(log) if f[0] == "suspend"] == ["r3", "r2", "r1", "r0"]  # dependents first
    assert {r["resource_status"] for r in cluster.engine.resources("pause")} == {"SUSPEND_COMPLETE"}
    run("resume", "RESUME_COMPLETE")
    assert [f[1] for f in log_lines(log) if f[0] == "resume"] == ["r0", "r1", "r2", "r3"]
    run("check", "CHECK_COMPLETE")
    assert {r["resource_status"] for r in cluster.engine.resources("pause")} == {"CHECK_COMPLETE"}

    cluster.engine.mark_unhealthy("pause", "r2", reason="disk gone")
    done = run("check", "CHECK_FAILED")
    assert done["stack_status_reason"] == (
        "Resource CHECK failed: Can not check r2, its last action ended CHECK_FAILED")
    statuses = {r["resource_name"]: r["resource_status"] for r in cluster.engine.resources("pause")}
    assert statuses == {"r0": "CHECK_COMPLETE", "r1": "CHECK_COMPLETE", "r2": "CHECK_FAILED", "r3": "CHECK_COMPLETE"}
    assert actions_of(log, "suspend") == actions_of(log, "resume") == {f"r{i}": 1 for i in range(4)}


def test_an_adopt_runs_on_the_workers_and_creates_only_what_it_was_not_given(cluster, tmp_path):
    cluster.start_worker(), cluster.start_worker()
    log = tmp_path / "made.log"
    template = stack_template({"kept": recorded(log, "k"), "new": recorded(log, {"get_attr": ["kept", "value"]})},
                              new={"get_attr": ["new", "value"]})
    started = cluster.engine.create_stack("taken", template, adopted_data={
        "kept": {"resource_id": "phys-kept", "data": {"note": "from before"}}})
    done = cluster.settle(started["id"])
    assert done["stack_status"] == "ADOPT_COMPLETE", done["stack_status_reason"]
    assert actions_of(log, "create") == {"new": 1}  # the adopted one is taken over, not made
    rows = {row.name: row for row in cluster.engine.store.get_resources(started["id"])}
    assert rows["kept"].physical_resource_id == "phys-kept" and rows["kept"].data == {"note": "from before"}
    assert cluster.engine.outputs("taken")[0]["output_value"] == "k"


def test_creates_within_an_update_wait_without_holding_a_worker(cluster, tmp_path):
    cluster.start_worker(concurrency=1)
    base = {"heat_template_version": "2018-08-31", "resources": {"first": {"type": "OS::Heat::None"}}}
    started = cluster.engine.create_stack("grow", base)
    assert cluster.settle(started["id"])["stack_status"] == "CREATE_COMPLETE"
    grown = {f"w{i}": {"type": "OS::Heat::TestResource", "properties": {"wait_secs": 1.5}} for i in range(4)}
    cluster.engine.update_stack("grow", {**base, "resources": {**base["resources"], **grown}})
    done = cluster.settle(started["id"])
    assert done["stack_status"] == "UPDATE_COMPLETE", done["stack_status_reason"]
    events = [e["resource_status"] for e in cluster.engine.events("grow") if e["resource_name"] in grown]
    # one process with one slot: the four waited at once, none after another
    assert events.count("CREATE_COMPLETE") == 4
    assert events.index("CREATE_COMPLETE") > max(i for i, s in enumerate(events) if s == "CREATE_IN_PROGRESS")


def test_a_cancelled_update_rolls_back_on_the_workers(cluster, tmp_path):
    import time

    cluster.start_worker(), cluster.start_worker()
    log = tmp_path / "made.log"
    before = stack_template({"a": recorded(log, "a1")})
    started = cluster.engine.create_stack("halt", before)
    assert cluster.settle(started["id"])["stack_status"] == "CREATE_COMPLETE"
    slow = {"type": "OS::Heat::TestResource", "properties": {"wait_secs": 600}}
    cluster.engine.update_stack("halt", stack_template({"a": recorded(log, "a1"), "slow": slow}),
                                disable_rollback=False)
    limit = time.monotonic() + 120
    while not any(r["resource_name"] == "slow" and r["resource_status"] == "CREATE_IN_PROGRESS"
                  for r in cluster.engine.resources("halt")):
        assert time.monotonic() < limit
        time.sleep(0.1)
    cluster.engine.cancel_stack("halt")  # from any process: the workers hear it through the database
    done = cluster.settle(started["id"])
    assert done["stack_status"] == "ROLLBACK_COMPLETE", done["stack_status_reason"]
    assert [r["resource_name"] for r in cluster.engine.resources("halt")] == ["a"]
    assert cluster.engine.template("halt") == before
    cancelled = [e for e in cluster.engine.events("halt") if e["resource_status"] == "UPDATE_FAILED"]
    assert [e["resource_status_reason"] for e in cancelled] == ["Stack UPDATE cancelled"]


def test_sigkill_of_a_worker_mid_update_replaces_each_resource_exactly_once(cluster, tmp_path):
    import time

    doomed, survivor = cluster.start_worker(), cluster.start_worker()
    log = tmp_path / "made.log"
    names = [f"r{i}" for i in range(6)]
    started = cluster.engine.create_stack("swap", stack_template({n: recorded(log, "old") for n in names}))
    assert cluster.settle(started["id"])["stack_status"] == "CREATE_COMPLETE"
    made_before = len(log_lines(log))
    replaced = {n: recorded(log, "new") for n in names}
    for definition in replaced.values():
        definition["properties"]["hold"] = 1.5  # inside handle_create, after the id is stored
    cluster.engine.update_stack("swap", stack_template(replaced))
    limit = time.monotonic() + 120
    while not any(int(f[3]) == doomed.pid for f in log_lines(log)[made_before:]):
        assert time.monotonic() < limit, "the doomed worker never started a replacement"
        time.sleep(0.05)
    cluster.kill(doomed)

    done = cluster.settle(started["id"])
    assert done["stack_status"] == "UPDATE_COMPLETE", done["stack_status_reason"]
    assert actions_of(log, "create") == {n: 2 for n in names}  # the original and one replacement each
    assert actions_of(log, "delete") == {n: 1 for n in names}  # each original once
    rows = rows_by_name(cluster, started["id"])
    assert all(len(found) == 1 and (found[0].action, found[0].status) == ("CREATE", "COMPLETE")
               for found in rows.values())


def test_an_update_in_place_whose_worker_is_lost_fails_saying_so(cluster, tmp_path):
    """Its new properties are stored before the plug-in acts: planned again it would look done."""
    import time

    doomed, survivor = cluster.start_worker(), cluster.start_worker()
    log = tmp_path / "made.log"
    names = [f"r{i}" for i in range(4)]

    def held(tag):
        resources = {n: recorded(log, "v", tag=tag) for n in names}
        for definition in resources.values():
            definition["properties"]["hold"] = 1.5
        return stack_template(resources)

    started = cluster.engine.create_stack("lost", held("a"))
    assert cluster.settle(started["id"])["stack_status"] == "CREATE_COMPLETE"
    cluster.engine.update_stack("lost", held("b"))
    limit = time.monotonic() + 120
    while not any(f[0] == "update" and int(f[3]) == doomed.pid for f in log_lines(log)):
        assert time.monotonic() < limit, "the doomed worker never started an update"
        time.sleep(0.05)
    cluster.kill(doomed)
    lost = {f[1] for f in log_lines(log) if f[0] == "update" and int(f[3]) == doomed.pid}

    done = cluster.settle(started["id"])
    assert done["stack_status"] == "UPDATE_FAILED"
    assert "the worker updating it was lost before the update ended" in done["stack_status_reason"]
    statuses = {r["resource_name"]: r["resource_status"] for r in cluster.engine.resources("lost")}
    assert {statuses[n] for n in lost} == {"UPDATE_FAILED"}
    assert not any(s.endswith("IN_PROGRESS") for s in statuses.values())
    assert set(actions_of(log, "update").values()) == {1}  # none updated a second time


def outputs(cluster, stack, names):
    return {n: cluster.engine.resource(stack, n)["attributes"]["output"] for n in names}


def overlapping(events, names, action):
    """Did the ``action``s of ``names`` in these events all start before any of them ended?"""
    statuses = [e["resource_status"] for e in events if e["resource_name"] in names]
    starts = [i for i, status in enumerate(statuses) if status == f"{action}_IN_PROGRESS"]
    ends = [i for i, status in enumerate(statuses) if status == f"{action}_COMPLETE"]
    return len(starts) == len(ends) == len(names) and max(starts) < min(ends)


def test_updates_in_place_and_their_rollback_wait_without_holding_a_worker(cluster, tmp_path):
    cluster.start_worker(concurrency=1)
    names = [f"w{i}" for i in range(3)]

    def waiting(value, **more):
        return {n: {"type": "OS::Heat::TestResource",
                    "properties": {"value": value, "action_wait_secs": {"update": 1.5}}} for n in names} | more

    started = cluster.engine.create_stack("slowupd", stack_template(waiting("a")))
    assert cluster.settle(started["id"])["stack_status"] == "CREATE_COMPLETE"
    seen = len(cluster.engine.events("slowupd"))
    cluster.engine.update_stack("slowupd", stack_template(waiting("b")))
    done = cluster.settle(started["id"])
    assert done["stack_status"] == "UPDATE_COMPLETE", done["stack_status_reason"]
    # one process with one slot: the three updates waited at once, none after another
    assert overlapping(cluster.engine.events("slowupd")[seen:], names, "UPDATE")
    assert outputs(cluster, "slowupd", names) == dict.fromkeys(names, "b")

    seen = len(cluster.engine.events("slowupd"))
    bad = {"type": "OS::Heat::TestResource", "depends_on": names, "properties": {"fail": True}}
    cluster.engine.update_stack("slowupd", stack_template(waiting("c", bad=bad)), disable_rollback=False)
    done = cluster.settle(started["id"])
    assert done["stack_status"] == "ROLLBACK_COMPLETE", done["stack_status_reason"]
    events = cluster.engine.events("slowupd")[seen:]
    forward = next(i for i, e in enumerate(events) if e["resource_name"] == "bad")
    assert overlapping(events[:forward], names, "UPDATE")  # to "c"
    assert overlapping(events[forward:], names, "UPDATE")  # and back to "b", in the rollback


def test_a_resource_paused_at_a_pre_update_hook_holds_no_worker_slot(cluster, tmp_path):
    import time

    from stoker.template.environment import Environment

    from .test_workers import creates

    cluster.start_worker(concurrency=1)
    log = tmp_path / "made.log"
    before = stack_template({"held": {"type": "OS::Heat::TestResource", "properties": {"value": "a"}}})
    started = cluster.engine.create_stack("hookupd", before)
    assert cluster.settle(started["id"])["stack_status"] == "CREATE_COMPLETE"
    after = stack_template({"held": {"type": "OS::Heat::TestResource", "properties": {"value": "b"}},
                            "other": recorded(log, "o")})
    hooked = Environment.from_dict({"resource_registry": {"resources": {"held": {"hooks": "pre-update"}}}})
    cluster.engine.update_stack("hookupd", after, environment=hooked)
    # "held" and "other" are independent: either may take the only slot first
    wait_for(lambda: cluster.engine.resource("hookupd", "held")["resource_status_reason"]
             == "UPDATE paused until Hook pre-update is cleared", "the pre-update hook pause", limit=60)
    limit = time.monotonic() + 60
    while creates(log) != {"other": 1}:  # made while "held" stays paused in the only slot's worker
        assert time.monotonic() < limit, "the paused resource held the only worker slot"
        time.sleep(0.1)
    held = cluster.engine.resource("hookupd", "held")
    assert held["resource_status_reason"] == "UPDATE paused until Hook pre-update is cleared"

    cluster.engine.clear_hook("hookupd", "held")
    done = cluster.settle(started["id"])
    assert done["stack_status"] == "UPDATE_COMPLETE", done["stack_status_reason"]
    assert outputs(cluster, "hookupd", ["held"]) == {"held": "b"}


def test_parked_updates_in_place_finish_once_when_a_worker_is_lost(cluster, tmp_path):
    """The countdown tasks a killed worker held come back to the other one, which polls the
    updates where they stood: none is started a second time."""
    import time

    doomed, survivor = cluster.start_worker(), cluster.start_worker()
    names = [f"w{i}" for i in range(4)]

    def waiting(value):
        return stack_template({n: {"type": "OS::Heat::TestResource",
                                   "properties": {"value": value, "action_wait_secs": {"update": 3}}} for n in names})

    started = cluster.engine.create_stack("lostpark", waiting("a"))
    assert cluster.settle(started["id"])["stack_status"] == "CREATE_COMPLETE"
    cluster.engine.update_stack("lostpark", waiting("b"))
    limit = time.monotonic() + 60
    # every update parked: its poll stored (a worker lost inside handle_update, before that, fails
    # the update on purpose -- another test's subject)
    while rows(cluster, "SELECT count(*) FROM resource WHERE stack_id = :stack AND action = 'UPDATE' "
                        "AND status = 'IN_PROGRESS' AND CAST(data AS jsonb) ? :key",
               stack=started["id"], key=POLL_KEY)[0][0] < 4:
        assert time.monotonic() < limit, "the updates never all parked"
        time.sleep(0.05)
    cluster.kill(doomed)

    done = cluster.settle(started["id"])
    assert done["stack_status"] == "UPDATE_COMPLETE", done["stack_status_reason"]
    updates = Counter((e["resource_name"], e["resource_status"]) for e in cluster.engine.events("lostpark")
                      if e["resource_status"].startswith("UPDATE_") and e["resource_name"] in names)
    assert updates == Counter({(n, s): 1 for n in names for s in ("UPDATE_IN_PROGRESS", "UPDATE_COMPLETE")})
    assert outputs(cluster, "lostpark", names) == dict.fromkeys(names, "b")
    assert survivor.poll() is None
