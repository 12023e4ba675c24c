"""Typed secrets (Cloudify 7's ``cfy secrets create KEY --schema|--dict|--list``) against ``stoker api`` with the
real ``cfy`` 7.0.5 and cloudify-rest-client: a value of any JSON type checked against the secret's JSON Schema when
created or updated, read back decoded, read by ``get_secret`` in a blueprint as Cloudify's manager reads it (the JSON
text whole, the part a path names); a bad schema or value refused naming the secret, nothing stored; and ``cfy
secrets export|import`` carrying a secret's schema and provider.  Locally, ``stoker secret create --schema``."""

from __future__ import annotations

import json

import pytest

from .conftest import admin_server, cfy_on, rest_client

pytestmark = pytest.mark.slow  # each `cfy` command is a process of its own

pytest.importorskip("cloudify_rest_client")

DB_SCHEMA = {"type": "object", "properties": {"host": {"type": "string"}, "port": {"type": "integer"}},
             "required": ["host", "port"]}
#: outputs and an operation's inputs reading typed secrets whole and by a path into them
READER = """tosca_definitions_version: cloudify_dsl_1_4
imports: [cloudify/types/types.yaml]
node_templates:
  app:
    type: cloudify.nodes.Root
    interfaces:
      cloudify.interfaces.lifecycle:
        create:
          implementation: scripts/say.sh
          inputs: {port: {get_secret: [reader_db, port]}, password: {get_secret: [reader_creds, password]}}
outputs:
  whole: {value: {get_secret: reader_db}}
  port: {value: {get_secret: [reader_db, port]}}
  first_host: {value: {get_secret: [reader_hosts, 0]}}
  password: {value: {get_secret: [reader_creds, password]}}
"""
PASSPHRASE = "correct horse battery"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    yield from admin_server(tmp_path_factory, "typed")


@pytest.fixture(scope="module")
def cfy(server, tmp_path_factory):
    return cfy_on(server, tmp_path_factory.mktemp("typed-cfy"))


def as_json(run, *args: str):
    return json.loads(run(*args, "--json"))


def _refused(call, *args, **kwargs):
    from cloudify_rest_client.exceptions import CloudifyClientError

    with pytest.raises(CloudifyClientError) as refused:
        call(*args, **kwargs)
    return refused.value


def test_cfy_creates_updates_and_reads_typed_secrets(cfy, server):
    client = rest_client(server)
    cfy("secrets", "create", "db", "--schema", json.dumps(DB_SCHEMA), "-s", '{"host": "db1", "port": 5432}')
    shown = as_json(cfy, "secrets", "get", "db")
    assert (shown["value"], shown["schema"]) == ({"host": "db1", "port": 5432}, DB_SCHEMA)
    cfy("secrets", "create", "hosts", "--list", "-s", '["a.example", "b.example"]')
    cfy("secrets", "create", "flags", "--dict", "-s", '{"debug": false, "level": 3}')
    cfy("secrets", "create", "count", "--schema", '{"type": "integer", "minimum": 1}', "-s", "7")
    assert client.secrets.get("hosts").value == ["a.example", "b.example"]
    assert (client.secrets.get("flags").value, client.secrets.get("flags").schema) == (
        {"debug": False, "level": 3}, {"type": "object"})
    assert client.secrets.get("count").value == 7
    # replaced, it takes the new schema; false is a value, not "empty"
    cfy("secrets", "create", "count", "-u", "--schema", '{"type": "string"}', "-s", '"seven"')
    assert (client.secrets.get("count").value, client.secrets.get("count").schema) == ("seven", {"type": "string"})
    client.secrets.create("off", False, schema={"type": "boolean"})
    assert client.secrets.get("off").value is False
    assert "db" in cfy("secrets", "list")
    listed = {s.key: s.schema for s in client.secrets.list()}
    assert listed["db"] == DB_SCHEMA and listed["hosts"] == {"type": "array"}
    # cfy update reads the schema and sends the value decoded; the server checks it against the schema
    cfy("secrets", "update", "db", "-s", '{"host": "db2", "port": 6543}')
    assert client.secrets.get("db").value == {"host": "db2", "port": 6543}
    refused = cfy("secrets", "update", "db", "-s", '{"host": "db3", "port": "many"}', ok=False)
    assert "Error validating secret value of `db`: 'many' is not of type 'integer'" in refused
    assert client.secrets.get("db").value == {"host": "db2", "port": 6543}
    # an untyped secret is as it was: a string
    cfy("secrets", "create", "plain", "-s", '{"not": "parsed"}')
    assert (client.secrets.get("plain").value, client.secrets.get("plain").schema) == ('{"not": "parsed"}', None)


