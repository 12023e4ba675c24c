"""Cloudify's searches, saved blueprint filters and label lists on ``stoker api``, through ``cfy`` and
cloudify-rest-client: what each answers for labelled blueprints and deployments, that another tenant's
resources never show, and that bad input (an unknown filter, a malformed rule or constraint) is a 4xx."""

from __future__ import annotations

import json
import time

import httpx
import pytest

from .conftest import cfy_on, cloudify_server, rest_client

pytestmark = pytest.mark.slow  # `cfy` commands are processes of their own

pytest.importorskip("cloudify_rest_client")

API = "/api/v3.1"
#: gold blueprints carry a label and a workflow of their own; every deployment has capabilities
GOLD = """tosca_definitions_version: cloudify_dsl_1_4
imports: [cloudify/types/types.yaml]
blueprint_labels:
  tier: {values: [gold]}
node_templates:
  host: {type: cloudify.nodes.Compute}
  app: {type: cloudify.nodes.Root, relationships: [{type: cloudify.relationships.contained_in, target: host}]}
capabilities:
  endpoint: {value: "http://gold"}
  port: {value: 8080}
workflows:
  hello: scripts/hello.sh
"""
PLAIN = """tosca_definitions_version: cloudify_dsl_1_4
imports: [cloudify/types/types.yaml]
node_templates:
  box: {type: cloudify.nodes.Root}
capabilities:
  endpoint: {value: "http://plain"}
"""


