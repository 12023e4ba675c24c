"""``AWS::AutoScaling::AutoScalingGroup`` and ``OS::Heat::InstanceGroup`` end to end, through the
CLI: members built from the ``AWS::AutoScaling::LaunchConfiguration`` (simulated
``AWS::EC2::Instance``, or the environment's mapping of it), ``InstanceList``, resizes by
``AWS::AutoScaling::ScalingPolicy`` signals, a new launch configuration rolled in batches as the
update policy says, delete, and the refusals of bad groups with their place."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from stoker.resources.openstack import inventory

LAUNCH_CONFIG = {
    "Type": "AWS::AutoScaling::LaunchConfiguration",
    "Metadata": {"role": "web"},
    "Properties": {"ImageId": "cirros", "InstanceType": "m1.small", "UserData": {"Ref": "user_data"},
                   "SecurityGroups": ["sg-1"]},
}
ROLLING = {"MinInstancesInService": 1, "MaxBatchSize": 2, "PauseTime": "PT0S"}


def aws_group(**props) -> dict:
    return {"Type": "AWS::AutoScaling::AutoScalingGroup",
            "UpdatePolicy": {"AutoScalingRollingUpdate": ROLLING},
            "Properties": {"AvailabilityZones": ["nova"], "LaunchConfigurationName": {"Ref": "LaunchConfig"},
                           "MinSize": 1, "MaxSize": 5, "DesiredCapacity": 3, "Cooldown": 0,
                           "LoadBalancerNames": ["not-a-balancer"], **props}}


def instance_group(size, rolling: dict | None = ROLLING) -> dict:
    group = {"Type": "OS::Heat::InstanceGroup",
             "Properties": {"AvailabilityZones": ["nova"], "LaunchConfigurationName": {"Ref": "LaunchConfig"},
                            "Size": size}}
    if rolling is not None:
        group["UpdatePolicy"] = {"RollingUpdate": rolling}
    return group


def cfn(group: dict, policies: dict | None = None) -> dict:
    return {"AWSTemplateFormatVersion": "2010-09-09",
            "Parameters": {"user_data": {"Type": "String", "Default": "v1"}},
            "Resources": {"LaunchConfig": LAUNCH_CONFIG, "Group": group, **(policies or {})},
            "Outputs": {"InstanceList": {"Value": {"Fn::GetAtt": ["Group", "InstanceList"]}},
                        "ConfigRef": {"Value": {"Ref": "LaunchConfig"}}}}


def policy(adjustment: int, kind: str = "ChangeInCapacity") -> dict:
    return {"Type": "AWS::AutoScaling::ScalingPolicy",
            "Properties": {"AutoScalingGroupName": {"Ref": "Group"}, "ScalingAdjustment": adjustment,
                           "AdjustmentType": kind, "Cooldown": 0}}


#: AWS::EC2::Instance as Heat's functional tests map it: a provider template whose PublicIp is the UserData
INSTANCE_TEMPLATE = {
    "heat_template_version": "2013-05-23",
    "parameters": {"ImageId": {"type": "string"}, "InstanceType": {"type": "string"},
                   "SecurityGroups": {"type": "comma_delimited_list"}, "UserData": {"type": "string"},
                   "Tags": {"type": "comma_delimited_list"}},
    "resources": {"r": {"type": "OS::Heat::None"}},
    "outputs": {"PublicIp": {"value": {"get_param": "UserData"}},
                **{name: {"value": ""} for name in ("AvailabilityZone", "PrivateDnsName", "PrivateIp",
                                                    "PublicDnsName")}},
}


@pytest.fixture(autouse=True)
def no_inventory(monkeypatch):
    """No inventory from the outside (``--inventory`` sets the variable: restored after the test)."""
    monkeypatch.setenv(inventory.ENVIRONMENT_VARIABLE, "")


@pytest.fixture
def files(tree):
    def write(template: dict, mapped: bool = False) -> list[str]:
        written = {"top.yaml": template}
        if mapped:
            written["instance.yaml"] = INSTANCE_TEMPLATE
            written["env.yaml"] = {"resource_registry": {"AWS::EC2::Instance": "instance.yaml"}}
        root = tree(written)
        return ["-t", str(root / "top.yaml")] + (["-e", str(root / "env.yaml")] if mapped else [])

    return write


def ok(run) -> str:
    assert run.code == 0, run.output
    return run.stdout


def members(cli, name: str = "s") -> dict[str, dict]:
    """The group's members (name -> their resource as `resource show` gives it)."""
    rows = json.loads(ok(cli("stack", "resource", "list", name, "-n", "2", "-f", "json")))
    found = {}
    for row in rows:
        if row["resource_type"] == "AWS::EC2::Instance":
            shown = ok(cli("stack", "resource", "show", row["stack_name"], row["resource_name"], "-f", "json"))
            found[row["resource_name"]] = json.loads(shown)
    return found


