"""Hidden parameter values, and everything derived from them, are encrypted in the database:
the raw SQLite file and every PostgreSQL row are searched for the clear text."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from sqlalchemy import create_engine, inspect, text

from stoker.template.environment import Environment

PASSWORD = "Sup3r-S3cret-Passw0rd"
NEW_PASSWORD = "An0ther-S3cret-Passw0rd"
API_KEY = "KEY-hunter2-FROM-ENV"
CHILD = """heat_template_version: 2018-08-31
parameters:
  token: {type: string}
resources:
  inner:
    type: OS::Heat::Value
    properties: {value: {str_replace: {template: "inner-TOKEN", params: {TOKEN: {get_param: token}}}}}
outputs:
  inner: {value: {get_attr: [inner, value]}}
"""
TEMPLATE = {
    "heat_template_version": "2018-08-31",
    "parameters": {"password": {"type": "string", "hidden": True}, "api_key": {"type": "string", "hidden": True},
                   "plain": {"type": "string", "default": "visible-value"}},
    "resources": {
        "derived": {"type": "OS::Heat::Value", "properties": {"value": {"str_replace": {
            "template": "user:PW@KEY", "params": {"PW": {"get_param": "password"}, "KEY": {"get_param": "api_key"}}}}}},
        "salted": {"type": "OS::Heat::RandomString", "properties": {"length": 8, "salt": {"get_param": "password"}}},
        "nested": {"type": "child.yaml", "properties": {"token": {"get_param": "password"}}},
        "meta": {"type": "OS::Heat::None", "metadata": {"copy": {"get_param": "password"}}},
    },
    "outputs": {"derived": {"value": {"get_attr": ["derived", "value"]}}},
}


def _raw_database(db_url: str) -> str:
    """Everything the database holds, as text: the SQLite file's bytes, or every PostgreSQL row."""
    if db_url.startswith("sqlite"):
        path = Path(db_url.split("///", 1)[1])
        sqlite3.connect(path).execute("PRAGMA wal_checkpoint(TRUNCATE)").close()
        files = [path, *path.parent.glob(path.name + "-*")]
        return "".join(f.read_bytes().decode("latin-1") for f in files if f.exists())
    engine = create_engine(db_url)
    dump = []
    with engine.connect() as conn:
        for table in inspect(conn).get_table_names():
            dump.extend(str(row) for row in conn.execute(text(f'SELECT * FROM "{table}"')))
    engine.dispose()
    return "\n".join(dump)


def test_hidden_values_and_what_is_made_of_them_are_not_in_the_database(make_engine, db_url):
    from stoker.template.template import Template

    engine = make_engine()
    template = Template(TEMPLATE, {"child.yaml": CHILD})
    env = Environment.from_dict({"parameter_defaults": {"api_key": API_KEY}})
    result = engine.create_stack("s", template, env, {"password": PASSWORD})
    assert result["stack_status"] == "CREATE_COMPLETE", result
    # the values did reach the resources, and read back in clear through the engine
    assert {o["output_key"]: o["output_value"] for o in result["outputs"]} == {
        "derived": f"user:{PASSWORD}@{API_KEY}"}
    assert engine.resource("s", "meta")["metadata"] == {"copy": PASSWORD}
    updated = engine.update_stack("s", existing=True, parameters={"password": NEW_PASSWORD})
    assert updated["stack_status"] == "UPDATE_COMPLETE", updated
    assert engine.outputs("s")[0]["output_value"] == f"user:{NEW_PASSWORD}@{API_KEY}"

    generated = engine.resource("s", "salted")["attributes"]["value"]  # a RandomString's value is a secret too
    assert len(generated) == 8

    raw = _raw_database(db_url)
    assert "visible-value" in raw or "inner-" in raw  # the search does see stored text
    for secret in (PASSWORD, NEW_PASSWORD, API_KEY, generated):
        assert secret not in raw, f"{secret} stored in clear"
    # a stack without hidden values is stored as before, but for generated secrets
    plain = engine.create_stack("p", {"heat_template_version": "2018-08-31", "resources": {
        "v": {"type": "OS::Heat::Value", "properties": {"value": "plain-text-42"}},
        "r": {"type": "OS::Heat::RandomString", "properties": {"length": 12}}}})
    assert plain["stack_status"] == "CREATE_COMPLETE"
    random = engine.resource("p", "r")["attributes"]["value"]
    raw = _raw_database(db_url)
    assert "plain-text-42" in raw and random not in raw


def test_the_stack_reads_back_after_a_restart(make_engine, db_url):
    from stoker.template.template import Template

    make_engine().create_stack("s", Template(TEMPLATE, {"child.yaml": CHILD}),
                               parameters={"password": PASSWORD, "api_key": API_KEY})
    later = make_engine()  # another process, the same key
    assert later.outputs("s")[0]["output_value"] == f"user:{PASSWORD}@{API_KEY}"
    assert later.delete_stack("s")["stack_status"] == "DELETE_COMPLETE"
