"""OS::Heat::SoftwareConfig, StructuredConfig, CloudConfig and MultipartMime."""

from __future__ import annotations

import email
import uuid

import pytest

from stoker.engine.recorder import resource_fields
from stoker.errors import ValidationFailed
from stoker.resources.builtin import resource_mapping
from stoker.resources.builtin.software_config import (
    CloudConfig,
    MultipartMime,
    SoftwareConfig,
    StructuredConfig,
)

from .fakes import FakeStack, create, make, run, update


class ConfigStack(FakeStack):
    def __init__(self):
        super().__init__()
        self.resources: dict = {}

    def created(self, cls, properties=None, name="res"):
        resource = make(cls, properties, name=name, stack=self)
        self.resources[name] = resource
        run(create(resource))
        assert resource.state == ("CREATE", "COMPLETE"), resource.status_reason
        return resource


def created(cls, properties=None, name="res"):
    return ConfigStack().created(cls, properties, name)


def test_types_are_registered():
    mapping = resource_mapping()
    assert mapping["OS::Heat::SoftwareConfig"] is SoftwareConfig
    assert mapping["OS::Heat::StructuredConfig"] is StructuredConfig
    assert mapping["OS::Heat::CloudConfig"] is CloudConfig
    assert mapping["OS::Heat::MultipartMime"] is MultipartMime


# -- SoftwareConfig ------------------------------------------------------------------------
def test_software_config_reference_is_a_uuid_and_config_an_attribute():
    res = created(SoftwareConfig, {"config": "#!/bin/sh\necho hi\n"})
    assert str(uuid.UUID(res.FnGetRefId())) == res.FnGetRefId()
    assert res.FnGetAtt("config") == "#!/bin/sh\necho hi\n"


def test_software_config_record_is_kept_as_data_and_shown():
    res = created(SoftwareConfig, {
        "group": "script", "config": "echo $foo",
        "inputs": [{"name": "foo", "default": "bar"}, {"name": "n", "type": "Number",
                                                        "description": "a number"}],
        "outputs": [{"name": "result", "error_output": True}],
        "options": {"debug": True},
    })
    record = {
        "id": res.resource_id, "name": res.physical_resource_name(), "group": "script",
        "config": "echo $foo",
        "inputs": [{"name": "foo", "type": "String", "default": "bar", "replace_on_change": False},
                   {"name": "n", "description": "a number", "type": "Number",
                    "replace_on_change": False}],
        "outputs": [{"name": "result", "type": "String", "error_output": True}],
        "options": {"debug": True},
    }
    assert res.data()[SoftwareConfig.RECORD_KEY] == record
    assert resource_fields(res)["data"][SoftwareConfig.RECORD_KEY] == record  # the writer writes it
    assert res.FnGetAtt("show") == record


def test_software_config_defaults():
    record = created(SoftwareConfig, {"config": "x"}).FnGetAtt("show")
    assert record["group"] == "Heat::Ungrouped"
    assert (record["inputs"], record["outputs"], record["options"]) == ([], [], {})


def test_loaded_without_data_renders_the_record_again():
    res = created(SoftwareConfig, {"config": "again"})
    res._data = {}  # e.g. a store that lost it
    assert res.FnGetAtt("config") == "again"


def test_config_attribute_is_none_before_create():
    res = make(SoftwareConfig, {"config": "x"})
    assert res.FnGetAtt("config") is None
    assert res.record() is None


def test_configs_are_immutable():
    res = created(SoftwareConfig, {"config": "one"})
    assert run(update(res, {"config": "two"})) == "replace"
    assert run(update(res, {"config": "one"})) == "unchanged"


@pytest.mark.parametrize("props", [
    {"config": "x", "inputs": [{"description": "no name"}]},
    {"config": "x", "inputs": [{"name": "a", "type": "Float"}]},
    {"config": "x", "outputs": [{"name": "a", "type": "Text"}]},
    {"config": {"a": 1}},
])
def test_invalid_software_config(props):
    with pytest.raises(ValidationFailed):
        make(SoftwareConfig, props).validate_template()


# -- StructuredConfig ---------------------------------------------------------------------
def test_structured_config_is_a_map():
    config = {"config": {"files": {"/etc/x": {"content": "y"}}, "list": [1, 2]}}
    res = created(StructuredConfig, {"config": config, "group": "ansible"})
    assert res.FnGetAtt("config") == config
    assert res.FnGetAtt("show")["group"] == "ansible"


def test_structured_config_refuses_a_string():
    with pytest.raises(ValidationFailed):
        make(StructuredConfig, {"config": "text"}).validate_template()


def test_structured_config_shares_the_software_config_code():
    assert issubclass(StructuredConfig, SoftwareConfig)
    assert set(StructuredConfig.properties_schema) == set(SoftwareConfig.properties_schema)


# -- CloudConfig ---------------------------------------------------------------------------
def test_cloud_config_renders_yaml_as_heat():
    res = created(CloudConfig, {"cloud_config": {
        "write_files": [{"path": "/tmp/a", "content": "hello\nworld\n"}],
        "packages": ["git", "curl"],
        "runcmd": [["ls", "-l"], "echo done"],
        "bootcmd": {"nested": {"b": 2, "a": 1}},
    }})
    assert res.FnGetAtt("config") == (
        "#cloud-config\n"
        "bootcmd:\n"
        "  nested:\n"
        "    a: 1\n"
        "    b: 2\n"
        "packages:\n"
        "- git\n"
        "- curl\n"
        "runcmd:\n"
        "- - ls\n"
        "  - -l\n"
        "- echo done\n"
        "write_files:\n"
        "- content: 'hello\n\n    world\n\n    '\n"
        "  path: /tmp/a\n"
    )
    assert res.FnGetAtt("show")["group"] == "Heat::Ungrouped"