def test_a_bad_schema_or_value_is_refused_naming_the_secret_and_nothing_is_stored(cfy, server):
    client = rest_client(server)
    mismatch = _refused(client.secrets.create, "wrong_port", {"host": "h", "port": "x"}, schema=DB_SCHEMA)
    assert (mismatch.status_code, mismatch.error_code) == (409, "conflict_error")
    assert "Error validating secret value of `wrong_port`: 'x' is not of type 'integer'" in str(mismatch)
    not_schema = _refused(client.secrets.create, "bogus", {}, schema={"type": "bogus"})
    assert (not_schema.status_code, not_schema.error_code) == (400, "bad_parameters_error")
    assert "Invalid secret JSON schema of `bogus`" in str(not_schema)
    huge = {"type": "object", "properties": {f"p{n}": {"type": "string", "maxLength": n} for n in range(5000)}}
    too_large = _refused(client.secrets.create, "huge", {}, schema=huge)
    assert too_large.status_code == 400 and "over the 65536 a schema may have" in str(too_large)
    elsewhere = _refused(client.secrets.create, "remote", {"a": 1}, schema={"$ref": "http://127.0.0.1:9/s.json"})
    assert elsewhere.status_code == 400 and "Invalid secret JSON schema of `remote`: cannot resolve" in str(elsewhere)
    listed = _refused(client.secrets.create, "listed", [1], schema=[{"type": "array"}])
    assert listed.status_code == 400
    untyped = _refused(client.secrets.create, "untyped", {"a": 1})
    assert untyped.status_code == 400 and "give a schema" in str(untyped)
    # a hidden value is not repeated in the refusal
    hidden = _refused(client.secrets.create, "hidden_pin", "hunter2-pin", is_hidden_value=True,
                      schema={"type": "integer"})
    assert hidden.status_code == 409 and "hunter2-pin" not in str(hidden)
    assert "the value does not meet the schema's `type`" in str(hidden)
    kept = {s.key for s in client.secrets.list()}
    assert not kept & {"wrong_port", "bogus", "huge", "remote", "listed", "untyped", "hidden_pin"}
    # cfy's own checks, before it sends anything
    assert 'Expected a dict with a "type" key' in cfy("secrets", "create", "x", "--schema", "{}", "-s", "1", ok=False)
    assert "Traceback" not in server.log.read_text() and "hunter2-pin" not in server.log.read_text()


def test_get_secret_reads_a_typed_secret_whole_and_by_path(cfy, server, tmp_path):
    client = rest_client(server)
    cfy("secrets", "create", "reader_db", "--schema", json.dumps(DB_SCHEMA), "-s", '{"host": "db1", "port": 5432}')
    cfy("secrets", "create", "reader_hosts", "--list", "-s", '["first.example", "second.example"]')
    cfy("secrets", "create", "reader_creds", "--dict", "--hidden-value", "-s",
        '{"user": "app", "password": "hunter2-typed"}')
    (tmp_path / "reader" / "scripts").mkdir(parents=True)
    (tmp_path / "reader" / "blueprint.yaml").write_text(READER)
    (tmp_path / "reader" / "scripts" / "say.sh").write_text('ctx logger info "port $port password $password"\n')
    client.blueprints.upload(str(tmp_path / "reader" / "blueprint.yaml"), "reader")
    client.deployments.create("reader", "reader")
    outputs = client.deployments.outputs.get("reader").outputs
    # as Cloudify's manager: the secret whole is its JSON text, a path gives the part, typed
    assert json.loads(outputs["whole"]) == {"host": "db1", "port": 5432}
    assert (outputs["port"], outputs["first_host"]) == (5432, "first.example")
    assert outputs["password"] == "******"  # a string inside a hidden typed secret is hidden too
    printed = cfy("executions", "start", "install", "-d", "reader")  # cfy follows it to its end
    assert "port 5432 password ******" in printed and "hunter2-typed" not in printed
    [execution] = client.executions.list(deployment_id="reader", workflow_id="install")
    assert execution.status == "terminated", execution.error
    said = [e["message"] for e in client.events.list(execution_id=execution.id, include_logs=True)]
    assert "hunter2-typed" not in json.dumps(said)


