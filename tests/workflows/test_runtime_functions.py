"""Runtime functions read what scripts stored: in operation inputs (SELF, SOURCE, TARGET, scaling groups),
in node properties through ctx, and in outputs and capabilities across deployments."""

from __future__ import annotations

import pytest

from .conftest import deploy

SERVICE = """
node_templates:
  vm:
    type: cloudify.nodes.Compute
    interfaces:
      cloudify.interfaces.lifecycle:
        create:
          implementation: scripts/set.sh
          inputs: {key: ip, value: {concat: ["10.0.0.", {get_attribute: [SELF, index_hint]}]}}
  app:
    type: cloudify.nodes.ApplicationModule
    interfaces:
      cloudify.interfaces.lifecycle:
        create:
          implementation: scripts/set.sh
          inputs: {key: host_ip, value: {get_attribute: [vm, ip]}}
    relationships:
      - {type: cloudify.relationships.contained_in, target: vm}
      - type: cloudify.relationships.connected_to
        target: db
        source_interfaces:
          cloudify.interfaces.relationship_lifecycle:
            postconfigure:
              implementation: scripts/link.sh
              inputs:
                mine: {get_attribute: [SOURCE, host_ip]}
                theirs: {get_attribute: [TARGET, port]}
  db:
    type: cloudify.nodes.DBMS
    interfaces:
      cloudify.interfaces.lifecycle:
        create: {implementation: scripts/set.sh, inputs: {key: port, value: 5432}}
groups:
  pair: {members: [vm, app]}
policies:
  two_pairs:
    type: cloudify.policies.scaling
    properties: {default_instances: 2}
    targets: [pair]
outputs:
  ips: {value: {get_attributes_list: [vm, ip]}}
  links: {value: {get_attributes_dict: [app, link]}}
capabilities:
  db_port: {value: {get_attribute: [db, port]}}
  endpoints: {value: {get_attributes_list: [app, link]}}
"""

CLIENT = """
node_types:
  Client:
    derived_from: cloudify.nodes.Root
    properties: {password: {}, env: {}}
node_templates:
  client:
    type: Client
    properties:
      password: {get_secret: token}
      env: {get_environment_capability: db_port}
    interfaces:
      cloudify.interfaces.lifecycle:
        create:
          implementation: scripts/client.sh
          inputs:
            endpoints: {get_capability: [service, endpoints]}
            who: {concat: [{get_sys: [deployment, id]}, "/", {get_label: [team, 0]}]}
outputs:
  seen: {value: {get_attribute: [client, seen]}}
  summary: {value: {concat: [{get_attribute: [client, who]}, " ", {get_attribute: [client, password_length]}]}}
"""

SCRIPTS = {
    "scripts/set.sh": 'ctx instance runtime-properties "$key" "$value"\n',
    "scripts/link.sh": """
        ctx source instance runtime-properties link "$mine->db:$theirs"
    """,
    "scripts/client.sh": """
        ctx instance runtime-properties seen "@$endpoints"
        ctx instance runtime-properties who "$who"
        ctx instance runtime-properties password_length "$(ctx node properties password | wc -c | tr -d ' ')"
        ctx instance runtime-properties env_port "$(ctx node properties env)"
    """,
}


@pytest.fixture
def service(engine, tmp_path):
    name = deploy(engine, tmp_path / "service", SERVICE, SCRIPTS, name="service")
    # SELF's own attribute, set (with the store's own call) before install: each vm knows its index
    records = engine.blueprints.records
    pk = records.get_deployment("default", name)["pk"]
    for instance in engine.blueprints.deployments.node_instances(name):
        if instance["node_id"] == "vm":
            records.update_node_instance(pk, instance["id"], runtime_properties={"index_hint": instance["index"]})
    assert engine.executions.start("install", name)["status"] == "terminated"
    return name


def test_scaling_groups_self_source_and_target_in_operation_inputs(engine, service):
    instances = engine.blueprints.deployments.node_instances(service)
    vms = {i["id"]: i for i in instances if i["node_id"] == "vm"}
    apps = [i for i in instances if i["node_id"] == "app"]
    assert sorted(v["runtime_properties"]["ip"] for v in vms.values()) == ["10.0.0.1", "10.0.0.2"]
    for app in apps:  # each app read the ip of the vm in its own group instance
        host = vms[next(r["target_id"] for r in app["relationships"] if r["target_name"] == "vm")]
        assert app["runtime_properties"]["host_ip"] == host["runtime_properties"]["ip"]
        assert app["runtime_properties"]["link"] == f"{host['runtime_properties']['ip']}->db:5432"
    outputs = engine.blueprints.deployments.outputs(service)
    assert sorted(outputs["ips"]) == ["10.0.0.1", "10.0.0.2"]
    assert outputs["links"] == {a["id"]: {"link": a["runtime_properties"]["link"]} for a in apps}
    capabilities = engine.blueprints.deployments.capabilities(service)
    assert capabilities["db_port"] == "5432"
    assert sorted(capabilities["endpoints"]) == sorted(a["runtime_properties"]["link"] for a in apps)


def test_capabilities_labels_secrets_and_properties_evaluated_for_ctx(engine, service, tmp_path):
    engine.blueprints.secrets.create("token", "hunter22", hidden=True)
    client = deploy(engine, tmp_path / "client", CLIENT, SCRIPTS, name="client",
                    labels=[("team", "blue"), ("csys-obj-parent", service)], runtime_only_evaluation=True)
    done = engine.executions.start("install", client)
    assert done["status"] == "terminated", done["error"]
    endpoints = engine.blueprints.deployments.capabilities(service)["endpoints"]
    outputs = engine.blueprints.deployments.outputs(client)
    assert outputs == {"seen": endpoints, "summary": "client/blue 8"}
    [row] = engine.blueprints.deployments.node_instances(client)
    assert row["runtime_properties"]["env_port"] == "5432"
    assert "hunter22" not in str(engine.executions.events(done["id"], include_logs=True))
