"""Every ``ctx`` verb, called as scripts call it: the real ``ctx`` command in a bash script."""

from __future__ import annotations

import json

import pytest

from stoker.workflows.operation_context import AbortRequested, OperationFailed, RetryRequested
from stoker.workflows.scripts import Script

from .fakes import Recorder, node_context, relationship_context, run, write_script


def _bash(tmp_path, body: str, inputs: dict | None = None) -> Script:
    return Script(write_script(tmp_path, "op.sh", "set -e\n" + body), dict(inputs or {}))


def _lines(recorder: Recorder) -> list[str]:
    """What the script echoed (its stdout lines), without the runner's own messages."""
    return [m for m in recorder.messages("info") if not m.startswith(("Executing:", "Execution done"))]


def test_identity_verbs_answer_from_the_context(tmp_path):
    recorder = Recorder()
    run(node_context(tmp_path, recorder), _bash(tmp_path, """
        echo "$(ctx instance id)|$(ctx instance index)|$(ctx instance host-id)"
        echo "$(ctx node id)|$(ctx node name)|$(ctx node type)|$(ctx -j node type-hierarchy)"
        echo "$(ctx deployment id)|$(ctx blueprint id)|$(ctx execution-id)|$(ctx workflow-id)|$(ctx type)"
        echo "$(ctx operation name)|$(ctx operation retry-number)|$(ctx operation max_retries)"
    """))
    assert _lines(recorder) == [
        "web_abc123|2|host_1",
        'web|web|cloudify.nodes.WebServer|["cloudify.nodes.Root", "cloudify.nodes.WebServer"]',
        "dep1|bp1|ex1|install|node-instance",
        "cloudify.interfaces.lifecycle.create|0|2",
    ]


def test_runtime_properties_set_with_json_prefix_and_dotted_paths(tmp_path):
    recorder = Recorder()
    ctx = node_context(tmp_path, recorder, runtime={"old": "kept"})
    run(ctx, _bash(tmp_path, """
        ctx instance runtime-properties port @8080
        ctx instance runtime-properties name plain-text
        ctx instance runtime-properties config '@{"a": {"b": [1, 2]}}'
        ctx instance runtime-properties config.a.c true
        ctx instance runtime_properties flag @true
        echo "$(ctx instance runtime-properties port)"
        echo "$(ctx instance runtime-properties config.a.b[1])"
        echo "$(ctx -j instance runtime-properties config)"
        echo "$(ctx instance runtime-properties flag)"
    """))
    assert ctx.instance.runtime_properties == {"old": "kept", "port": 8080, "name": "plain-text",
                                               "config": {"a": {"b": [1, 2], "c": "true"}}, "flag": True}
    assert _lines(recorder) == ["8080", "2", '{"a": {"b": [1, 2], "c": "true"}}', "True"]
    # each set was stored before ctx answered: five versions, the first with only the port added
    versions = recorder.stored["web_abc123"]
    assert len(versions) == 5 and versions[0] == {"old": "kept", "port": 8080}


def test_a_set_property_survives_the_script_dying_right_after(tmp_path):
    recorder = Recorder()
    ctx = node_context(tmp_path, recorder)
    with pytest.raises(OperationFailed, match="exited with code -9|exited with code 137"):
        run(ctx, _bash(tmp_path, "ctx instance runtime-properties pid @$$\nkill -9 $$\n"))
    assert recorder.stored["web_abc123"][-1] == {"pid": ctx.instance.runtime_properties["pid"]}


def test_reading_a_missing_property_fails_the_ctx_command(tmp_path):
    recorder = Recorder()
    run(node_context(tmp_path, recorder), _bash(tmp_path, """
        if ctx instance runtime-properties nope 2>err.txt; then echo found; else echo "missing: $(cat err.txt)"; fi
    """.replace("err.txt", str(tmp_path / "err.txt"))))
    assert _lines(recorder) == ["missing: ctx: illegal path: nope"]


def test_node_properties_read_whole_and_by_path(tmp_path):
    recorder = Recorder()
    run(node_context(tmp_path, recorder), _bash(tmp_path, """
        echo "$(ctx node properties port)|$(ctx node properties tls.on)|$(ctx -j node properties)"
        ctx node properties port 9 2>/dev/null || echo "read-only"
    """))
    assert _lines(recorder) == ['8080|True|{"port": 8080, "tls": {"on": true}}', "read-only"]


