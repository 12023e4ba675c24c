"""The CloudFormation-compatible functions of heat_template_version 2013-05-23."""

from __future__ import annotations

import pytest

from stoker.errors import FunctionError, ResourcePending, ValidationFailed
from stoker.functions.base import dependencies, resolve
from stoker.template.stack_context import StackContext
from stoker.template.parse import Parser
from stoker.template.versions import get_version


def parse(snippet, version="2013-05-23", **context):
    parser = Parser(get_version(version), StackContext(**context))
    return parser, parser.parse(snippet, ("value",))


def evaluate(snippet, version="2013-05-23", **context):
    parser, parsed = parse(snippet, version, **context)
    if parser.problems.errors:
        raise ValidationFailed(parser.problems.items)
    return resolve(parsed)


def fails(snippet, phrase, version="2013-05-23", **context):
    with pytest.raises((ValidationFailed, FunctionError)) as caught:
        evaluate(snippet, version, **context)
    assert phrase in str(caught.value)


def test_base64_is_the_string_itself():
    assert evaluate({"Fn::Base64": "#!/bin/sh"}) == "#!/bin/sh"
    fails({"Fn::Base64": ["x"]}, "must be a string")


def test_get_azs_ignores_its_region():
    assert evaluate({"Fn::GetAZs": {"Ref": "AWS::Region"}}) == ["nova"]


def test_join():
    assert evaluate({"Fn::Join": ["-", ["a", "b"]]}) == "a-b"
    fails({"Fn::Join": ["-", ["a"], ["b"]]}, 'Incorrect arguments to "Fn::Join"')


def test_split():
    assert evaluate({"Fn::Split": [",", {"get_param": "p"}]}, parameters={"p": "a,b"}) == ["a", "b"]
    fails({"Fn::Split": [{"get_param": "p"}, "a,b"]}, "Delimiter", parameters={"p": ","})
    fails({"Fn::Split": "a,b"}, 'Incorrect arguments to "Fn::Split"')


def test_replace():
    assert evaluate({"Fn::Replace": [{"%x%": "1"}, "x=%x%"]}) == "x=1"
    fails({"Fn::Replace": {"template": "x", "params": {}}}, 'Incorrect arguments to "Fn::Replace"')
    fails({"Fn::Replace": [{"%x%": ["1"]}, "x=%x%"]}, "must be strings or numbers")


@pytest.mark.parametrize(("snippet", "expected"), [
    ({"Fn::Select": ["1", ["a", "b"]]}, "b"),
    ({"Fn::Select": [-1, ["a", "b"]]}, "b"),
    ({"Fn::Select": [5, ["a", "b"]]}, ""),
    ({"Fn::Select": ["k", {"k": "v"}]}, "v"),
    ({"Fn::Select": ["z", {"k": "v"}]}, ""),
    ({"Fn::Select": [0, '["a"]']}, "a"),
    ({"Fn::Select": [0, ""]}, ""),
    ({"Fn::Select": [0, None]}, ""),
])
def test_select(snippet, expected):
    assert evaluate(snippet) == expected


def test_select_errors_and_versions():
    fails({"Fn::Select": ["x", ["a"]]}, "must be an integer")
    fails({"Fn::Select": [0, {"k": "v"}]}, "must be a string")
    fails({"Fn::Select": [0, "{bad"]}, "not JSON")
    fails({"Fn::Select": [0]}, "[index, collection]")
    assert evaluate({"Fn::Select": [0, ["a"]]}, version="2015-04-30") == "a"
    fails({"Fn::Select": [0, ["a"]]}, "not supported", version="2015-10-15")


def test_member_list_to_map():
    snippet = {"Fn::MemberListToMap": ["Name", "Value", [
        ".member.1.Name=b", ".member.1.Value=2", ".member.0.Name=a", ".member.0.Value=1=one",
        ".member.2.Name=lonely", "other=x",
    ]]}
    assert evaluate(snippet) == {"a": "1=one", "b": "2"}
    fails({"Fn::MemberListToMap": ["Name", "Value", ["no-equals"]]}, "must be strings of the form")
    fails({"Fn::MemberListToMap": ["Name", ["Value"]]}, "must be of the form")


def test_resource_facade():
    facade = {"metadata": {"m": 1}, "deletion_policy": "Retain"}
    assert evaluate({"Fn::ResourceFacade": "Metadata"}, facade=facade) == {"m": 1}
    assert evaluate({"Fn::ResourceFacade": "DeletionPolicy"}, facade=facade) == "Retain"
    fails({"Fn::ResourceFacade": "metadata"}, "Metadata, DeletionPolicy, UpdatePolicy")


class TestRef:
    def test_parameter_and_pseudo_parameter(self):
        assert evaluate({"Ref": "size"}, parameters={"size": 3}) == 3
        assert evaluate({"Ref": "OS::stack_name"}, stack_name="s1") == "s1"

    def test_resource_comes_first(self):
        parser, parsed = parse({"Ref": "web"}, parameters={"web": "param"}, resource_names={"web"})
        assert list(dependencies(parsed)) == ["web"]
        with pytest.raises(ResourcePending):
            resolve(parsed)

    def test_unknown_name_fails_only_when_resolved(self):
        parser, parsed = parse({"Ref": "AWS::StackName"})
        assert not parser.problems.errors  # as Heat: a parameter reference, checked when resolved
        assert [w.code for w in parser.problems.warnings] == ["unknown-reference"]
        with pytest.raises(FunctionError) as info:
            resolve(parsed)
        assert info.value.code == "unknown-reference"

    def test_argument_must_be_a_name(self):
        fails({"Ref": {"get_param": "x"}}, "must be the name", parameters={"x": "y"})

    def test_removed_after_2013(self):
        fails({"Ref": "x"}, "not supported", version="2014-10-16", parameters={"x": 1})
