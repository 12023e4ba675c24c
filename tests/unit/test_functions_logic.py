"""if (and 2021-04-16's nullable if), equals, not, and, or; resolve() dropping omitted values."""

from __future__ import annotations

import copy
import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stoker.errors import FunctionError, ValidationFailed
from stoker.functions.base import OMITTED, dependencies, resolve
from stoker.template.stack_context import StackContext
from stoker.template.parse import Parser
from stoker.template.versions import get_version

CONDITIONS = {"prod": True, "dev": False}


def make_parser(version="2021-04-16", conditions=CONDITIONS, **context):
    stack = StackContext(condition_names=set(conditions or ()), **context)
    if conditions is not None:
        stack.condition_evaluator = conditions.__getitem__
    return Parser(get_version(version), stack)


def evaluate(snippet, version="2021-04-16", condition=False, **context):
    parser = make_parser(version, **context)
    parsed = parser.parse(snippet, ("value",), conditions=condition)
    if parser.problems.errors:
        raise ValidationFailed(parser.problems.items)
    return resolve(parsed)


def problems(snippet, version="2021-04-16", condition=False, **context):
    parser = make_parser(version, **context)
    parser.parse(snippet, ("value",), conditions=condition)
    return parser.problems.errors


# -- if ------------------------------------------------------------------------------------
class TestIf:
    def test_condition_names_booleans_and_functions(self):
        assert evaluate({"if": ["prod", "p", "d"]}) == "p"
        assert evaluate({"if": ["dev", "p", "d"]}) == "d"
        assert evaluate({"if": [{"not": "dev"}, "p", "d"]}) == "p"
        assert evaluate({"if": [{"and": ["prod", {"equals": [1, 1]}]}, "p", "d"]}) == "p"

    def test_null_condition_counts_as_true(self):
        assert evaluate({"if": [None, "p", "d"]}) == "p"

    def test_condition_from_a_parameter(self):
        snippet = {"if": [{"get_param": "flag"}, "p", "d"]}
        assert evaluate(snippet, parameters={"flag": False}) == "d"
        assert evaluate(snippet, parameters={"flag": "prod"}) == "p"
        with pytest.raises(FunctionError, match='Invalid condition "nope"'):
            evaluate(snippet, parameters={"flag": "nope"})

    def test_unknown_condition_suggests_a_name(self):
        [problem] = problems({"if": ["prd", 1, 2]})
        assert problem.code == "unknown-condition"
        assert problem.message == 'Invalid condition "prd"; did you mean "prod"?'

    def test_a_number_is_not_a_condition(self):
        [problem] = problems({"if": [1, "a", "b"]})
        assert "Invalid condition 1" in problem.message

    def test_resources_are_not_allowed_in_the_condition(self):
        [problem] = problems({"if": [{"equals": [{"get_resource": "r"}, "x"]}, 1, 2]},
                             resource_names={"r"})
        assert problem.code == "function-not-allowed-here"

    def test_both_values_are_validated(self):
        [problem] = problems({"if": ["prod", "ok", {"list_join": [","]}]})
        assert problem.code == "invalid-function-arguments"

    def test_one_value_needs_2021_04_16(self):
        assert problems({"if": ["prod", "x"]}, version="2018-08-31")
        assert not problems({"if": ["prod", "x"]})

    def test_dependencies_follow_the_chosen_value(self):
        parser = make_parser(resource_names={"a", "b"})
        parsed = parser.parse({"if": ["dev", {"get_resource": "a"}, {"get_resource": "b"}]})
        assert list(dependencies(parsed)) == ["b"]

    def test_dependencies_are_both_values_while_conditions_are_unknown(self):
        parser = make_parser(conditions=None, resource_names={"a", "b"})
        parser.stack.condition_names = {"dev"}
        parsed = parser.parse({"if": ["dev", {"get_resource": "a"}, {"get_resource": "b"}]})
        assert sorted(dependencies(parsed)) == ["a", "b"]


