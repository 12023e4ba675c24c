"""repeat, map_merge, map_replace, filter, list_concat(_unique), contains."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stoker.errors import FunctionError, ValidationFailed
from stoker.functions import collections as coll
from stoker.functions.base import resolve
from stoker.template.stack_context import StackContext
from stoker.template.parse import Parser
from stoker.template.versions import get_version


def parse(snippet, version="2017-09-01", **context):
    parser = Parser(get_version(version), StackContext(**context))
    return parser, parser.parse(snippet, ("value",))


def evaluate(snippet, version="2017-09-01", **context):
    parser, parsed = parse(snippet, version, **context)
    if parser.problems.errors:
        raise ValidationFailed(parser.problems.items)
    return resolve(parsed)


def fails(snippet, phrase, version="2017-09-01", code=None, **context):
    """Rejected (at validation or when resolved) with ``phrase`` in the message."""
    with pytest.raises((ValidationFailed, FunctionError)) as caught:
        evaluate(snippet, version, **context)
    error = caught.value
    assert phrase in str(error)
    if code is not None:
        codes = [p.code for p in error.problems] if isinstance(error, ValidationFailed) else [error.code]
        assert code in codes


scalars = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.text(alphabet="ab", max_size=2))
json_values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(alphabet="ab", max_size=2), inner, max_size=3)
), max_leaves=6)
keys = st.text(alphabet="abcd", min_size=1, max_size=3)


# -- repeat --------------------------------------------------------------------------------
class TestRepeat:
    def test_maps_iterate_their_keys_from_2016_10_14(self):
        snippet = {"repeat": {"template": "<%k%>", "for_each": {"<%k%>": {"x": 1, "y": 2}}}}
        assert evaluate(snippet, version="2016-10-14") == ["x", "y"]
        fails(snippet, "must be lists", version="2015-04-30")

    def test_null_list_gives_nothing(self):
        assert evaluate({"repeat": {"template": "x", "for_each": {"%v%": None}}}) == []

    def test_empty_for_each_is_an_error(self):
        fails({"repeat": {"template": "x", "for_each": {}}}, "must not be empty")

    def test_for_each_must_be_a_map(self):
        fails({"repeat": {"template": "x", "for_each": ["a"]}}, "must contain a map")
        fails({"repeat": {"template": "x", "for_each": {"get_param": "p"}}}, "must contain a map",
              parameters={"p": ["a"]})

    def test_items_must_be_strings_when_substituted(self):
        fails({"repeat": {"template": "n=%n%", "for_each": {"%n%": [1, 2]}}}, "can only put strings")

    def test_non_string_leaves_are_copied(self):
        snippet = {"repeat": {"template": {"n": 1, "on": True, "name": "%v%"}, "for_each": {"%v%": ["a"]}}}
        assert evaluate(snippet) == [{"n": 1, "on": True, "name": "a"}]

    def test_replacements_apply_one_after_the_other(self):
        # the second placeholder is found in text the first one inserted (Heat does the same)
        snippet = {"repeat": {"template": "A", "for_each": {"A": ["B"], "B": ["C"]}}}
        assert evaluate(snippet) == ["C"]

    def test_permutations_false_walks_lists_side_by_side(self):
        snippet = {"repeat": {"template": "%a%%b%", "for_each": {"%a%": ["1", "2"], "%b%": ["x", "y"]},
                              "permutations": False}}
        assert evaluate(snippet) == ["1x", "2y"]

    def test_permutations_before_pike_is_ignored_with_a_warning(self):
        snippet = {"repeat": {"template": "%a%%b%", "for_each": {"%a%": ["1", "2"], "%b%": ["x", "y"]},
                              "permutations": False}}
        parser, parsed = parse(snippet, version="2016-10-14")
        assert "2017-09-01" in parser.problems.warnings[0].message
        assert len(resolve(parsed)) == 4

    def test_for_each_values_from_functions(self):
        snippet = {"repeat": {"template": "p%", "for_each": {"p%": {"get_param": "ports"}},
                              "permutations": False}}
        assert evaluate(snippet, parameters={"ports": ["80", "443"]}) == ["80", "443"]
        fails(snippet, "must be lists", parameters={"ports": {"80": 1}})

    def test_size_is_limited(self, monkeypatch):
        monkeypatch.setenv("STOKER_MAX_VALUE_SIZE", "1000")
        letters = list("abcdefghij")
        snippet = {"repeat": {"template": "%a%%b%%c%%d%",
                              "for_each": {"%a%": letters, "%b%": letters, "%c%": letters, "%d%": letters}}}
        fails(snippet, "10000 pieces", code="result-too-large")

    def test_three_lists_of_200_are_refused_before_building(self):
        items = [str(i) for i in range(200)]
        snippet = {"repeat": {"template": {"k": "<a><b><c>"},
                              "for_each": {"<a>": items, "<b>": items, "<c>": items}}}
        fails(snippet, "8000000 pieces", code="result-too-large")

    def test_concatenating_one_big_list_many_times_is_refused(self, monkeypatch):
        monkeypatch.setenv("STOKER_MAX_VALUE_SIZE", "10000")
        snippet = {"list_concat": [{"get_param": "big"}] * 10_000}
        fails(snippet, "max_value_size", parameters={"big": ["x"] * 1000}, code="result-too-large")

    @given(st.lists(st.text(alphabet="xyz", max_size=3), max_size=6))
    def test_one_result_per_item(self, items):
        result = evaluate({"repeat": {"template": {"name": "<%i%>"}, "for_each": {"<%i%>": items}}})
        assert result == [{"name": item} for item in items]

    @given(st.lists(st.lists(st.sampled_from("abc"), max_size=3), min_size=1, max_size=3))
    def test_permutations_count_is_the_product(self, lists):
        for_each = {f"<{i}>": values for i, values in enumerate(lists)}
        result = evaluate({"repeat": {"template": "".join(for_each), "for_each": for_each}})
        assert result == ["".join(combo) for combo in itertools.product(*lists)]


# -- map_merge / map_replace ---------------------------------------------------------------
class TestMaps:
    def test_map_merge_of_function_results(self):
        snippet = {"map_merge": [{"get_param": "a"}, None, {"k": "mine"}]}
        assert evaluate(snippet, parameters={"a": {"k": "theirs", "j": 1}}) == {"k": "mine", "j": 1}

    def test_map_merge_bad_items_are_found_at_validation(self):
        parser, _ = parse({"map_merge": [{"a": 1}, "b"]})
        assert "Items to merge must be maps" in parser.problems.errors[0].message

    def test_map_replace_unhashable_key_replacement(self):
        fails({"map_replace": [{"a": 1}, {"keys": {"a": [1]}}]}, "must be a string or a number")

    def test_map_replace_maps_keys_and_values(self):
        snippet = {"map_replace": [{"a": "x", "b": ["x"]}, {"keys": {"a": "A", "zz": "Z"}, "values": {"x": "X"}}]}
        assert evaluate(snippet) == {"A": "X", "b": ["x"]}

    def test_map_replace_collision_code(self):
        fails({"map_replace": [{"a": 1, "b": 2}, {"keys": {"a": "b"}}]}, "collides", code="key-collision")

    @given(st.lists(st.dictionaries(keys, scalars, max_size=4), max_size=4))
    def test_map_merge_later_wins(self, maps):
        expected = {}
        for m in maps:
            expected.update(m)
        assert evaluate({"map_merge": maps}) == expected

    @given(st.dictionaries(keys, json_values, max_size=5))
    def test_map_replace_with_nothing_to_replace_is_identity(self, source):
        assert evaluate({"map_replace": [source, {"keys": {}, "values": {}}]}) == source
        assert evaluate({"map_replace": [source, {}]}) == source


# -- filter / list_concat / contains ------------------------------------------------------
class TestLists:
    def test_filter_returns_empty_sequences_unchanged(self):
        assert evaluate({"filter": [[1], None]}) is None
        assert evaluate({"filter": [[1], []]}) == []
        assert evaluate({"filter": [None, [1, 2]]}) == [1, 2]

    def test_filter_needs_a_literal_list_of_two(self):
        fails({"filter": {"get_param": "p"}}, "must be a list", parameters={"p": [[1], [1]]})

    def test_list_concat_unique_with_maps(self):
        snippet = {"list_concat_unique": [[{"a": 1}, "x"], [{"a": 1}, "y", "x"]]}
        assert evaluate(snippet) == [{"a": 1}, "x", "y"]

    def test_list_concat_of_a_function(self):
        assert evaluate({"list_concat": {"get_param": "p"}}, parameters={"p": [[1], None, [2]]}) == [1, 2]

    def test_contains_string_needs_a_string_value(self):
        assert evaluate({"contains": ["b", "abc"]}) is True
        fails({"contains": [1, "abc"]}, "must be a string")

    def test_contains_sequence_from_a_function(self):
        snippet = {"contains": ["x", {"get_param": "p"}]}
        assert evaluate(snippet, parameters={"p": ["x"]}) is True
        fails(snippet, "should be a sequence", parameters={"p": {"x": 1}})

    @given(st.lists(st.one_of(st.none(), st.lists(json_values, max_size=4)), max_size=5))
    def test_list_concat_length_is_the_sum(self, lists):
        result = evaluate({"list_concat": lists})
        assert len(result) == sum(len(part or []) for part in lists)
        assert result == [item for part in lists if part for item in part]

    @given(st.lists(st.lists(json_values, max_size=5), max_size=4))
    def test_list_concat_unique_keeps_first_of_each(self, lists):
        result = evaluate({"list_concat_unique": lists})
        everything = [item for part in lists for item in part]
        assert all(result[i] != result[j] for i in range(len(result)) for j in range(i))
        first_seen = []
        for item in everything:
            if item not in first_seen:
                first_seen.append(item)
        assert result == first_seen

    @given(st.lists(scalars, max_size=8), st.lists(scalars, min_size=1, max_size=3))
    def test_filter_removes_exactly_the_values(self, sequence, values):
        result = evaluate({"filter": [values, sequence]})
        if not sequence:
            assert result == sequence
        else:
            assert result == [item for item in sequence if item not in values]
            assert not any(item in values for item in result)

    @given(scalars, st.lists(scalars, max_size=5))
    def test_contains_is_membership(self, value, sequence):
        assert evaluate({"contains": [value, sequence]}) is (value in sequence)
