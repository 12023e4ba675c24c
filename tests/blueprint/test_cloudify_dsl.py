"""The DSL as Cloudify reads it: what real blueprints (and every plugin YAML) rely on.

Each behaviour here was checked against cloudify-common 7.0.5's dsl_parser.
"""

from __future__ import annotations

import pytest

from stoker.blueprint.parser import parse_file
from stoker.errors import ValidationFailed

HEAD = "tosca_definitions_version: cloudify_dsl_1_4\n"
TYPES = "imports: [http://www.getcloudify.org/spec/cloudify/7.0.0/types.yaml]\n"


def _problems(path) -> dict:
    with pytest.raises(ValidationFailed) as failure:
        parse_file(path)
    return {(".".join(map(str, p.path)), p.code): p.message for p in failure.value.problems}


def test_labels_from_several_imports_keep_the_first(write):
    plugin = HEAD + "blueprint_labels:\n  obj-type: {values: [aws]}\nlabels:\n  obj-type: {values: [aws]}\n"
    write("p1/plugin_1_4.yaml", plugin)
    write("p2/plugin_1_4.yaml", plugin.replace("aws", "azure"))
    plan = parse_file(write("b.yaml", HEAD + "imports: [p1/plugin_1_4.yaml, p2/plugin_1_4.yaml]\n"
                                             "labels:\n  env: {values: [prod]}\n"))
    assert plan["labels"] == {"env": {"values": ["prod"]}, "obj-type": {"values": ["aws"]}}
    assert plan["blueprint_labels"] == {"obj-type": {"values": ["aws"]}}


def test_a_cloudify_name_defined_again_takes_the_imported_definition(write):
    """As dsl_parser does for names under ``cloudify.``: a blueprint re-declaring a plugin's type
    (blueprint-examples' kube_app does) is no conflict, the imported definition wins; other names
    still conflict."""
    write("plugin_1_4.yaml", HEAD + "node_types:\n  cloudify.nodes.x.Claim:\n    derived_from: cloudify.nodes.Root\n"
                                    "    properties: {size: {default: 1}}\n"
                                    "  my.Claim:\n    derived_from: cloudify.nodes.Root\n")
    again = ("node_types:\n  cloudify.nodes.x.Claim:\n    derived_from: cloudify.nodes.Root\n"
             "    properties: {size: {default: 2}}\n")
    plan = parse_file(write("b.yaml", HEAD + TYPES.replace("]", ", plugin_1_4.yaml]") + again
                            + "node_templates:\n  c: {type: cloudify.nodes.x.Claim}\n"))
    assert plan["nodes"][0]["properties"]["size"] == 1
    clash = write("c.yaml", HEAD + TYPES.replace("]", ", plugin_1_4.yaml]")
                  + "node_types:\n  my.Claim:\n    derived_from: cloudify.nodes.Compute\n")
    assert ("node_types.my.Claim", "import-conflict") in _problems(clash)


def test_dsl_definitions_belong_to_their_file(write):
    write("common.yaml", HEAD + "dsl_definitions:\n  conf: &conf {port: 1}\n"
                                "node_types:\n  t:\n    properties:\n      conf: {default: *conf}\n")
    plan = parse_file(write("b.yaml", HEAD + "imports: [common.yaml]\n"
                                             "dsl_definitions:\n  conf: &conf {port: 2}\n"
                                             "node_templates:\n  n: {type: t}\n  m:\n    type: t\n"
                                             "    properties: {conf: *conf}\n"))
    nodes = {n["name"]: n["properties"] for n in plan["nodes"]}
    assert nodes == {"n": {"conf": {"port": 1}}, "m": {"conf": {"port": 2}}}


DATA_TYPES = HEAD + """\
data_types:
  conn:
    properties:
      host: {type: string, default: localhost}
      port: {type: integer, default: 22}
      extra: {type: opts}
  opts:
    properties:
      verbose: {type: boolean, default: false}
  creds:
    properties:
      user: {type: string}
node_types:
  t:
    properties:
      conn: {type: conn}
      creds: {type: creds, required: false}
node_templates:
"""


def test_a_data_type_with_defaults_makes_a_property_optional(write):
    plan = parse_file(write("b.yaml", DATA_TYPES + "  n:\n    type: t\n    properties: {creds: {user: me}}\n"))
    assert plan["nodes"][0]["properties"] == {
        "conn": {"host": "localhost", "port": 22, "extra": {"verbose": False}}, "creds": {"user": "me"}}
    # a data type with a field of its own that has no default is still needed, required: false or not
    problems = _problems(write("c.yaml", DATA_TYPES + "  n: {type: t}\n"))
    assert "missing property 'user'" in problems[("node_templates.n.properties.creds", "missing-property")]