def test_empty_cloud_config():
    assert created(CloudConfig, {}).FnGetAtt("config") == "#cloud-config\n{}\n"


# -- MultipartMime -------------------------------------------------------------------------
def parts_of(text):
    message = email.message_from_string(text)
    assert message.is_multipart() and message.get_content_type() == "multipart/mixed"
    return [(p.get_content_type(), p.get_filename(), p.get_payload(decode=True).decode(
        p.get_content_charset())) for p in message.get_payload()]


def test_multipart_inline_parts():
    res = created(MultipartMime, {"parts": [
        {"config": "#!/bin/sh\necho 1\n", "subtype": "x-shellscript"},
        {"config": "plain words"},
        {"config": "#cloud-config\n{}\n", "filename": "cloud-config.yaml"},
    ]})
    assert parts_of(res.FnGetAtt("config")) == [
        ("text/x-shellscript", None, "#!/bin/sh\necho 1\n"),
        ("text/plain", None, "plain words"),
        ("text/cloud-config", "cloud-config.yaml", "#cloud-config\n{}\n"),  # Heat's subtype rule
    ]


def test_multipart_uses_referenced_configs():
    stack = ConfigStack()
    script = stack.created(SoftwareConfig, {"config": "echo script"}, name="script")
    cloud = stack.created(CloudConfig, {"cloud_config": {"a": 1}}, name="cloud")
    structured = stack.created(StructuredConfig, {"config": {"k": "v"}}, name="structured")
    mime = stack.created(MultipartMime, {"parts": [
        {"config": cloud.FnGetRefId(), "subtype": "cloud-config"},
        {"config": script.FnGetRefId(), "filename": "x-shellscript"},
        {"config": structured.FnGetRefId()},
        {"config": str(uuid.uuid4())},  # no such config here: the text itself
    ]}, name="mime")
    unknown = mime.properties["parts"][3]["config"]
    assert parts_of(mime.FnGetAtt("config")) == [
        ("text/cloud-config", None, "#cloud-config\na: 1\n"),
        ("text/x-shellscript", "x-shellscript", "echo script"),
        ("text/plain", None, '{"k": "v"}'),
        ("text/plain", None, unknown),
    ]


def test_multipart_of_multipart_appends_the_parts():
    stack = ConfigStack()
    inner = stack.created(MultipartMime, {"parts": [
        {"config": "one", "subtype": "x-shellscript"}, {"config": "zwei ü", "filename": "two.txt"},
    ]}, name="inner")
    outer = stack.created(MultipartMime, {"parts": [
        {"config": inner.FnGetRefId(), "type": "multipart"}, {"config": "three"},
        {"config": "not mime at all", "type": "multipart"},
    ]}, name="outer")
    assert parts_of(outer.FnGetAtt("config")) == [
        ("text/x-shellscript", None, "one"),
        ("text/two", "two.txt", "zwei ü"),
        ("text/plain", None, "three"),
    ]


def test_multipart_non_ascii_is_utf8():
    text = created(MultipartMime, {"parts": [{"config": "héllo"}]}).FnGetAtt("config")
    assert 'charset="utf-8"' in text
    assert parts_of(text) == [("text/plain", None, "héllo")]


def test_multipart_is_deterministic_and_valid():
    props = {"parts": [{"config": "a"}, {"config": "b", "subtype": "x-shellscript"}]}
    one = created(MultipartMime, props).FnGetAtt("config")
    two = created(MultipartMime, props).FnGetAtt("config")
    assert one == two
    message = email.message_from_string(one)
    boundary = message.get_boundary()
    assert boundary and one.count("--" + boundary) == 3  # two parts and the close
    assert one.startswith('Content-Type: multipart/mixed; boundary="')
    assert "MIME-Version: 1.0" in one
    other = created(MultipartMime, {"parts": [{"config": "c"}]}).FnGetAtt("config")
    assert email.message_from_string(other).get_boundary() != boundary


def test_multipart_boundary_avoids_the_content():
    props = {"parts": [{"config": "x"}]}
    first = email.message_from_string(created(MultipartMime, props).FnGetAtt("config")).get_boundary()
    tricky = created(MultipartMime, {"parts": [{"config": "x"}, {"config": "--" + first}]})
    text = tricky.FnGetAtt("config")
    assert [p[2] for p in parts_of(text)] == ["x", "--" + first]


def test_empty_multipart():
    res = created(MultipartMime, {})
    text = res.FnGetAtt("config")
    assert email.message_from_string(text).is_multipart()
    assert "Content-Type: text" not in text  # as Heat (the standard library's empty multipart)
    assert res.FnGetAtt("show")["group"] == "Heat::Ungrouped"


def test_multipart_group_and_part_type_checked():
    assert created(MultipartMime, {"group": "script", "parts": []}).FnGetAtt("show")["group"] == "script"
    with pytest.raises(ValidationFailed):
        make(MultipartMime, {"parts": [{"config": "a", "type": "binary"}]}).validate_template()
    with pytest.raises(ValidationFailed):
        make(MultipartMime, {"parts": [{"filename": "a"}]}).validate_template()