def output(cli, key: str, name: str = "s"):
    return json.loads(ok(cli("stack", "output", "show", name, key, "-f", "json")))["output_value"]


def nested_updates(cli, name: str = "s") -> int:
    """Updates of the group's nested stack (those of the members' own stacks left out)."""
    events = json.loads(ok(cli("stack", "event", "list", name, "-n", "2", "-f", "json")))
    return sum(e["resource_status_reason"] == "Stack UPDATE started"
               and re.fullmatch(f"{name}-Group-[0-9a-f]{{12}}", e["resource_name"]) is not None for e in events)


def test_aws_group_creates_simulated_instances_from_the_launch_configuration(cli, files):
    ok(cli("stack", "create", "s", "--wait", *files(cfn(aws_group()))))
    got = members(cli)
    assert len(got) == 3
    assert all(m["simulated"] and m["resource_status"] == "CREATE_COMPLETE" for m in got.values())
    # the launch configuration's metadata is every member's
    assert all(m["metadata"] == {"role": "web"} for m in got.values())
    assert output(cli, "InstanceList").split(",") == ["0.0.0.0"] * 3  # simulated instances have no address
    # as Heat: a launch configuration's reference is its physical resource name
    assert re.fullmatch("s-LaunchConfig-[0-9a-f]{12}", output(cli, "ConfigRef"))


def test_aws_group_members_get_the_launch_configurations_properties(cli, files):
    ok(cli("stack", "create", "s", "--wait", *files(cfn(aws_group(DesiredCapacity=2)), mapped=True)))
    assert output(cli, "InstanceList") == "v1,v1"


def test_scaling_policy_signals_resize_within_the_bounds(cli, files):
    template = cfn(aws_group(), {"Up": policy(2), "Down": policy(-3), "Exact": policy(4, "ExactCapacity")})
    ok(cli("stack", "create", "s", "--wait", *files(template, mapped=True)))
    ok(cli("stack", "resource", "signal", "s", "Up"))
    assert len(members(cli)) == 5
    ok(cli("stack", "resource", "signal", "s", "Up"))  # MaxSize: no change
    assert len(members(cli)) == 5
    ok(cli("stack", "resource", "signal", "s", "Down"))
    ok(cli("stack", "resource", "signal", "s", "Down"))  # MinSize
    assert output(cli, "InstanceList") == "v1"
    ok(cli("stack", "resource", "signal", "s", "Exact"))
    assert output(cli, "InstanceList") == "v1,v1,v1,v1"


def test_a_new_launch_configuration_replaces_the_members_in_batches(cli, files):
    args = files(cfn(aws_group(DesiredCapacity=4)), mapped=True)
    ok(cli("stack", "create", "s", "--wait", *args))
    before, first_config = set(members(cli)), output(cli, "ConfigRef")
    ok(cli("stack", "update", "s", "--wait", *args, "-P", "user_data=v2"))
    assert output(cli, "InstanceList") == "v2,v2,v2,v2"
    assert output(cli, "ConfigRef") != first_config  # replaced, so the group's LaunchConfigurationName changed
    assert set(members(cli)) == before  # as in Heat: the same members, given the new definition
    assert nested_updates(cli) == 3  # two batches of two, then the resize


def test_members_provider_template_need_not_offer_every_attribute_of_the_instance(cli, tree):
    """As Heat: a member template giving only ``PublicIp`` is used (no facade check of members)."""
    only_ip = {**INSTANCE_TEMPLATE, "outputs": {"PublicIp": INSTANCE_TEMPLATE["outputs"]["PublicIp"]}}
    root = tree({"top.yaml": cfn(instance_group(2)), "instance.yaml": only_ip,
                 "env.yaml": {"resource_registry": {"AWS::EC2::Instance": "instance.yaml"}}})
    ok(cli("stack", "create", "s", "--wait", "-t", root / "top.yaml", "-e", root / "env.yaml"))
    assert output(cli, "InstanceList") == "v1,v1"


def test_without_an_update_policy_only_new_members_get_a_new_launch_configuration(cli, files):
    args = files(cfn(instance_group(2, rolling=None)), mapped=True)
    ok(cli("stack", "create", "s", "--wait", *args))
    ok(cli("stack", "update", "s", "--wait", *files(cfn(instance_group(3, rolling=None)), mapped=True),
           "-P", "user_data=v2"))
    assert sorted(output(cli, "InstanceList").split(",")) == ["v1", "v1", "v2"]