def test_logger_levels_go_to_the_operation_log(tmp_path):
    recorder = Recorder()
    run(node_context(tmp_path, recorder), _bash(tmp_path, """
        ctx logger info "starting up"
        ctx logger warning careful now
        ctx logger error "it broke"
        ctx logger debug details
        ctx logger shout x 2>/dev/null || echo "no such level"
    """))
    assert ("info", "starting up") in recorder.logs
    assert ("warning", "careful now") in recorder.logs
    assert ("error", "it broke") in recorder.logs
    assert ("debug", "details") in recorder.logs
    assert "no such level" in _lines(recorder)


def test_operation_inputs_by_ctx_and_environment(tmp_path):
    recorder = Recorder()
    inputs = {"port": 8080, "debug": True, "tags": ["a", "b"], "conf": {"k": "v"}, "name": "web", "none": None}
    run(node_context(tmp_path, recorder, inputs=inputs), _bash(tmp_path, """
        echo "$port|$debug|$tags|$conf|$name|$none"
        echo "$(ctx operation inputs port)|$(ctx -j operation inputs conf)"
    """, inputs))
    assert _lines(recorder) == ['8080|true|["a", "b"]|{"k": "v"}|web|None', '8080|{"k": "v"}']


def test_returns_gives_the_operation_result_once(tmp_path):
    recorder = Recorder()
    assert run(node_context(tmp_path, recorder), _bash(tmp_path, "ctx returns '@{\"ok\": 1}'\n")) == {"ok": 1}
    with pytest.raises(OperationFailed):
        run(node_context(tmp_path, recorder), _bash(tmp_path, "ctx returns 1\nctx returns 2\n"))
    assert any("ctx may only abort or return once" in m for m in recorder.messages("warning"))


def test_operation_retry_asks_for_another_attempt_with_its_interval(tmp_path):
    recorder = Recorder()
    with pytest.raises(RetryRequested) as caught:
        run(node_context(tmp_path, recorder), _bash(tmp_path, "ctx operation retry 'not yet' @3\necho after\n"))
    assert str(caught.value) == "not yet" and caught.value.interval == 3
    assert "after" in _lines(recorder)  # the script goes on; the retry happens when it ends


def test_retry_operation_and_abort_operation_stop_the_script(tmp_path):
    recorder = Recorder()
    with pytest.raises(RetryRequested) as caught:
        run(node_context(tmp_path, recorder), _bash(tmp_path, "ctx retry-operation 'wait for db'\necho after\n"))
    assert str(caught.value) == "wait for db" and caught.value.interval is None
    assert "after" not in _lines(recorder)
    with pytest.raises(AbortRequested, match="no way"):
        run(node_context(tmp_path, recorder), _bash(tmp_path, "ctx abort-operation 'no way'\n"))


def test_download_resource_copies_inside_the_blueprint_and_refuses_escapes(tmp_path):
    root = tmp_path / "bp"
    write_script(root, "files/app.conf", "port=1\n")
    (tmp_path / "secret.txt").write_text("s3cret")
    (root / "link").symlink_to(tmp_path / "secret.txt")
    recorder = Recorder()
    target = tmp_path / "out" / "copy.conf"
    run(node_context(root, recorder), _bash(root, f"""
        cat "$(ctx download-resource files/app.conf)"
        echo "$(ctx download-resource files/app.conf {target})"
        for bad in ../secret.txt /etc/passwd link files/none; do
            ctx download-resource $bad 2>>{tmp_path}/refused.txt || true
        done
    """))
    assert _lines(recorder)[:2] == ["port=1", str(target)]
    assert target.read_text() == "port=1\n"
    refused = (tmp_path / "refused.txt").read_text().splitlines()
    assert len(refused) == 4 and all(line.startswith("ctx: resource") for line in refused)
    assert "s3cret" not in "".join(m for _, m in recorder.logs)


def test_relationship_operations_see_source_and_target_not_instance(tmp_path):
    recorder = Recorder()
    ctx = relationship_context(tmp_path, recorder)
    run(ctx, _bash(tmp_path, """
        echo "$(ctx source instance id)|$(ctx source node name)|$(ctx target node properties name)"
        ctx source instance runtime-properties db_ip "$(ctx target instance runtime-properties ip)"
        ctx target instance runtime-properties clients '@["web_1"]'
        ctx instance id 2>/dev/null || echo "no instance here"
        echo "$(ctx type)"
    """))
    assert _lines(recorder) == ["web_1|web|main", "no instance here", "relationship-instance"]
    assert ctx.source.instance.runtime_properties == {"db_ip": "10.0.0.5"}
    assert ctx.target.instance.runtime_properties == {"ip": "10.0.0.5", "clients": ["web_1"]}
    assert recorder.stored["db_1"][-1] == {"ip": "10.0.0.5", "clients": ["web_1"]}