def test_export_and_import_carry_the_schema_and_the_provider(cfy, server, tmp_path):
    client = rest_client(server)
    cfy("secrets", "providers", "create", "kept-here", "-y", "local", "-s")
    cfy("secrets", "create", "ported", "--schema", json.dumps(DB_SCHEMA), "-s", '{"host": "h", "port": 1}')
    cfy("secrets", "create", "provided", "-s", "from-here", "--provider", "kept-here", "-o", '{"path": "apps/web"}')
    exported = tmp_path / "secrets.json"
    cfy("secrets", "export", "-p", PASSPHRASE, "-o", str(exported), "--filter-by", "p")
    entries = {e["key"]: e for e in json.loads(exported.read_text())}
    assert (entries["provided"]["provider"], entries["provided"]["provider_options"]) == (
        "kept-here", {"path": "apps/web"})
    assert entries["ported"]["schema"] == DB_SCHEMA and entries["ported"]["provider"] is None
    for key in ("ported", "provided"):
        client.secrets.delete(key)
    cfy("secrets", "import", "-i", str(exported), "-p", PASSPHRASE)
    ported, provided = client.secrets.get("ported"), client.secrets.get("provided")
    assert (ported.value, ported.schema) == ({"host": "h", "port": 1}, DB_SCHEMA)
    assert (provided.value, provided.provider_name, provided.provider_options) == (
        "from-here", "kept-here", {"path": "apps/web"})
    # a provider the tenant does not see, a value its schema refuses: the whole file refused, nothing stored
    clear = [{**entries["provided"], "key": "lost", "provider": "nowhere", "encrypted": False, "value": ""},
             {**entries["ported"], "key": "typed_wrong", "encrypted": False, "value": '{"host": "h", "port": "x"}'}]
    refused = _refused(client.secrets.import_secrets, clear)
    assert refused.status_code == 400
    assert "secret 1: provider: Requested `SecretsProvider` with ID `nowhere` was not found" in str(refused)
    assert "secret 2: schema: Error validating secret value of `typed_wrong`" in str(refused)
    assert not {"lost", "typed_wrong"} & {s.key for s in client.secrets.list()}


def test_stoker_secret_create_with_a_schema_locally(here):
    made = here("secret", "create", "db", "--schema", json.dumps(DB_SCHEMA), "-s", '{"host": "h", "port": 5432}')
    assert made.exit_code == 0, made.output
    shown = json.loads(here("secret", "get", "db", "--format", "json").output)
    assert (shown["value"], shown["schema"]) == ({"host": "h", "port": 5432}, DB_SCHEMA)
    assert here("secret", "create", "hosts", "--list", "-s", '["a"]').exit_code == 0
    assert json.loads(here("secret", "get", "hosts", "--format", "json").output)["value"] == ["a"]
    assert here("secret", "update", "db", "-s", '{"host": "h2", "port": 1}').exit_code == 0
    assert json.loads(here("secret", "get", "db", "--format", "json").output)["value"] == {"host": "h2", "port": 1}
    wrong = here("secret", "update", "db", "-s", '{"host": "h3", "port": "x"}')
    assert wrong.exit_code == 1 and "Error validating secret value of `db`" in wrong.output
    assert "Traceback" not in wrong.output
    for args, said in ((["--schema", '{"type": "bogus"}', "-s", "1"], "Invalid secret JSON schema of `bad`"),
                       (["--schema", "not json", "-s", "1"], "Error decoding the JSON schema of secret `bad`"),
                       (["--dict", "-s", "hunter2-not-json", "--hidden"], "it is not JSON of type 'object'"),
                       (["--dict", "--list", "-s", "{}"], "give one of --schema, --dict and --list")):
        refused = here("secret", "create", "bad", *args)
        assert refused.exit_code != 0 and said in refused.output and "hunter2" not in refused.output
    assert "bad" not in here("secret", "list", "--format", "json").output
    assert json.loads(here("secret", "get", "db", "--format", "json").output)["value"] == {"host": "h2", "port": 1}