def test_instance_group_resizes_on_update_and_rolls_a_new_configuration(cli, files):
    ok(cli("stack", "create", "s", "--wait", *files(cfn(instance_group(2)), mapped=True)))
    assert output(cli, "InstanceList") == "v1,v1"
    ok(cli("stack", "update", "s", "--wait", *files(cfn(instance_group(4)), mapped=True)))
    assert output(cli, "InstanceList") == "v1,v1,v1,v1"
    ok(cli("stack", "update", "s", "--wait", *files(cfn(instance_group(3)), mapped=True), "-P", "user_data=v2"))
    assert output(cli, "InstanceList") == "v2,v2,v2"


def test_a_change_that_cannot_be_updated_replaces_the_group(cli, files):
    ok(cli("stack", "create", "s", "--wait", *files(cfn(aws_group()))))
    before = json.loads(ok(cli("stack", "resource", "show", "s", "Group", "-f", "json")))["physical_resource_id"]
    ok(cli("stack", "update", "s", "--wait", *files(cfn(aws_group(DesiredCapacity=4)))))
    same = json.loads(ok(cli("stack", "resource", "show", "s", "Group", "-f", "json")))["physical_resource_id"]
    assert same == before and len(members(cli)) == 4
    ok(cli("stack", "update", "s", "--wait", *files(cfn(aws_group(AvailabilityZones=["wibble"])))))
    after = json.loads(ok(cli("stack", "resource", "show", "s", "Group", "-f", "json")))["physical_resource_id"]
    assert after != before and len(members(cli)) == 3


def test_delete_removes_the_members(cli, files, engine):
    ok(cli("stack", "create", "s", "--wait", *files(cfn(aws_group()))))
    child = engine.store.children(engine.get_record("s").id)[0]
    ok(cli("stack", "delete", "s", "--yes", "--wait"))
    assert engine.store.get_stack(child.id, "default", show_deleted=True).deleted_at is not None


@pytest.mark.parametrize("group, place, text", [
    (aws_group(MinSize=4, MaxSize=2, DesiredCapacity=3), "resources.Group.properties.MinSize",
     "MinSize can not be greater than MaxSize"),
    (aws_group(DesiredCapacity=9), "resources.Group.properties.DesiredCapacity",
     "DesiredCapacity must be between MinSize and MaxSize"),
    ({**aws_group(), "UpdatePolicy": {"AutoScalingRollingUpdate": {**ROLLING, "PauseTime": "5 minutes"}}},
     "resources.Group.update_policy.AutoScalingRollingUpdate", "PT#H#M#S"),
    ({**aws_group(), "UpdatePolicy": {"RollingUpdate": ROLLING}}, "resources.Group.update_policy",
     "RollingUpdate"),
    (instance_group(-1), "resources.Group.properties.Size", "-1 is out of range"),
    (aws_group(LaunchConfigurationName="nothing"), "resources.Group.properties.LaunchConfigurationName",
     'no launch configuration named "nothing"'),
])
def test_bad_groups_are_refused_with_their_place(cli, files, group, place, text):
    run = cli("stack", "create", "s", *files(cfn(group)))
    assert run.code == 1 and "Traceback" not in run.output
    assert place in run.output and text in run.output, run.output


def test_a_bad_image_in_the_launch_configuration_is_refused_by_the_inventory(cli, files, tmp_path: Path):
    inventory = tmp_path / "cloud.yaml"
    inventory.write_text(yaml.safe_dump({"images": ["fedora"], "flavors": ["m1.small"]}))
    run = cli("--inventory", inventory, "stack", "create", "s", *files(cfn(aws_group())))
    assert run.code == 1 and "The Image (cirros) could not be found." in run.output, run.output


def test_a_signal_refreshes_the_metadata_of_provider_template_resources(cli, tree):
    """As Heat: once a signal acted, provider-template resources resolve their metadata again."""
    template = cfn(aws_group(DesiredCapacity=2), {"Up": policy(1)})
    template["Resources"]["custom_lb"] = {
        "Type": "AWS::EC2::Instance", "Metadata": {"IPs": {"Fn::GetAtt": ["Group", "InstanceList"]}},
        "Properties": {"ImageId": "cirros", "InstanceType": "m1.small", "UserData": "lb", "SecurityGroups": [],
                       "Tags": []}}
    root = tree({"top.yaml": template, "instance.yaml": INSTANCE_TEMPLATE,
                 "env.yaml": {"resource_registry": {"AWS::EC2::Instance": "instance.yaml"}}})
    ok(cli("stack", "create", "s", "--wait", "-t", root / "top.yaml", "-e", root / "env.yaml"))

    def ips() -> str:
        return json.loads(ok(cli("stack", "resource", "show", "s", "custom_lb", "-f", "json")))["metadata"]["IPs"]

    assert ips() == "v1,v1"
    ok(cli("stack", "resource", "signal", "s", "Up"))
    assert ips() == "v1,v1,v1"


