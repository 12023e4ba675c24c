"""A published plugin, unchanged: cloudify-aws-plugin, from the package index, makes and deletes an S3
bucket in moto's AWS emulator on loopback (moto is a test dependency: an AWS that answers here).

The plugin pins libraries older than cloudify-common 7.0.5 allows, so its virtualenv holds the
cloudify-common its own pins resolve to, as its wagon would on a manager.  The wheels are built once
into the shared test wheel cache; a later session makes the virtualenv offline."""

from __future__ import annotations

import pytest

from stoker.blueprint.plugin_catalog import PluginCatalog

moto_server = pytest.importorskip("moto.server", reason="moto (a test dependency) is not installed")
boto3 = pytest.importorskip("boto3", reason="boto3 comes with moto")

pytestmark = pytest.mark.slow  # a virtualenv with the AWS plugin and its dependencies

AWS_PLUGIN = "cloudify-aws-plugin==3.1.7"

#: the operations of 3.1.7's S3 bucket, declared as its plugin YAML declares them
PLUGIN_YAML = """\
tosca_definitions_version: cloudify_dsl_1_5
plugins:
  aws:
    executor: central_deployment_agent
    package_name: cloudify-aws-plugin
    package_version: '3.1.7'
dsl_definitions:
  operation_inputs: &operation_inputs
    aws_resource_id: {required: false, default: null}
    runtime_properties: {required: false, default: null}
    force_operation: {required: false, default: false}
    resource_config: {required: false, default: {}}
node_types:
  cloudify.nodes.aws.s3.Bucket:
    derived_from: cloudify.nodes.Root
    properties:
      use_external_resource: {default: false}
      resource_id: {default: ''}
      resource_config: {default: {}}
      client_config: {default: {}}
    interfaces:
      cloudify.interfaces.lifecycle:
        precreate: {implementation: aws.cloudify_aws.s3.resources.bucket.prepare, inputs: *operation_inputs}
        create: {implementation: aws.cloudify_aws.s3.resources.bucket.create, inputs: *operation_inputs}
        delete: {implementation: aws.cloudify_aws.s3.resources.bucket.delete, inputs: *operation_inputs}
"""

BLUEPRINT = """\
tosca_definitions_version: cloudify_dsl_1_5
imports: [cloudify/types/types.yaml, plugin:cloudify-aws-plugin]
node_templates:
  bucket:
    type: cloudify.nodes.aws.s3.Bucket
    properties:
      client_config: {aws_access_key_id: testing, aws_secret_access_key: testing, region_name: us-east-1}
      resource_config:
        Bucket: stoker-made-bucket
        CreateBucketConfiguration: {LocationConstraint: us-east-1}
"""


@pytest.fixture
def emulator(monkeypatch):
    """moto's server on a loopback port; the plugin's boto3 reaches it through AWS_ENDPOINT_URL."""
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://{host}:{port}")
    yield boto3.client("s3", endpoint_url=f"http://{host}:{port}", region_name="us-east-1",
                       aws_access_key_id="testing", aws_secret_access_key="testing")
    server.stop()


def test_the_published_aws_plugin_makes_and_deletes_an_s3_bucket(engine, tmp_path, plugin_wheels, emulator):
    cache = plugin_wheels(AWS_PLUGIN)  # skipped, saying why, when the package index cannot be reached
    [wheel] = cache.glob("cloudify_aws_plugin-3.1.7-*.whl")
    (tmp_path / "plugin.yaml").write_text(PLUGIN_YAML)
    PluginCatalog(tmp_path / "home" / "plugins").upload(wheel, [tmp_path / "plugin.yaml"])
    (tmp_path / "bp").mkdir()
    (tmp_path / "bp" / "blueprint.yaml").write_text(BLUEPRINT)
    engine.blueprints.upload(tmp_path / "bp" / "blueprint.yaml", "bp")
    engine.blueprints.deployments.create("dep", "bp")

    installed = engine.executions.start("install", "dep")
    assert installed["status"] == "terminated", installed["error"]
    assert [b["Name"] for b in emulator.list_buckets()["Buckets"]] == ["stoker-made-bucket"]
    [bucket] = engine.blueprints.deployments.node_instances("dep")
    assert bucket["state"] == "started"
    assert bucket["runtime_properties"]["aws_resource_id"] == "stoker-made-bucket"

    removed = engine.executions.start("uninstall", "dep")
    assert removed["status"] == "terminated", removed["error"]
    assert emulator.list_buckets()["Buckets"] == []