def test_an_external_resource_needs_no_other_property(write):
    text = HEAD + ("node_types:\n  t:\n    properties:\n      use_external_resource: {default: false}\n"
                   "      size: {type: integer}\nnode_templates:\n  n:\n    type: t\n")
    plan = parse_file(write("b.yaml", text + "    properties: {use_external_resource: true}\n"))
    assert plan["nodes"][0]["properties"] == {"use_external_resource": True}
    assert ("node_templates.n.properties", "missing-property") in _problems(write("c.yaml", text))


@pytest.mark.parametrize("url", ["https://cloudify.co/spec/cloudify/7.0.0/types.yaml",
                                 "http://cloudify.co/spec/cloudify/6.4.0/types.yaml",
                                 "http://www.getcloudify.org/spec/cloudify/4.6/types.yaml",
                                 "https://getcloudify.org/spec/cloudify/5.0.5/types.yaml"])
def test_every_standard_types_address_is_built_in(write, url):
    plan = parse_file(write("b.yaml", HEAD + f"imports: ['{url}']\nnode_templates:\n"
                                             "  vm: {type: cloudify.nodes.Compute}\n"))
    assert plan["nodes"][0]["type_hierarchy"] == ["cloudify.nodes.Root", "cloudify.nodes.Compute"]


def test_resource_tags_are_evaluated_at_creation(write, engine):
    path = write("b.yaml", HEAD + TYPES + "inputs:\n  owner: {default: me}\n"
                                          "resource_tags:\n  team: infra\n  owner: {get_input: owner}\n")
    engine.blueprints.upload(path, "b")
    engine.blueprints.deployments.create("d", "b", {"owner": "ops"})
    assert engine.blueprints.deployments.get("d")["resource_tags"] == {"team": "infra", "owner": "ops"}


NAMED = """\
inputs:
  dep:
    type: deployment_id
    constraints:
      - name_pattern: {starts_with: db-, contains: prod}
        error_message: a production database deployment
      - labels: [{env: prod}]
"""


def test_name_pattern_constraints_check_the_name_given(write, engine):
    path = write("b.yaml", "tosca_definitions_version: cloudify_dsl_1_5\n" + NAMED)
    engine.blueprints.upload(path, "b")
    engine.blueprints.deployments.create("ok", "b", {"dep": "db-prod-1"})
    with pytest.raises(Exception, match="value db-test of input dep is invalid. a production database deployment"):
        engine.blueprints.deployments.create("bad", "b", {"dep": "db-test"})
    problems = _problems(write("c.yaml", HEAD + "inputs:\n  dep:\n    type: deployment_id\n"
                                                "    constraints: [{name_pattern: {sounds_like: x}}]\n"))
    assert ("inputs.dep.constraints.0", "invalid-constraint") in problems


@pytest.mark.parametrize("version, text, message", [
    ("1_0", "dsl_definitions: {a: 1}\n", "dsl_definitions not supported in version cloudify_dsl_1_0, "
                                        "it was added in cloudify_dsl_1_2"),
    ("1_2", "resource_tags: {a: b}\n", "resource_tags not supported in version cloudify_dsl_1_2, "
                                       "it was added in cloudify_dsl_1_3"),
    ("1_3", "inputs:\n  d: {type: deployment_id}\n", "type 'deployment_id' not supported in version "
                                                    "cloudify_dsl_1_3, it was added in cloudify_dsl_1_4"),
    ("1_2", "inputs:\n  d: {hidden: true}\n", "hidden not supported in version cloudify_dsl_1_2, it was added in "
                                             "cloudify_dsl_1_3"),
    ("1_4", "inputs:\n  d: {constraints: [{min_length: 1, error_message: short}]}\n",
     "Constraint's additional attributes not supported in version cloudify_dsl_1_4, it was added in "
     "cloudify_dsl_1_5"),
    ("1_0", "outputs:\n  o: {value: {concat: [a, b]}}\n", "Using concat requires using dsl version 1_1 or greater, "
                                                          "but found: cloudify_dsl_1_0 in outputs.o.value."),
])
def test_features_newer_than_the_dsl_version_are_refused(write, version, text, message):
    problems = _problems(write("b.yaml", f"tosca_definitions_version: cloudify_dsl_{version}\n" + text))
    assert message in [m for (_, code), m in problems.items() if code == "version-too-old"]