def test_a_signal_to_a_suspended_stack_is_refused_and_said_in_an_event(cli, files):
    ok(cli("stack", "create", "s", "--wait", *files(cfn(aws_group(), {"Up": policy(1)}))))
    ok(cli("stack", "suspend", "s"))
    run = cli("stack", "resource", "signal", "s", "Up")
    assert run.code == 1 and "Signal resource during SUSPEND is not supported" in run.output, run.output
    events = json.loads(ok(cli("stack", "event", "list", "s", "-f", "json")))
    assert [(e["resource_name"], e["resource_status"]) for e in events
            if e["resource_status_reason"] == "Cannot signal resource during SUSPEND"] == [("Up", "SUSPEND_COMPLETE")]
    assert len(members(cli)) == 3


@pytest.mark.parametrize("kind, sizes", [("OS::Heat::InstanceGroup", {"Size": 40}),
                                         ("AWS::AutoScaling::AutoScalingGroup",
                                          {"MinSize": 1, "MaxSize": 50, "DesiredCapacity": 40})])
def test_a_group_past_the_resource_limit_is_refused_before_anything_is_made(cli, files, home, kind, sizes):
    (home / "stoker.conf").write_text("[limits]\nmax_resources = 30\n")
    template = {"heat_template_version": "2018-08-31", "resources": {
        "config": {"type": "AWS::AutoScaling::LaunchConfiguration",
                   "properties": {"ImageId": "cirros", "InstanceType": "m1.small"}},
        "group": {"type": kind, "properties": {"AvailabilityZones": ["nova"],
                                               "LaunchConfigurationName": {"get_resource": "config"}, **sizes}}}}
    run = cli("stack", "create", "s", *files(template))
    assert run.code == 1 and "more than the limit of 30" in run.output and "Traceback" not in run.output, run.output
    assert ok(cli("stack", "list", "-f", "value")).strip() == ""


def test_aws_group_made_from_an_existing_instance_gets_its_image_flavor_key_and_groups(cli, files):
    """As Heat: ``InstanceId`` instead of ``LaunchConfigurationName`` builds the members from the
    server's launch properties; one of the two, not both nor neither."""
    server = {"Type": "AWS::EC2::Instance",
              "Properties": {"ImageId": "cirros", "InstanceType": "m1.tiny", "KeyName": "ops",
                             "SecurityGroups": ["web"], "UserData": "not copied"}}
    group = aws_group(DesiredCapacity=2, InstanceId={"Ref": "Server"})
    del group["Properties"]["LaunchConfigurationName"]
    template = {"AWSTemplateFormatVersion": "2010-09-09",
                "Resources": {"Server": server, "Group": group}}
    ok(cli("stack", "create", "s", "--wait", *files(template)))
    got = {name: member for name, member in members(cli).items() if name != "Server"}
    assert len(got) == 2
    shown = json.loads(ok(cli("stack", "resource", "show", "s", "Group", "-f", "json")))
    assert shown["resource_status"] == "CREATE_COMPLETE"
    for name, member in got.items():
        props = json.loads(ok(cli("stack", "resource", "show", member["stack_name"], name, "--with-attr", "show",
                                  "-f", "json")))["attributes"]["show"]
        assert (props["ImageId"], props["InstanceType"], props["KeyName"], props["SecurityGroups"]) == \
            ("cirros", "m1.tiny", "ops", ["web"])
        assert not props.get("UserData")

    # a launch configuration made from the instance: what it gives wins over the instance's
    config = {"Type": "AWS::AutoScaling::LaunchConfiguration",
              "Properties": {"InstanceId": {"Ref": "Server"}, "InstanceType": "m1.large"}}
    template["Resources"] = {"Server": server, "LaunchConfig": config, "Group": aws_group(DesiredCapacity=1)}
    ok(cli("stack", "create", "lc", "--wait", *files(template)))
    (name, member), = ((n, m) for n, m in members(cli, "lc").items() if n != "Server")
    props = json.loads(ok(cli("stack", "resource", "show", member["stack_name"], name, "--with-attr", "show",
                              "-f", "json")))["attributes"]["show"]
    assert (props["ImageId"], props["InstanceType"], props["KeyName"]) == ("cirros", "m1.large", "ops")

    unknown = aws_group(InstanceId="nosuch")
    del unknown["Properties"]["LaunchConfigurationName"]
    run = cli("stack", "create", "unknown", "--wait", *files(cfn(unknown)))
    assert run.code == 1 and "Traceback" not in run.output
    assert "resources.Group.properties.InstanceId: The server (nosuch) could not be found." in run.output

    run = cli("stack", "create", "both", "--wait", *files(cfn(aws_group(InstanceId="abc"))))
    assert run.code == 1 and "Either 'InstanceId' or 'LaunchConfigurationName' must be provided." in run.output