def test_source_and_target_are_refused_in_node_operations(tmp_path):
    recorder = Recorder()
    run(node_context(tmp_path, recorder), _bash(tmp_path, """
        ctx target instance id 2>/dev/null || echo refused
        ctx frobnicate 2>/dev/null || echo unknown
    """))
    assert _lines(recorder) == ["refused", "unknown"]


def test_ctx_works_with_a_minimal_path_and_no_stoker_on_it(tmp_path):
    recorder = Recorder()
    script = _bash(tmp_path, "echo \"$(ctx instance id) $(command -v ctx)\"\n")
    script.process = {"env": {"PATH": "/usr/bin:/bin", "PYTHONPATH": "", "VIRTUAL_ENV": ""}}
    run(node_context(tmp_path, recorder), script)
    [line] = _lines(recorder)
    assert line.startswith("web_abc123 /") and line.endswith("/bin/ctx")


def test_python_scripts_use_from_stoker_import_ctx(tmp_path):
    recorder = Recorder()
    ctx = node_context(tmp_path, recorder, inputs={"greeting": "hi"})
    script = Script(write_script(tmp_path, "op.py", """
import os
from stoker import ctx
from cloudify.state import ctx_parameters as inputs
assert "greeting" not in os.environ  # Cloudify gives a Python script its inputs as ctx_parameters only
ctx.logger.info("%s from %s", inputs["greeting"], ctx.instance.id)
props = ctx.instance.runtime_properties
props["a.b"] = {"n": ctx.node.properties["port"] + 1}
props["index"] = ctx.instance.index
print(sorted(props), ctx.operation.name, ctx.deployment.id, ctx.blueprint.id, ctx.node.type)
ctx.returns(props["index"] * 10)
"""), inputs={"greeting": "hi"})
    assert run(ctx, script) == 20
    assert ctx.instance.runtime_properties == {"a.b": {"n": 8081}, "index": 2}  # a literal key, not a path
    assert ("info", "hi from web_abc123") in recorder.logs
    assert "['a.b', 'index'] cloudify.interfaces.lifecycle.create dep1 bp1 cloudify.nodes.WebServer" in _lines(recorder)


def test_ctx_outside_an_operation_says_so(tmp_path):
    import subprocess
    import sys

    from stoker.workflows import ctx_client

    done = subprocess.run([sys.executable, "-S", ctx_client.__file__, "instance", "id"],
                          capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"})
    assert done.returncode == 1 and "CTX_SOCKET_URL is not set" in done.stderr and "Traceback" not in done.stderr


def test_bad_json_argument_is_reported_without_traceback(tmp_path):
    recorder = Recorder()
    run(node_context(tmp_path, recorder), _bash(tmp_path, """
        ctx instance runtime-properties x '@{broken' 2>"$OUT" || echo "refused"
    """.replace("$OUT", str(tmp_path / "err"))))
    assert _lines(recorder) == ["refused"]
    error = (tmp_path / "err").read_text()
    assert "is not JSON" in error and "Traceback" not in error


def test_cloudify_python_scripts_run_unchanged(tmp_path):
    recorder = Recorder()
    ctx = node_context(tmp_path, recorder)
    script = Script(write_script(tmp_path, "cfy.py", """
from cloudify import ctx
from cloudify.exceptions import NonRecoverableError
ctx.instance.runtime_properties["seen"] = ctx.node.properties["port"]
ctx.logger.info("from a Cloudify script")
raise NonRecoverableError("cannot go on")
"""))
    with pytest.raises(AbortRequested, match="cannot go on"):
        run(ctx, script)
    assert ctx.instance.runtime_properties == {"seen": 8080}
    assert ("info", "from a Cloudify script") in recorder.logs


def test_cloudify_retry_with_retry_after(tmp_path):
    recorder = Recorder()
    script = Script(write_script(tmp_path, "cfy.py", """
from cloudify.exceptions import OperationRetry
raise OperationRetry("later", retry_after=7)
"""))
    with pytest.raises(RetryRequested) as caught:
        run(node_context(tmp_path, recorder), script)
    assert str(caught.value) == "later" and caught.value.interval == 7