#: a web server and a database on a host, the host and the database each a scaling group of their own
TYPED = """tosca_definitions_version: cloudify_dsl_1_4
imports: [cloudify/types/types.yaml]
node_templates:
  vm: {type: cloudify.nodes.Compute}
  web: {type: cloudify.nodes.WebServer, relationships: [{type: cloudify.relationships.contained_in, target: vm}]}
  db: {type: cloudify.nodes.DBMS, relationships: [{type: cloudify.relationships.contained_in, target: vm}]}
groups:
  pair: {members: [vm]}
  store: {members: [db]}
policies:
  pairs: {type: cloudify.policies.scaling, properties: {default_instances: 2}, targets: [pair]}
  stores: {type: cloudify.policies.scaling, targets: [store]}
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cfy-searches")
    started = cloudify_server(tmp, [("admin", "default_tenant", "manager"), ("bob", "tenant-b", "manager"),
                                    ("cat", "tenant-c", "manager")],
                              extra=("--allow-local-resources",))
    yield started
    started.stop()


def _upload(client, tmp, blueprint_id: str, text: str) -> None:
    folder = tmp / blueprint_id
    (folder / "scripts").mkdir(parents=True)
    (folder / "scripts" / "hello.sh").write_text("ctx logger info hello\n")
    (folder / "blueprint.yaml").write_text(text)
    client.blueprints.upload(str(folder / "blueprint.yaml"), blueprint_id)


@pytest.fixture(scope="module")
def world(server, tmp_path_factory):
    """The default tenant: blueprints gold-bp (tier=gold) and plain-bp, deployments g-prod (env=prod) and
    p-dev (env=dev), secrets db-password and api-token.  Tenant B (bob): the same labels and names of its own."""
    tmp = tmp_path_factory.mktemp("cfy-searches-world")
    admin = rest_client(server)
    _upload(admin, tmp, "gold-bp", GOLD)
    _upload(admin, tmp, "plain-bp", PLAIN)
    admin.deployments.create("gold-bp", "g-prod", labels=[{"env": "prod"}])
    admin.deployments.create("plain-bp", "p-dev", labels=[{"env": "dev"}])
    admin.secrets.create("db-password", "x")
    admin.secrets.create("api-token", "y")
    bob = rest_client(server, "bob", "tenant-b")
    _upload(bob, tmp / "b", "bob-gold", GOLD.replace("gold]", "gold, bobs]"))
    bob.deployments.create("bob-gold", "b-prod", labels=[{"env": "prod"}, {"owner": "bob"}])
    bob.secrets.create("db-bob", "z")
    return admin


def _http(server, user: str = "admin", tenant: str = "default_tenant") -> httpx.Client:
    from .conftest import PASSWORD

    return httpx.Client(base_url=server.url + API, timeout=30, auth=(user, PASSWORD), headers={"Tenant": tenant})


def _refused(answer: httpx.Response, status: int, code: str) -> str:
    assert answer.status_code == status and answer.json()["error_code"] == code, answer.text
    return answer.json()["message"]


def test_blueprint_filters_through_cfy(server, world, tmp_path):
    cfy = cfy_on(server, tmp_path)
    cfy("blueprints", "filters", "create", "gold-only", "--labels-rule", "tier=gold")
    saved = world.blueprints_filters.get("gold-only")
    assert saved.labels_filter_rules == [{"key": "tier", "values": ["gold"], "operator": "any_of", "type": "label"}]
    assert [f.id for f in world.blueprints_filters.list()] == ["gold-only"]
    # a deployments filter of the same id is another filter
    world.deployments_filters.create("gold-only", [{"key": "env", "values": ["dev"], "operator": "any_of",
                                                     "type": "label"}])
    assert [d.id for d in world.deployments.list(filter_id="gold-only")] == ["p-dev"]
    assert [b["id"] for b in json.loads(cfy("blueprints", "list", "--filter-id", "gold-only", "--json"))] == [
        "gold-bp"]
    # rules sent with the filter's id: both apply
    assert [b.id for b in world.blueprints.list(filter_id="gold-only", filter_rules=[
        {"key": "id", "values": ["plain"], "operator": "starts_with", "type": "attribute"}])] == []
    # an update of attribute rules keeps the label rules (the manager's update)
    cfy("blueprints", "filters", "update", "gold-only", "--attrs-rule", "id starts-with gold")
    assert world.blueprints_filters.get("gold-only").value == [
        {"key": "tier", "values": ["gold"], "operator": "any_of", "type": "label"},
        {"key": "id", "values": ["gold"], "operator": "starts_with", "type": "attribute"}]
    cfy("blueprints", "filters", "update", "gold-only", "--labels-rule", "tier is null")
    assert [b.id for b in world.blueprints.list(filter_id="gold-only")] == []
    cfy("blueprints", "filters", "delete", "gold-only")
    assert world.blueprints_filters.list().items == []
    assert [d.id for d in world.deployments.list(filter_id="gold-only")] == ["p-dev"]
    world.deployments_filters.delete("gold-only")


def test_filters_refuse_bad_input_and_stay_in_their_tenant(server, world):
    admin, bob = _http(server), _http(server, "bob", "tenant-b")
    world.blueprints_filters.create("tiered", [{"key": "tier", "values": [], "operator": "is_not_null",
                                                "type": "label"}])
    assert "BlueprintsFilter" in _refused(admin.get("/blueprints", params={"_filter_id": "nope"}), 404,
                                          "not_found_error")
    _refused(admin.post("/searches/blueprints", params={"_filter_id": "nope"}, json={}), 404, "not_found_error")
    _refused(admin.get("/workflows", params={"_filter_id": "nope"}), 404, "not_found_error")
    for rules in ("tier=gold", [{"key": "tier"}], [{"key": "blueprint_id", "values": ["x"], "operator": "any_of",
                                                    "type": "attribute"}],
              [{"key": "tier", "values": ["gold"], "operator": "is_null", "type": "label"}],
              [{"key": "id", "values": ["x"], "operator": "is_not_empty", "type": "attribute"}]):
        _refused(admin.put("/filters/blueprints/bad", json={"filter_rules": rules}), 400, "invalid_filter_rule")
        _refused(admin.post("/searches/blueprints", json={"filter_rules": rules}), 400,
                 "invalid_filter_rule" if isinstance(rules, list) else "bad_parameters_error")
    assert "reserved" in _refused(admin.put("/filters/blueprints/csys-mine", json={"filter_rules": []}), 400,
                                  "bad_parameters_error")
    _refused(admin.put("/filters/blueprints/tiered", json={"filter_rules": []}), 409, "conflict_error")
    _refused(admin.patch("/filters/blueprints/tiered", json={}), 400, "illegal_action_error")
    _refused(admin.get("/filters/widgets"), 404, "not_found_error")
    # tenant B neither sees nor uses nor changes the default tenant's filter
    assert bob.get("/filters/blueprints").json()["items"] == []
    for answer in (bob.get("/filters/blueprints/tiered"), bob.get("/blueprints", params={"_filter_id": "tiered"}),
                   bob.patch("/filters/blueprints/tiered", json={"visibility": "tenant"}),
                   bob.delete("/filters/blueprints/tiered")):
        _refused(answer, 404, "not_found_error")
    assert [b["id"] for b in bob.get("/blueprints").json()["items"]] == ["bob-gold"]
    world.blueprints_filters.delete("tiered")


def test_label_keys_and_values_of_blueprints_and_deployments(server, world):
    assert list(world.blueprints_labels.list_keys()) == ["tier"]
    assert list(world.blueprints_labels.list_key_values("tier")) == ["gold"]
    assert list(world.deployments_labels.list_keys()) == ["env"]
    assert list(world.deployments_labels.list_key_values("env")) == ["dev", "prod"]
    assert list(world.deployments_labels.list_key_values("owner")) == []  # tenant B's key
    bob = rest_client(server, "bob", "tenant-b")
    assert list(bob.blueprints_labels.list_key_values("tier")) == ["bobs", "gold"]
    assert list(bob.deployments_labels.list_keys()) == ["env", "owner"]
    _refused(_http(server).get("/labels/widgets"), 404, "not_found_error")


def test_workflows_searched_by_the_deployments_they_belong_to(server, world):
    def names(**kwargs) -> set[str]:
        return {w.name for w in world.workflows.list(**kwargs)}

    prod = [{"key": "env", "values": ["prod"], "operator": "any_of", "type": "label"}]
    assert "hello" in names(filter_rules=prod) and "install" in names(filter_rules=prod)
    assert "hello" not in names(filter_rules=[{"key": "env", "values": ["dev"], "operator": "any_of",
                                               "type": "label"}])
    assert "hello" in names()  # GET /workflows: every deployment's
    assert "hello" not in names(_common_only=True)
    assert names(filter_rules=[{"key": "env", "values": ["qa"], "operator": "any_of", "type": "label"}]) == set()
    world.deployments_filters.create("prod", prod)
    assert "hello" in names(filter_id="prod", _common_only=True)  # only g-prod is met
    world.deployments_filters.delete("prod")
    bob = rest_client(server, "bob", "tenant-b")
    assert "hello" in {w.name for w in bob.workflows.list(filter_rules=prod)}
    assert {w.name for w in bob.workflows.list(filter_rules=[{"key": "id", "values": ["g-prod"],
                                                              "operator": "any_of", "type": "attribute"}])} == set()


def test_nodes_searched_by_constraints_and_rules(server, world):
    assert [n.id for n in world.nodes.list(deployment_id="g-prod", constraints={"name_pattern": {
        "starts_with": "ho"}})] == ["host"]
    assert sorted(n.id for n in world.nodes.list(constraints={"deployment_id": "g-prod", "valid_values": [
        "app", "box"]})) == ["app"]
    assert [n["id"] for n in world.nodes.list(constraints={"blueprint_id": "plain-bp"})] == ["box"]
    assert [n.id for n in world.nodes.list(deployment_id="g-prod", filter_rules=[
        {"key": "type", "values": ["cloudify.nodes.Compute"], "operator": "any_of", "type": "attribute"}])] == [
        "host"]
    admin, bob = _http(server), _http(server, "bob", "tenant-b")
    assert "deployment_id" in _refused(admin.post("/searches/nodes", json={"constraints": {"valid_values": ["a"]}}),
                                       400, "bad_parameters_error")
    _refused(admin.post("/searches/nodes", params={"deployment_id": "g-prod"},
                        json={"constraints": {"deployment_id": "g-prod"}}), 400, "bad_parameters_error")
    _refused(admin.post("/searches/nodes", json={"constraints": {"deployment_id": "g-prod",
                                                                 "blueprint_id": "gold-bp"}}),
             400, "bad_parameters_error")
    _refused(admin.post("/searches/nodes", json={"constraints": {"deployment_id": "g-prod",
                                                                 "name_pattern": {"regex": "h.*"}}}),
             400, "invalid_filter_rule")
    _refused(admin.post("/searches/nodes", json={"constraints": ["deployment_id"]}), 400, "bad_parameters_error")
    _refused(admin.post("/searches/nodes", params={"deployment_id": "g-prod"}, json={"filter_rules": [
        {"key": "state", "values": ["x"], "operator": "any_of", "type": "attribute"}]}), 400, "invalid_filter_rule")
    for target in ({"deployment_id": "g-prod"}, {"blueprint_id": "gold-bp"}):
        _refused(bob.post("/searches/nodes", json={"constraints": target}), 404, "not_found_error")


def test_node_instances_searched_by_id(server, world):
    every = {i.id: i.node_id for i in world.node_instances.list(deployment_id="g-prod")}
    host = next(i for i, node in every.items() if node == "host")
    assert [i.id for i in world.node_instances.search([host])] == [host]
    assert [i.node_id for i in world.node_instances.list(constraints={
        "deployment_id": "g-prod", "name_pattern": {"starts_with": "host"}})] == ["host"]
    assert list(world.node_instances.list(constraints={"deployment_id": "g-prod", "valid_values": ["nothing"]})) == []
    bob = rest_client(server, "bob", "tenant-b")
    assert list(bob.node_instances.search([host])) == []
    _refused(_http(server).post("/searches/node-instances", json={"constraints": {"name_pattern": {
        "contains": "h"}}}), 400, "bad_parameters_error")


def test_secrets_searched_by_key(server, world):
    assert [s.key for s in world.secrets.list(constraints={"name_pattern": {"starts_with": "db"}})] == [
        "db-password"]
    assert [s.key for s in world.secrets.list(constraints={"valid_values": ["api-token", "db-bob"]})] == [
        "api-token"]
    assert sorted(s.key for s in world.secrets.list(filter_rules=[{"key": "key", "values": ["-"],
                                                                   "operator": "contains", "type": "attribute"}])) \
        == ["api-token", "db-password"]
    bob = rest_client(server, "bob", "tenant-b")
    assert [s.key for s in bob.secrets.list(constraints={"name_pattern": {"starts_with": "db"}})] == ["db-bob"]
    _refused(_http(server).post("/searches/secrets", json={"filter_rules": [{"key": "value", "values": ["x"],
                                                                             "operator": "any_of",
                                                                             "type": "attribute"}]}),
             400, "invalid_filter_rule")


def test_capabilities_searched_by_key_and_value(server, world):
    found = world.deployments.capabilities.list("g-prod", constraints={"name_pattern": {"equals_to": "port"}})
    assert [(c["deployment_id"], c["capabilities"]) for c in found] == [("g-prod", [{"port": {"value": 8080}}])]
    # the deployment id is matched as a part of the id, as the manager does
    by_value = world.deployments.capabilities.list("-", constraints={"valid_values": ["http://plain"]})
    assert [(c["deployment_id"], c["capabilities"]) for c in by_value] == [
        ("p-dev", [{"endpoint": {"value": "http://plain"}}])]
    assert list(world.deployments.capabilities.list("g-prod", constraints={"valid_values": ["nothing"]})) == []
    bob = rest_client(server, "bob", "tenant-b")
    assert [c["deployment_id"] for c in bob.deployments.capabilities.list("prod")] == ["b-prod"]
    _refused(_http(server).post("/searches/capabilities", json={}), 400, "bad_parameters_error")


#: one operation that succeeds, then one that fails: the install fails, resumable
FAILING = """tosca_definitions_version: cloudify_dsl_1_4
imports: [cloudify/types/types.yaml]
node_templates:
  first: {type: cloudify.nodes.Root, interfaces: {cloudify.interfaces.lifecycle: {create: scripts/hello.sh}}}
  second:
    type: cloudify.nodes.Root
    interfaces: {cloudify.interfaces.lifecycle: {create: scripts/fail.sh}}
    relationships: [{type: cloudify.relationships.depends_on, target: first}]