def test_imports_follow_the_version_rules(write):
    write("newer.yaml", "tosca_definitions_version: cloudify_dsl_1_4\n")
    problems = _problems(write("b.yaml", "tosca_definitions_version: cloudify_dsl_1_3\nimports: [newer.yaml]\n"))
    assert ("tosca_definitions_version", "version-mismatch") in problems
    write("more.yaml", "tosca_definitions_version: cloudify_dsl_1_2\ninputs:\n  b: {}\n")
    old = "imports: [more.yaml]\ninputs:\n  a: {}\n"
    problems = _problems(write("c.yaml", "tosca_definitions_version: cloudify_dsl_1_2\n" + old))
    assert "inputs can be imported multiple times only from cloudify_dsl_1_3" in problems[("inputs", "non-mergeable")]
    plan = parse_file(write("d.yaml", "tosca_definitions_version: cloudify_dsl_1_3\n" + old))
    assert set(plan["inputs"]) == {"a", "b"}


def test_input_defaults_may_hold_functions(write, engine):
    path = write("b.yaml", HEAD + """\
inputs:
  a: {default: x}
  b: {type: string, default: {concat: [{get_input: a}, "-y"]}}
  c: {type: integer, default: {get_input: n}}
  n: {type: integer, default: 3}
  d: {default: {get_input: a}, constraints: [{min_length: 1}]}
outputs:
  b: {value: {get_input: b}}
  c: {value: {get_input: c}}
""")
    engine.blueprints.upload(path, "b")
    engine.blueprints.deployments.create("dep", "b", {"a": "q", "d": "given"})
    assert engine.blueprints.deployments.outputs("dep") == {"b": "q-y", "c": 3}
    with pytest.raises(Exception, match="cannot contain an intrinsic function and also have constraints"):
        engine.blueprints.deployments.create("other", "b", {})


def test_a_node_without_instances_still_has_its_host(write, engine):
    path = write("b.yaml", HEAD + TYPES + """\
node_templates:
  vm:
    type: cloudify.nodes.Compute
    capabilities: {scalable: {properties: {default_instances: 0}}}
  app:
    type: cloudify.nodes.ApplicationModule
    relationships: [{type: cloudify.relationships.contained_in, target: vm}]
  free: {type: cloudify.nodes.Root}
""")
    engine.blueprints.upload(path, "b")
    engine.blueprints.deployments.create("d", "b")
    nodes = {n["id"]: n for n in engine.blueprints.deployments.nodes("d")}
    assert {name: (n["host_id"], n["number_of_instances"]) for name, n in nodes.items()} == {
        "vm": ("vm", 0), "app": ("vm", 0), "free": (None, 1)}


def test_get_consumers_and_get_group_capability(write, engine):
    provider = write("provider.yaml", HEAD + """\
inputs:
  url: {}
deployment_settings:
  default_groups: [web]
capabilities:
  url: {value: {get_input: url}}
  conf: {value: {port: 80}}
outputs:
  consumers: {value: {get_consumers: ids}}
  names: {value: {get_consumers: names}}
  count: {value: {get_consumers: count}}
""")
    consumer = write("consumer.yaml", HEAD + """\
outputs:
  urls: {value: {get_group_capability: [web, url]}}
  pairs: {value: {get_group_capability: [web, [url, conf]]}}
  by_id: {value: {get_group_capability: [web, "deployment_id:url"]}}
  ports: {value: {get_group_capability: [web, conf, port]}}
""")
    deployments = engine.blueprints.deployments
    engine.blueprints.upload(provider, "provider")
    engine.blueprints.upload(consumer, "consumer")
    deployments.create("p2", "provider", {"url": "http://b"})
    deployments.create("p1", "provider", {"url": "http://a"}, labels=[("csys-consumer-id", "c")])
    deployments.create("c", "consumer", display_name="the consumer")
    assert deployments.outputs("c") == {
        "urls": ["http://a", "http://b"], "pairs": [["http://a", {"port": 80}], ["http://b", {"port": 80}]],
        "by_id": {"p1": "http://a", "p2": "http://b"}, "ports": [80, 80]}
    assert deployments.outputs("p1") == {"consumers": ["c"], "names": ["the consumer"], "count": 1}
    assert deployments.outputs("p2") == {"consumers": [], "names": [], "count": 0}
    problems = _problems(write("bad.yaml", HEAD + "outputs:\n  o: {value: {get_consumers: everyone}}\n"
                                                  "  g: {value: {get_group_capability: [web]}}\n"))
    assert {code for _, code in problems} == {"function-failed"} and len(problems) == 2


