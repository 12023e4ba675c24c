"""Authors' patterns over ``stoker api`` with cloudify-rest-client, matched within ``max_pattern_seconds``: a
typed secret's JSON Schema (``pattern``, ``patternProperties``, and ``additionalProperties`` beside them) and a
blueprint input's ``pattern`` constraint.  A value whose match would make ``re`` backtrack for hours is refused in
seconds, a 400 naming the secret or the input when the match ran out of time; nothing is stored.  Each request has
a 30 s time-out: a hang is a failure."""

from __future__ import annotations

import pytest

from .conftest import admin_server, rest_client

pytestmark = pytest.mark.slow  # a server of its own, and matches that run for a second

pytest.importorskip("cloudify_rest_client")

HOSTILE = "a" * 60 + "!"
OUT_OF_TIME = 'the regular expression "(a|aa)+$" took longer than 1 s to match (max_pattern_seconds)'


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    server = next(started := admin_server(tmp_path_factory, "patterns-rest"))
    yield rest_client(server, timeout=(5, 30))
    next(started, None)


def _refused(call, *args, **kwargs):
    from cloudify_rest_client.exceptions import CloudifyClientError

    with pytest.raises(CloudifyClientError) as refused:
        call(*args, **kwargs)
    return refused.value


def test_a_backtracking_pattern_refuses_the_value_naming_the_secret(client):
    timed_out = _refused(client.secrets.create, "pin", HOSTILE, schema={"type": "string", "pattern": "(a|aa)+$"})
    assert (timed_out.status_code, timed_out.error_code) == (400, "bad_parameters_error")
    assert f"Error validating secret value of `pin`: a pattern of the schema: {OUT_OF_TIME}" in str(timed_out)
    nested = _refused(client.secrets.create, "pin", "a" * 40 + "!", schema={"type": "string", "pattern": "(a+)+$"})
    assert nested.status_code == 409 and "does not match '(a+)+$'" in str(nested)
    assert "pin" not in [s.key for s in client.secrets.list()]
    client.secrets.create("pin", "aaa", schema={"type": "string", "pattern": "(a|aa)+$"})
    assert client.secrets.get("pin").value == "aaa"


@pytest.mark.parametrize("additional", [None, False])
def test_a_backtracking_pattern_property_refuses_the_key_naming_the_secret(client, additional):
    schema = {"type": "object", "patternProperties": {"(a|aa)+$": {"type": "integer"}}}
    if additional is not None:
        schema["additionalProperties"] = additional
    key = f"keys_{additional}".lower()
    timed_out = _refused(client.secrets.create, key, {HOSTILE: 1}, schema=schema)
    assert timed_out.status_code == 400
    assert f"Error validating secret value of `{key}`: a pattern of the schema: {OUT_OF_TIME}" in str(timed_out)
    client.secrets.create(key, {"aa": 1}, schema=schema)
    assert client.secrets.get(key).value == {"aa": 1}
    wrong = _refused(client.secrets.update, key, {"aa": "x"})
    assert wrong.status_code == 409


def test_unevaluated_properties_beside_pattern_properties_is_refused(client):
    refused = _refused(client.secrets.create, "uneval", {"x": 1}, schema={
        "patternProperties": {"^x": {}}, "unevaluatedProperties": False})
    assert refused.status_code == 400 and "unevaluatedProperties with patternProperties" in str(refused)


def test_a_backtracking_pattern_constraint_refuses_the_deployment(client, tmp_path):
    blueprint = tmp_path / "blueprint.yaml"
    blueprint.write_text("tosca_definitions_version: cloudify_dsl_1_4\nimports: [cloudify/types/types.yaml]\n"
                         "inputs:\n  x:\n    constraints: [{pattern: '(a|aa)+$'}]\n"
                         "node_templates:\n  n: {type: cloudify.nodes.Root}\n")
    client.blueprints.upload(str(blueprint), "patterned")
    refused = _refused(client.deployments.create, "patterned", "d1", inputs={"x": HOSTILE})
    assert refused.status_code == 400 and f"inputs.x: input x's constraint pattern: {OUT_OF_TIME}" in str(refused)
    assert "d1" not in [d.id for d in client.deployments.list()]
    client.deployments.create("patterned", "d2", inputs={"x": "aa"})
    assert "d2" in [d.id for d in client.deployments.list()]
