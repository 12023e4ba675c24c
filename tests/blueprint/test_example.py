"""The README's example, as a new Cloudify user would try it: through the CLI, on SQLite and PostgreSQL."""

from __future__ import annotations

from stoker.engine.engine import Engine

from .conftest import EXAMPLE, cli_on


def test_readme_example_end_to_end(db_url):
    cli = cli_on(db_url)
    cli("secret", "create", "db_password", "-s", "s3cr3t", "--hidden").expect(0)
    cli("blueprint", "validate", EXAMPLE / "blueprint.yaml").expect(0)
    cli("blueprint", "upload", EXAMPLE / "blueprint.yaml", "-b", "shop").expect(0)
    created = cli("deployment", "create", "shop-staging", "-b", "shop", "-i", EXAMPLE / "inputs.yaml",
                  "--label", "team:web", "-f", "json").expect(0).json
    assert created["blueprint_id"] == "shop"
    assert {(label["key"], label["value"]) for label in created["labels"]} == {
        ("environment", "staging"), ("team", "web")}

    instances = cli("node-instance", "list", "-d", "shop-staging", "-f", "json").expect(0).json
    by_node: dict[str, list[dict]] = {}
    for instance in instances:
        assert {"id", "node_id", "state", "runtime_properties"} <= set(instance)
        assert instance["state"] == "uninitialized" and instance["runtime_properties"] == {}
        assert instance["id"].startswith(instance["node_id"] + "_")
        by_node.setdefault(instance["node_id"], []).append(instance)
    assert {node: len(found) for node, found in by_node.items()} == {"host": 3, "web": 3, "db_host": 1, "db": 1}

    # every web server sits on its own host and talks to the one database
    db = by_node["db"][0]["id"]
    hosts = {h["id"] for h in by_node["host"]}
    web_hosts = set()
    for web in by_node["web"]:
        shown = cli("node-instance", "get", web["id"], "-f", "json").expect(0).json
        targets = {(r["type"].rsplit(".", 1)[-1], r["target_id"]) for r in shown["relationships"]}
        (host,) = [t for kind, t in targets if kind == "contained_in"]
        assert ("connected_to", db) in targets and host in hosts and shown["host_id"] == host
        web_hosts.add(host)
    assert web_hosts == hosts

    outputs = cli("deployment", "outputs", "shop-staging", "-f", "json").expect(0).json
    assert outputs == {"web_port": 8081, "endpoints": ["127.0.0.1"] * 3, "database": "127.0.0.2/shop"}
    capabilities = cli("deployment", "capabilities", "shop-staging", "-f", "json").expect(0).json
    assert capabilities == {"database_name": "shop", "environment": "staging"}
    inputs = cli("deployment", "inputs", "shop-staging", "-f", "json").expect(0).json
    assert inputs == {"web_port": 8081, "db_name": "shop", "web_servers": 3}

    # a runtime property set on one host shows in the outputs at once
    engine = Engine(db_url=db_url)
    try:
        deployments = engine.blueprints.deployments
        first = deployments.node_instances("shop-staging", "host")[0]
        deployments.update_node_instance(first["id"], "shop-staging", expected_version=first["version"],
                                         runtime_properties={"ip": "10.0.0.5"})
        assert sorted(deployments.outputs("shop-staging")["endpoints"]) == ["10.0.0.5", "127.0.0.1", "127.0.0.1"]
        # the configure operation gets the database URL with the secret, evaluated when it runs
        web = deployments.node_instances("shop-staging", "web")[0]
        inputs = deployments.operation_inputs("shop-staging", web["id"], "cloudify.interfaces.lifecycle.configure")
        assert inputs == {"db_url": "postgres://app:s3cr3t@127.0.0.2/shop", "script_path": "scripts/configure.sh"}
    finally:
        engine.close()

    nodes = cli("node", "list", "-d", "shop-staging", "-f", "json").expect(0).json
    assert {n["id"]: n["number_of_instances"] for n in nodes} == {"host": 3, "web": 3, "db_host": 1, "db": 1}
    listed = cli("deployment", "list", "-f", "json").expect(0).json
    assert [d["id"] for d in listed] == ["shop-staging"]
    refused = cli("blueprint", "delete", "shop").expect(1)
    assert "shop-staging" in refused.stderr
    cli("deployment", "delete", "shop-staging").expect(0)
    cli("blueprint", "delete", "shop").expect(0)
    assert cli("blueprint", "list", "-f", "json").expect(0).json == []


def test_scaling_by_input(cli):
    cli("secret", "create", "db_password", "-s", "x").expect(0)
    cli("blueprint", "upload", EXAMPLE / "blueprint.yaml", "-b", "shop").expect(0)
    cli("deployment", "create", "big", "-b", "shop", "-i", "web_servers=5").expect(0)
    instances = cli("node-instance", "list", "-d", "big", "--node-name", "web", "-f", "json").expect(0).json
    assert sorted(i["index"] for i in instances) == [1, 2, 3, 4, 5]