PLUGIN_15 = """\
tosca_definitions_version: cloudify_dsl_1_5
plugins:
  cloud:
    executor: central_deployment_agent
    package_name: cloud-plugin
    properties:
      region: {type: string, description: where}
      retries: {type: integer}
"""


def test_dict_form_imports_set_plugin_properties(write):
    write("cloud/plugin_1_5.yaml", PLUGIN_15)
    head = "tosca_definitions_version: cloudify_dsl_1_5\nimports:\n  - cloud/plugin_1_5.yaml:\n"
    plan = parse_file(write("b.yaml", head + "      region: {get_secret: region}\n      retries: 3\n"))
    properties = plan["plugins"]["cloud"]["properties"]
    assert (properties["region"]["value"], properties["retries"]["value"]) == ({"get_secret": "region"}, 3)
    with pytest.raises(ValidationFailed) as failure:
        parse_file(write("c.yaml", head + "      retries: many\n      zone: a\n"))
    assert [p.message for p in failure.value.problems] == [
        "Property retries: value 'many' should be of type integer",
        "Properties for imported plugin are redundant: ['zone'], consider updating import lines"]
    problems = _problems(write("d.yaml", head.replace("1_5", "1_4") + "      retries: 3\n"))
    assert ("imports", "version-too-old") in problems


NAMESPACED = HEAD + TYPES + """\
inputs:
  port: {default: 80}
data_types:
  dt: {properties: {a: {default: 1}}}
node_types:
  web:
    derived_from: cloudify.nodes.Root
    properties:
      port: {}
      conf: {type: dt}
node_templates:
  vm: {type: cloudify.nodes.Compute}
  server:
    type: web
    properties: {port: {get_input: port}}
    relationships: [{type: cloudify.relationships.contained_in, target: vm}]
outputs:
  url: {value: {concat: [{get_attribute: [server, ip]}, {get_property: [server, port]}]}}
groups:
  g: {members: [server]}
"""


def test_namespaced_imports_prefix_what_the_file_defines(write, engine):
    write("other.yaml", NAMESPACED)
    path = write("main.yaml", HEAD + """\
imports: [http://www.getcloudify.org/spec/cloudify/7.0.0/types.yaml, app--other.yaml]
node_templates:
  mine:
    type: app--web
    properties: {port: {get_input: app--port}}
    relationships: [{type: cloudify.relationships.depends_on, target: app--server}]
""")
    plan = parse_file(path)
    assert list(plan["inputs"]) == ["app--port"] and list(plan["groups"]) == ["app--g"]
    assert plan["outputs"]["app--url"]["value"] == {
        "concat": [{"get_attribute": ["app--server", "ip"]}, {"get_property": ["app--server", "port"]}]}
    nodes = {n["name"]: n for n in plan["nodes"]}
    assert {name: (n["type"], n["type_hierarchy"][-1], [r["target_id"] for r in n["relationships"]])
            for name, n in nodes.items()} == {
        "mine": ("app--web", "app--web", ["app--server"]), "app--vm": ("cloudify.nodes.Compute",
                                                                       "cloudify.nodes.Compute", []),
        "app--server": ("app--web", "app--web", ["app--vm"])}
    assert nodes["app--server"]["properties"] == {"port": {"get_input": "app--port"}, "conf": {"a": 1},
                                                  "use_external_resource": False}
    engine.blueprints.upload(path, "b")
    engine.blueprints.deployments.create("d", "b", {"app--port": 8080})
    node = {n["id"]: n for n in engine.blueprints.deployments.nodes("d")}["app--server"]
    assert node["host_id"] == "app--vm"


def test_a_string_property_takes_any_value_as_in_cloudify(write):
    plan = parse_file(write("b.yaml", HEAD + "node_types:\n  t:\n    properties:\n      image: {type: string}\n"
                                             "node_templates:\n  n:\n    type: t\n    properties: {image: {}}\n"))
    assert plan["nodes"][0]["properties"] == {"image": {}}


