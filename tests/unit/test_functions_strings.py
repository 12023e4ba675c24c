"""list_join, str_replace (and strict forms), str_split, digest, make_url."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stoker.errors import FunctionError, ValidationFailed
from stoker.functions import strings
from stoker.functions.base import resolve
from stoker.template.stack_context import StackContext
from stoker.template.parse import Parser
from stoker.template.versions import get_version


def parse(snippet, version="2017-09-01", **context):
    parser = Parser(get_version(version), StackContext(**context))
    return parser, parser.parse(snippet, ("value",))


def evaluate(snippet, version="2017-09-01", **context):
    """Parse, fail on validation errors, resolve."""
    parser, parsed = parse(snippet, version, **context)
    if parser.problems.errors:
        raise ValidationFailed(parser.problems.items)
    return resolve(parsed)


def fails(snippet, phrase, version="2017-09-01", **context):
    """``snippet`` is rejected, at validation or when resolved, with ``phrase`` in the message."""
    with pytest.raises((ValidationFailed, FunctionError)) as caught:
        evaluate(snippet, version, **context)
    assert phrase in str(caught.value)
    return caught.value


text = st.text(alphabet="abcxyz-_ é", max_size=12)


# -- list_join ----------------------------------------------------------------------------
class TestListJoin:
    def test_nulls_join_as_empty_strings(self):
        assert evaluate({"list_join": ["-", ["a", None, "b"]]}) == "a--b"
        assert evaluate({"list_join": ["-", None]}) == ""

    def test_several_lists_and_empty_values_are_skipped(self):
        assert evaluate({"list_join": [",", ["a"], None, "", ["b", "c"]]}) == "a,b,c"

    def test_maps_and_lists_join_as_sorted_ascii_json(self):
        assert evaluate({"list_join": [";", [{"b": 1, "a": "é"}, [1, None]]]}) == \
            '{"a": "\\u00e9", "b": 1}' + ";[1, null]"

    def test_numbers_cannot_be_joined(self):
        fails({"list_join": [",", ["a", 5]]}, "Items to join must be string, map or list not 5")

    def test_delimiter_must_be_a_string(self):
        fails({"list_join": [1, ["a"]]}, '"list_join" delimiter must be a string')

    def test_bad_items_found_at_validation(self):
        parser, _ = parse({"list_join": [",", ["a", 5]]})
        assert parser.problems.errors[0].path == ("value", "list_join")

    def test_arguments_from_functions(self):
        params = {"sep": "+", "items": ["x", "y"]}
        assert evaluate({"list_join": [{"get_param": "sep"}, {"get_param": "items"}]},
                        parameters=params) == "x+y"

    def test_function_result_of_wrong_type_fails_when_resolved(self):
        fails({"list_join": [",", {"get_param": "p"}]}, "must operate on a list",
              parameters={"p": "not a list"})

    def test_2013_version_takes_exactly_one_list(self):
        fails({"list_join": [",", ["a"], ["b"]]}, "Incorrect arguments", version="2013-05-23")

    def test_omitted_if_drops_out_of_the_lists(self):
        snippet = {"list_join": [",", ["a"], {"if": [False, ["b"]]}, ["c"]]}
        assert evaluate(snippet, version="2021-04-16") == "a,c"

    @given(st.lists(st.text(alphabet="abc xyz", min_size=0, max_size=8), min_size=1, max_size=8))
    def test_str_split_undoes_list_join(self, items):
        joined = evaluate({"list_join": [",", items]})
        assert evaluate({"str_split": [",", joined]}) == items


# -- str_replace ---------------------------------------------------------------------------
class TestStrReplace:
    def test_longest_placeholder_first(self):
        assert evaluate({"str_replace": {"template": "$ab $a", "params": {"$a": "1", "$ab": "2"}}}) == "2 1"

    def test_equal_lengths_in_sorted_order(self):
        # "ab" sorts first and takes the shared "b"
        assert evaluate({"str_replace": {"template": "abc", "params": {"bc": "Y", "ab": "X"}}}) == "Xc"

    def test_single_pass(self):
        snippet = {"str_replace": {"template": "x y", "params": {"x": "y", "y": "x"}}}
        assert evaluate(snippet) == "y x"

    def test_value_types(self):
        snippet = {"str_replace": {"template": "a b c d", "params": {"a": None, "b": True, "c": 1.5, "d": 7}}}
        assert evaluate(snippet) == " True 1.5 7"

    def test_placeholders_must_be_non_empty_strings(self):
        fails({"str_replace": {"template": "x", "params": {"": "y"}}}, "must not be empty")
        fails({"str_replace": {"template": "x", "params": {1: "y"}}}, "must be strings")

    def test_params_from_a_function(self):
        snippet = {"str_replace": {"template": "hi NAME", "params": {"get_param": "p"}}}
        assert evaluate(snippet, parameters={"p": {"NAME": "you"}}) == "hi you"
        fails(snippet, "params must be a map", parameters={"p": "NAME"})

    def test_extra_keys_are_ignored_with_a_warning(self):
        parser, parsed = parse({"str_replace": {"template": "a", "params": {}, "parms": 1}})
        assert not parser.problems.errors
        assert [w.code for w in parser.problems.warnings] == ["ignored-argument"]
        assert resolve(parsed) == "a"

    def test_strict_reports_unused_params_at_validation_when_everything_is_known(self):
        parser, _ = parse({"str_replace_strict": {"template": "a", "params": {"a": "1", "b": "2"}}})
        assert [p.code for p in parser.problems.errors] == ["unused-param"]

    def test_strict_with_function_params_fails_when_resolved(self):
        snippet = {"str_replace_strict": {"template": "a", "params": {"get_param": "p"}}}
        parser, parsed = parse(snippet, parameters={"p": {"a": "1", "zz": "2"}})
        assert not parser.problems.errors
        with pytest.raises(FunctionError, match="zz"):
            resolve(parsed)

    def test_strict_placeholder_hidden_by_a_longer_one_counts_as_unused(self):
        fails({"str_replace_strict": {"template": "abc", "params": {"abc": "1", "b": "2"}}},
              "not found in the template: b")

    def test_vstrict_rejects_empty_values(self):
        fails({"str_replace_vstrict": {"template": "a", "params": {"a": ""}}}, "empty value for param a")
        assert evaluate({"str_replace_vstrict": {"template": "a", "params": {"a": 0}}}) == "0"

    def test_result_size_is_limited(self, monkeypatch):
        monkeypatch.setenv("STOKER_MAX_VALUE_SIZE", "100")
        error = fails({"str_replace": {"template": "a" * 20, "params": {"a": "bbbbbbbbbb"}}},
                      "limit of 100 bytes (max_value_size)")
        assert error.code == "result-too-large"

    def test_joining_a_big_item_many_times_stops_early(self, monkeypatch):
        monkeypatch.setenv("STOKER_MAX_VALUE_SIZE", "1000")
        fails({"list_join": [",", [{"get_param": "big"}] * 100_000]}, "max_value_size",
              parameters={"big": "x" * 900})

    @given(text)
    def test_no_params_is_identity(self, template):
        assert evaluate({"str_replace": {"template": template, "params": {}}}) == template

    @given(st.lists(st.sampled_from(["<a>", "<b>", "-"]), max_size=10))
    def test_inserted_text_is_not_replaced_again(self, tokens):
        template = "".join(tokens)
        result = evaluate({"str_replace": {"template": template, "params": {"<a>": "<b>", "<b>": "<a>"}}})
        swapped = "".join({"<a>": "<b>", "<b>": "<a>"}.get(t, t) for t in tokens)
        assert result == swapped


# -- str_split -----------------------------------------------------------------------------
class TestStrSplit:
    def test_negative_and_numeric_indexes(self):
        assert evaluate({"str_split": [",", "a,b,c", -1]}) == "c"
        assert evaluate({"str_split": [",", "a,b,c", 1.0]}) == "b"

    def test_null_delimiter_splits_on_whitespace(self):
        assert evaluate({"str_split": [None, " a  b "]}) == ["a", "b"]

    def test_bad_values(self):
        fails({"str_split": ["", "a"]}, "must not be empty")
        fails({"str_split": [",", 5]}, "must be a string")
        fails({"str_split": [",", "a", None]}, "Incorrect index")
        fails({"str_split": [",", "a,b", -3]}, "between 0 and 1")

    def test_arguments_may_come_from_a_function(self):
        assert evaluate({"str_split": {"get_param": "p"}}, parameters={"p": ["-", "x-y", 0]}) == "x"
        fails({"str_split": {"get_param": "p"}}, "Incorrect arguments", parameters={"p": "x"})

    def test_extra_arguments_are_ignored_with_a_warning(self):
        parser, parsed = parse({"str_split": [",", "a,b", 0, "extra"]})
        assert [w.code for w in parser.problems.warnings] == ["ignored-argument"]
        assert resolve(parsed) == "a"

    @given(st.lists(st.text(alphabet="ab", max_size=4), min_size=1, max_size=6), st.data())
    def test_index_picks_the_item(self, items, data):
        index = data.draw(st.integers(min_value=0, max_value=len(items) - 1))
        assert evaluate({"str_split": ["|", "|".join(items), index]}) == items[index]


# -- digest --------------------------------------------------------------------------------
class TestDigest:
    def test_sha256_of_latin1_text(self):
        expected = hashlib.sha256("caf\xe9".encode("latin-1")).hexdigest()
        assert evaluate({"digest": ["SHA256", "caf\xe9"]}) == expected

    def test_text_beyond_latin1_is_an_error(self):
        fails({"digest": ["md5", "\u20ac"]}, "Latin-1")

    def test_variable_length_algorithms_are_refused(self):
        fails({"digest": ["shake_128", "x"]}, "needs a digest length")

    def test_value_from_a_function(self):
        assert evaluate({"digest": ["md5", {"get_param": "p"}]}, parameters={"p": "foobar"}) == \
            "3858f62230ac3c915f300c664312c63f"
        fails({"digest": ["md5", {"get_param": "p"}]}, "list of strings", parameters={"p": 5})


# -- make_url ------------------------------------------------------------------------------
class TestMakeURL:
    def test_every_part(self):
        snippet = {"make_url": {
            "scheme": "https", "username": "u s", "password": "p@ss", "host": "example.com",
            "port": 8443, "path": "/a b", "query": {"q": "1 2"}, "fragment": "f g",
        }}
        assert evaluate(snippet) == "https://u%20s:p%40ss@example.com:8443/a%20b?q=1+2#f%20g"

    def test_password_only(self):
        assert evaluate({"make_url": {"scheme": "http", "password": "pw", "host": "h"}}) == "http://:pw@h"

    def test_bad_arguments(self):
        fails({"make_url": {"scheme": "http", "hots": "x"}}, 'Invalid arguments to "make_url": hots')
        fails({"make_url": {"scheme": "http:"}}, 'must not contain ":"')
        fails({"make_url": {"query": "a=b"}}, '"query" argument to "make_url" must be a map')
        fails({"make_url": {"host": 5}}, '"host" argument to "make_url" must be a string')
        fails({"make_url": {"port": True}}, "Invalid URL port")
        fails({"make_url": ["http"]}, "must be a map")

    def test_parts_from_functions_are_checked_when_resolved(self):
        snippet = {"make_url": {"scheme": "http", "host": "h", "port": {"get_param": "port"}}}
        assert evaluate(snippet, parameters={"port": "8080"}) == "http://h:8080"
        fails(snippet, "must be in range 1-65535", parameters={"port": 70000})


def test_functions_inside_map_items_and_params_are_resolved_before_json():
    params = {"p": "v"}
    assert evaluate({"list_join": [",", [{"k": {"get_param": "p"}}]]}, parameters=params) == '{"k": "v"}'
    snippet = {"str_replace": {"template": "X", "params": {"X": [{"get_param": "p"}]}}}
    assert evaluate(snippet, parameters=params) == '["v"]'
