"""HOT and blueprint calls on one base: name, arguments, path, phase, dependencies."""

from __future__ import annotations

from stoker.blueprint.evaluation import make_function
from stoker.blueprint.functions.table import FUNCTIONS
from stoker.blueprint.references import reference_cycles
from stoker.functions.call import HYBRID, RUNTIME, FunctionCall
from stoker.template.stack_context import StackContext
from stoker.template.parse import Parser
from stoker.template.versions import get_version


def hot_call(snippet):
    parser = Parser(get_version("2021-04-16"), StackContext(resource_names={"server", "port"}))
    return parser.parse(snippet, ("outputs", "o", "value"))


def test_a_hot_call_names_its_resources_and_runs_when_they_exist():
    call = hot_call({"get_attr": ["server", "first_address"]})
    assert isinstance(call, FunctionCall)
    assert (call.name, call.path, call.phase) == ("get_attr", ("outputs", "o", "value", "get_attr"), RUNTIME)
    assert list(call.dependencies()) == ["server"]
    joined = hot_call({"list_join": [",", [{"get_resource": "port"}, "x"]]})
    assert joined.phase == HYBRID and list(joined.dependencies()) == ["port"]
    assert repr(hot_call({"get_resource": "port"})) == "{get_resource: 'port'}"


def test_a_blueprint_call_names_the_places_it_reads():
    node = {"name": "web", "properties": {}}
    read = make_function({"get_property": ["SELF", "port", 0]}, "node_template", node, "node_templates.web.x")
    assert isinstance(read, FunctionCall)
    assert (read.name, read.args, read.phase, read.table) == ("get_property", ["SELF", "port", 0], HYBRID, FUNCTIONS)
    assert list(read.dependencies()) == [("node", "web", "port", 0)]
    computed = make_function({"get_input": [{"get_input": "which"}, "key"]}, None, {}, "inputs.a.default")
    assert list(computed.dependencies()) == []  # known only once evaluated
    attribute = make_function({"get_attribute": ["db", "ip"]}, "node_template", node, "x")
    assert attribute.phase == RUNTIME and list(attribute.dependencies()) == []


def test_blueprint_reference_cycles_come_from_the_calls_dependencies():
    plan = {"nodes": [{"name": "a", "properties": {"p": {"get_property": ["b", "q"]}}},
                      {"name": "b", "properties": {"q": {"get_property": ["SELF", "r"]},
                                                   "r": {"get_property": ["a", "p"]}}}],
            "inputs": {"x": {"default": {"get_input": "y"}}, "y": {"default": {"get_input": ["x"]}}}}
    messages = sorted(error.message for error in reference_cycles(plan))
    assert messages == ["circular get_input function call detected: x -> y -> x",
                        "circular get_property function call detected: a.p -> b.q -> b.r -> a.p"]