def test_the_service_composition_types_are_standard(write, engine):
    path = write("b.yaml", HEAD + TYPES + """\
node_types:
  my.SharedCluster: {derived_from: cloudify.nodes.SharedResource}
node_templates:
  infra:
    type: cloudify.nodes.Component
    properties:
      resource_config:
        blueprint: {id: network, blueprint_archive: network.zip}
        deployment: {id: net1, inputs: {cidr: 10.0.0.0/24}}
  cluster:
    type: my.SharedCluster
    properties: {resource_config: {deployment: {id: k8s}}}
  password: {type: cloudify.nodes.PasswordSecret}
  app:
    type: cloudify.nodes.ServiceComponent
    relationships:
      - {type: cloudify.relationships.depends_on_shared_resource, target: cluster}
      - {type: cloudify.relationships.depends_on_lifecycle_operation, target: infra,
         properties: {operation: create}}
""")
    plan = parse_file(path)
    nodes = {n["name"]: n for n in plan["nodes"]}
    assert nodes["infra"]["properties"]["resource_config"] == {
        "blueprint": {"external_resource": False, "id": "network", "blueprint_archive": "network.zip",
                      "main_file_name": "blueprint.yaml"},
        "deployment": {"external_resource": False, "id": "net1", "inputs": {"cidr": "10.0.0.0/24"}},
        "executions_start_args": {}}
    assert nodes["cluster"]["type_hierarchy"][-2:] == ["cloudify.nodes.SharedResource", "my.SharedCluster"]
    assert nodes["infra"]["operations"]["cloudify.interfaces.lifecycle.configure"]["implementation"] == \
        "cfy_extensions.cloudify_types.component.create"
    engine.blueprints.upload(path, "b")
    engine.blueprints.deployments.create("d", "b")
    failed = engine.executions.start("install", "d")  # they run now: k8s and network.zip are missing
    assert failed["status"] == "failed"
    assert ('SharedResource\'s deployment ID "k8s" does not exist on tenant "default_tenant"' in failed["error"]
            or "blueprint_archive network.zip: resource network.zip not found" in failed["error"])


def test_a_data_type_value_holding_functions_gets_its_defaults(write):
    write("scripts/update.sh", "true\n")
    plan = parse_file(write("b.yaml", HEAD + """\
inputs:
  key: {default: k}
data_types:
  module:
    properties:
      variables: {default: {}}
      environment_variables: {required: false, default: {}}
      retries: {type: integer, default: 1}
node_types:
  t:
    properties:
      resource_config: {type: module}
    interfaces:
      cloudify.interfaces.lifecycle:
        update:
          implementation: scripts/update.sh
          inputs:
            env: {default: {get_property: [SELF, resource_config, environment_variables]}}
node_templates:
  n:
    type: t
    properties:
      resource_config:
        variables: {access_key: {get_input: key}}
        retries: {get_input: key}
"""))
    assert plan["nodes"][0]["properties"]["resource_config"] == {
        "variables": {"access_key": {"get_input": "key"}}, "environment_variables": {}, "retries": {"get_input": "key"}}


@pytest.mark.parametrize("section", ["data_types", "node_types", "relationships"])
def test_a_property_schema_must_be_a_mapping(write, section):
    """A plugin YAML indented one level short (cloudify-manager's test diamond plugin) declares
    properties named ``description`` and ``required``; Cloudify refuses a schema that is not a
    mapping, an empty one (``key:``) too."""
    path = write("b.yaml", HEAD + f"{section}:\n  my.Config:\n    properties:\n      key:\n"
                                  "      description: The key.\n      required: false\n      port: {default: 1}\n")
    problems = _problems(path)
    base = f"{section}.my.Config.properties"
    assert problems == {(f"{base}.key", "invalid-property-schema"): "Expected 'dict' type but found 'null' type",
                        (f"{base}.description", "invalid-property-schema"):
                            "Expected 'dict' type but found 'string' type",
                        (f"{base}.required", "invalid-property-schema"):
                            "Expected 'dict' type but found 'boolean' type"}


def test_a_name_two_files_define_conflicts_even_when_the_same(write):
    """dsl_parser refuses a name two imported files define, identical or not (cloudify. names and
    labels aside); a workflow defined again is merged, the first file's fields winning."""
    same = HEAD + "node_types:\n  my.T: {derived_from: cloudify.nodes.Root}\n" \
                  "workflows:\n  go: {mapping: p.mod.other, parameters: {x: {default: 1}}}\n"
    write("a.yaml", same)
    write("b.yaml", same)
    assert set(_problems(write("bp.yaml", HEAD + TYPES.replace("]", ", a.yaml, b.yaml]")))) == {
        ("node_types.my.T", "import-conflict")}
    plan = parse_file(write("one.yaml", HEAD + TYPES.replace("]", ", a.yaml]") +
                            "plugins:\n  p: {executor: central_deployment_agent, install: false}\n"
                            "workflows:\n  go: {mapping: p.mod.run}\n"))
    assert plan["workflows"]["go"] == {"mapping": "p.mod.run", "parameters": {"x": {"default": 1}}}