"""


def _ended(client, execution_id: str) -> str:
    for _ in range(600):
        status = client.executions.get(execution_id).status
        if status in ("terminated", "failed", "cancelled"):
            return status
        time.sleep(0.2)
    raise AssertionError(f"execution {execution_id} did not end")


def test_events_of_a_deployment_deleted(server, world, tmp_path):
    cfy = cfy_on(server, tmp_path)
    world.deployments.create("plain-bp", "ev")
    assert _ended(world, world.executions.start("ev", "install").id) == "terminated"
    [install] = [e.id for e in world.executions.list(deployment_id="ev") if e.workflow_id == "install"]
    assert len(world.events.list(execution_id=install)) > 0
    from cloudify_rest_client.exceptions import CloudifyClientError

    bob = rest_client(server, "bob", "tenant-b")
    with pytest.raises(CloudifyClientError) as elsewhere:
        bob.events.delete("ev")
    assert elsewhere.value.status_code == 404
    admin = _http(server)
    _refused(admin.delete("/events", params={"deployment_id": "ev"}), 400, "bad_parameters_error")
    _refused(admin.delete("/events", params={"deployment_id": "ev", "type": "cloudify_event",
                                             "_range": "@timestamp,yesterday,"}), 400, "bad_parameters_error")
    # a range before the install leaves its events
    assert world.events.delete("ev", to_datetime="2000-01-01T00:00:00").items == [0]
    assert "No events to delete" in cfy("events", "delete", "ev", "--before", "2 weeks")
    assert "Deleted" in cfy("events", "delete", "ev")
    assert len(world.events.list(execution_id=install)) == 0
    assert "No events to delete" in cfy("events", "delete", "ev")

    folder = tmp_path / "failing"
    (folder / "scripts").mkdir(parents=True)
    (folder / "scripts" / "hello.sh").write_text("ctx logger info hello\n")
    (folder / "scripts" / "fail.sh").write_text("exit 1\n")
    (folder / "blueprint.yaml").write_text(FAILING)
    world.blueprints.upload(str(folder / "blueprint.yaml"), "failing")
    world.deployments.create("failing", "fails")
    failed = world.executions.start("fails", "install").id
    assert _ended(world, failed) == "failed"
    cfy("events", "delete", "fails", "--include-logs")
    # what a resume reads is kept: the operations that succeeded
    assert {e["event_type"] for e in world.events.list(execution_id=failed, include_logs=True)} == {
        "task_succeeded"}


def test_deployments_and_blueprints_searched_by_constraints(server, world):
    assert [b.id for b in world.blueprints.list(constraints={"labels": [{"tier": "gold"}]})] == ["gold-bp"]
    assert [d.id for d in world.deployments.list(constraints={"name_pattern": {"starts_with": "g-"}})] == ["g-prod"]
    world.deployments_filters.create("dev", [{"key": "env", "values": ["dev"], "operator": "any_of",
                                              "type": "label"}])
    assert [d.id for d in world.deployments.list(constraints={"filter_id": "dev"})] == ["p-dev"]
    assert [d.id for d in world.deployments.list(constraints={"filter_id": "dev", "labels": [{"env": "prod"}]})] == []
    world.deployments_filters.delete("dev")
    admin = _http(server)
    assert "not both" in _refused(admin.post("/searches/deployments", json={
        "constraints": {"labels": [{"env": "dev"}]},
        "filter_rules": [{"key": "env", "values": ["dev"], "operator": "any_of", "type": "label"}]}),
        400, "bad_parameters_error")
    _refused(admin.post("/searches/deployments", json={"constraints": {"labels": {"env": "dev"}}}), 400,
             "invalid_filter_rule")
    _refused(admin.post("/searches/deployments", json={"constraints": {"filter_id": "nope"}}), 404,
             "not_found_error")
    bob = rest_client(server, "bob", "tenant-b")
    assert [d.id for d in bob.deployments.list(constraints={"labels": [{"env": "prod"}]})] == ["b-prod"]


def test_node_types_and_scaling_groups_searched_by_constraints(server, tmp_path):
    """``client.nodes.types.list`` and ``client.deployments.scaling_groups.list`` (a ``node_type`` or a
    ``scaling_group`` input's choices), of a blueprint's plan or of deployments; in tenant C alone."""
    cat = rest_client(server, "cat", "tenant-c")
    _upload(cat, tmp_path, "typed", TYPED)
    cat.deployments.create("typed", "typed-1")

    def types(**asked) -> list[tuple[str, str]]:
        return sorted((n["id"], n["type"]) for n in cat.nodes.types.list(**asked))

    for where in ({"deployment_id": "typed-1"}, {"constraints": {"blueprint_id": "typed"}}):
        constraints = where.pop("constraints", {})
        # a valid value admits the types derived from it, a name pattern tests the type itself
        assert types(constraints={**constraints, "valid_values": ["cloudify.nodes.SoftwareComponent"]}, **where) == [
            ("db", "cloudify.nodes.DBMS"), ("web", "cloudify.nodes.WebServer")]
        assert types(constraints={**constraints, "name_pattern": {"ends_with": "Compute"}}, **where) == [
            ("vm", "cloudify.nodes.Compute")]
        assert types(node_type="cloudify.nodes.DBMS", constraints=constraints, **where) == [
            ("db", "cloudify.nodes.DBMS")]
        assert types(node_type="cloudify.nodes.DB", constraints=constraints, **where) == []  # an exact match
    assert [n["deployment_id"] for n in cat.nodes.types.list(deployment_id="typed-1")] == ["typed-1"] * 3

    def groups(**asked) -> list[tuple[str, list]]:
        return sorted((g.name, g.members) for g in cat.deployments.scaling_groups.list(**asked))

    assert groups(deployment_id="typed") == [("pair", ["vm"]), ("store", ["db"])]  # a substring of the id
    assert groups(blueprint_id="typed", constraints={"name_pattern": {"starts_with": "st"}}) == [("store", ["db"])]
    assert groups(deployment_id="typed-1", constraints={"valid_values": ["pair", "other"]}) == [("pair", ["vm"])]
    assert groups(deployment_id="typed-1", _search="pai") == []
    pair = cat.deployments.scaling_groups.list(deployment_id="typed-1", _search="pair")[0]
    assert pair.properties["planned_instances"] == 2
    # another tenant's deployment or blueprint is not searched; a search names one, the constraints are Cloudify's
    bob = rest_client(server, "bob", "tenant-b")
    assert bob.deployments.scaling_groups.list(deployment_id="typed").items == []
    assert rest_client(server).deployments.scaling_groups.list(deployment_id="typed").items == []
    assert sorted(g.name for g in rest_client(server).deployments.scaling_groups.list(
        deployment_id="typed-1", _all_tenants=True)) == ["pair", "store"]  # the operator, of every tenant
    http = _http(server, "cat", "tenant-c")
    for kind in ("node-types", "scaling-groups"):
        assert "Please provide a valid 'blueprint_id' or 'deployment_id'" in _refused(http.post(
            f"/searches/{kind}", json={"constraints": {}}), 400, "bad_parameters_error")
        _refused(http.post(f"/searches/{kind}", params={"deployment_id": "typed-1"},
                           json={"constraints": {"name_pattern": {"like": "x"}}}), 400, "invalid_filter_rule")
        _refused(http.post(f"/searches/{kind}", params={"deployment_id": "typed-1"},
                           json={"constraints": {"valid_values": "pair"}}), 400, "invalid_filter_rule")
    assert _http(server, "bob", "tenant-b").post("/searches/node-types", params={"blueprint_id": "typed"},
                                                 json={}).status_code == 404


def test_lists_sorted_and_searched_by_substring_of_id_or_display_name(server, tmp_path):
    """``cfy deployments|blueprints list --sort-by --descending --search``, and any list's ``_search``."""
    cat = rest_client(server, "cat", "tenant-c")
    for blueprint_id in ("web-a", "web-b", "db-a"):
        _upload(cat, tmp_path, blueprint_id, PLAIN)
    cat.deployments.create("web-a", "front-1", display_name="Shop front")
    cat.deployments.create("web-b", "front-2", display_name="Blog")
    cat.deployments.create("db-a", "back-1", display_name="Shop orders")
    cat.secrets.create("shop-key", "x")
    cat.secrets.create("blog-key", "y")
    cfy = cfy_on(server, tmp_path)
    cfy("profiles", "set", "-u", "cat", "-t", "tenant-c")

    def listed(*args: str) -> list[str]:
        return [row["id"] for row in json.loads(cfy(*args, "--json"))]

    assert listed("blueprints", "list", "--search", "web", "--sort-by", "id", "--descending") == ["web-b", "web-a"]
    assert listed("blueprints", "list", "--search", "WEB") == []  # case kept, as the manager's LIKE
    assert listed("deployments", "list", "--search", "front", "--sort-by", "id", "--descending") == [
        "front-2", "front-1"]
    assert listed("deployments", "list", "--search-name", "Shop", "--sort-by", "id") == ["back-1", "front-1"]
    # both: either one, as the manager's
    assert sorted(d.id for d in cat.deployments.list(_search="front-2", _search_name="orders")) == [
        "back-1", "front-2"]
    assert [s.key for s in cat.secrets.list(_search="shop")] == ["shop-key"]
    cat.sites.create("shop-site")
    cat.sites.create("blog-site")
    assert [s.name for s in cat.sites.list(_search="shop")] == ["shop-site"]  # each list by its name field
    operator = rest_client(server)
    assert sorted(t.name for t in operator.tenants.list(_search="tenant-")) == ["tenant-b", "tenant-c"]
    assert [u.username for u in operator.users.list(_search="ca")] == ["cat"]
    page = cat.blueprints.list(_search="-a", sort="id", _size=1)
    assert ([b.id for b in page], page.metadata.pagination.total) == (["db-a"], 2)