class TestNullableIf:
    def test_omitted_value_drops_its_key_and_item(self):
        snippet = {"keep": 1, "drop": {"if": ["dev", 2]}, "list": [1, {"if": ["dev", 2]}, 3]}
        assert evaluate(snippet) == {"keep": 1, "list": [1, 3]}

    def test_omitted_value_on_its_own_is_null(self):
        assert evaluate({"if": ["dev", 2]}) is None

    def test_omission_passes_through_an_outer_if(self):
        assert evaluate([{"if": ["prod", {"if": ["dev", "x"]}, "y"]}, "z"]) == ["z"]

    def test_omitted_item_drops_out_of_function_arguments(self):
        assert evaluate({"list_concat": [[1], {"if": ["dev", [2]]}]}) == [1]
        assert evaluate({"map_merge": [{"a": 1}, {"if": ["dev", {"a": 2}]}]}) == {"a": 1}

    def test_a_lone_function_argument_that_is_omitted_is_null(self):
        assert evaluate({"filter": [[1], {"if": ["dev", [1, 2]]}]}) is None

    def test_an_omitted_positional_argument_shortens_the_list(self):
        # str_split resolves its argument list as a whole, as Heat does
        with pytest.raises(FunctionError, match="Incorrect arguments"):
            evaluate({"str_split": [",", {"if": ["dev", "a,b"]}]})

    def test_omitted_marker_survives_copy_and_pickle(self):
        assert copy.deepcopy(OMITTED) is OMITTED
        assert pickle.loads(pickle.dumps(OMITTED)) is OMITTED

    @given(st.lists(st.tuples(st.booleans(), st.integers()), max_size=8))
    def test_list_keeps_exactly_the_true_items(self, items):
        snippet = [{"if": [flag, value]} for flag, value in items]
        assert evaluate(snippet) == [value for flag, value in items if flag]


# -- equals, not, and, or ------------------------------------------------------------------
class TestConditionFunctions:
    def test_equals_compares_resolved_values(self):
        assert evaluate({"equals": [{"get_param": "env"}, "prod"]}, condition=True,
                        parameters={"env": "prod"}) is True
        assert evaluate({"equals": [[1, {"a": 2}], [1, {"a": 2}]]}, condition=True) is True

    def test_not_and_or(self):
        assert evaluate({"not": "prod"}, condition=True) is False
        assert evaluate({"and": ["prod", True, {"not": "dev"}]}, condition=True) is True
        assert evaluate({"or": ["dev", False]}, condition=True) is False

    def test_argument_shapes(self):
        assert "must be a condition" in problems({"not": None}, condition=True)[0].message
        assert "must be a list of conditions" in problems({"and": "prod"}, condition=True)[0].message
        assert "minimum number" in problems({"or": ["prod"]}, condition=True)[0].message
        assert problems({"and": ["prod", "nope"]}, condition=True)[0].code == "unknown-condition"
        assert "Invalid condition" in problems({"or": ["prod", [True]]}, condition=True)[0].message

    def test_a_nested_value_that_is_not_a_boolean(self):
        with pytest.raises(FunctionError, match="Invalid condition 3"):
            evaluate({"not": {"get_param": "n"}}, condition=True, parameters={"n": 3})

    def test_condition_errors_get_the_function_path(self):
        parser = make_parser()

        def broken(name):
            raise FunctionError("Circular definition for condition", code="condition-cycle")

        parser.stack.condition_evaluator = broken
        parsed = parser.parse({"not": "prod"}, ("conditions", "c"), conditions=True)
        with pytest.raises(FunctionError) as caught:
            resolve(parsed)
        assert caught.value.path == ("conditions", "c", "not")

    @given(st.lists(st.booleans(), min_size=2, max_size=6))
    def test_and_or_match_python(self, values):
        assert evaluate({"and": values}, condition=True) is all(values)
        assert evaluate({"or": values}, condition=True) is any(values)
        assert evaluate({"not": {"and": values}}, condition=True) is not all(values)


# -- the conditions section ----------------------------------------------------------------
def test_a_literal_in_equals_is_a_value_even_when_it_names_a_condition():
    """``prod: {equals: [{get_param: env}, prod]}`` compares with the text "prod" (as Heat)."""
    from stoker.template.definition import build_definition
    from stoker.template.template import Template

    template = Template.from_text(
        "heat_template_version: 2016-10-14\n"
        "parameters: {env: {type: string}}\n"
        "conditions:\n"
        "  prod: {equals: [{get_param: env}, prod]}\n"
        "  not_prod: {not: prod}\n")
    for env, expected in (("prod", {"prod": True, "not_prod": False}),
                          ("test", {"prod": False, "not_prod": True})):
        definition = build_definition(template, {"env": env})
        assert definition.problems.errors == []
        assert definition.conditions.evaluate_all(definition.problems) == expected