def test_a_namespaced_import_keeps_cloudify_names(write):
    """dsl_parser never namespaces a ``cloudify.`` name: a namespaced file's type of that name (a
    plugin's, as cloudify-manager's dockercompute) and the references to it keep it; its other
    names take the namespace."""
    write("plugin.yaml", HEAD + "node_types:\n  cloudify.nodes.my.Compute: {derived_from: cloudify.nodes.Compute}\n"
                                "  my.App: {derived_from: cloudify.nodes.Root}\n")
    write("app.yaml", HEAD + TYPES.replace("]", ", plugin.yaml]") + """\
node_templates:
  vm: {type: cloudify.nodes.my.Compute}
  app:
    type: my.App
    relationships: [{type: cloudify.relationships.contained_in, target: vm}]
""")
    plan = parse_file(write("main.yaml", HEAD + "imports: [ns--app.yaml]\n"))
    assert {n["name"]: (n["type"], [r["target_id"] for r in n["relationships"]]) for n in plan["nodes"]} == {
        "ns--vm": ("cloudify.nodes.my.Compute", []), "ns--app": ("ns--my.App", ["ns--vm"])}


def test_the_constraints_of_a_typed_list_hold_for_each_item(write, engine):
    """As cloudify-manager's blueprint_with_list_types: with ``item_type`` the constraints are the
    items' (an empty list meets them), without it the list's own."""
    path = write("b.yaml", HEAD + """\
inputs:
  flags: {type: list, item_type: boolean, constraints: [{valid_values: [true]}]}
  names: {type: list, item_type: string, constraints: [{min_length: 2}], default: [ab, cd]}
  pair: {type: list, constraints: [{length: 2}]}
""")
    engine.blueprints.upload(path, "b")
    engine.blueprints.deployments.create("empty", "b", {"flags": [], "pair": [1, 2]})
    engine.blueprints.deployments.create("all-true", "b", {"flags": [True, True], "pair": [[], []]})
    with pytest.raises(Exception, match="value False of input flags violates constraint valid_values"):
        engine.blueprints.deployments.create("bad", "b", {"flags": [True, False], "pair": [1, 2]})
    with pytest.raises(Exception, match=r"value \[1\] of input pair violates constraint length\(2\)"):
        engine.blueprints.deployments.create("short", "b", {"flags": [], "pair": [1]})
    problems = _problems(write("c.yaml", HEAD + "inputs:\n  names: {type: list, item_type: string, "
                                                "constraints: [{min_length: 2}], default: [ab, c]}\n"))
    assert problems[("inputs.names.default", "constraint-violated")] == \
        "value c of input names violates constraint min_length(2)"


def test_use_external_resource_cannot_be_a_function(write):
    """It decides which properties are required, so Cloudify wants it known when parsing (the
    vsphere plugin's examples set it from an input and are refused)."""
    path = write("b.yaml", HEAD + TYPES + """\
inputs:
  existing: {default: true}
node_types:
  t:
    derived_from: cloudify.nodes.Root
    properties: {use_external_resource: {default: false}, name: {}}
node_templates:
  n: {type: t, properties: {use_external_resource: {get_input: existing}}}
""")
    assert _problems(path) == {("node_templates.n.properties.use_external_resource", "function-not-permitted"):
                               "Only boolean values are allowed for `use_external_resource` property, don't use "
                               "intrinsic functions."}


def test_a_compute_node_s_plugins_to_install_hold_the_agent_as_cloudify_s(write):
    """Cloudify's Compute declares the agent's operations (the manager runs some, the agent others), so
    its plan lists plugin ``agent`` for both; Stoker's standard types leave those operations out."""
    plan = parse_file(write("b.yaml", HEAD + TYPES + "node_templates:\n  vm: {type: cloudify.nodes.Compute}\n"
                                                     "  app: {type: cloudify.nodes.Root}\n"))
    assert [(p["name"], p["executor"]) for p in plan["deployment_plugins_to_install"]] == [
        ("agent", "central_deployment_agent")]
    assert [(p["name"], p["executor"]) for p in plan["host_agent_plugins_to_install"]] == [("agent", "host_agent")]
