"""OS::Heat::RandomString: random strings that respect their minimums."""

from __future__ import annotations

import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stoker.errors import ValidationFailed
from stoker.resources.builtin.random_string import CLASS_MEMBERS, RandomString, generate

from .fakes import create, make, run, update


def created(props=None):
    res = make(RandomString, props or {})
    run(create(res))
    assert res.state == ("CREATE", "COMPLETE")
    return res


def test_default_is_32_letters_and_digits():
    value = created().FnGetAtt("value")
    assert len(value) == 32
    assert set(value) <= set(string.ascii_letters + string.digits)


def test_reference_is_the_value_once_created():
    res = make(RandomString, {})
    assert res.FnGetRefId() == "res"
    run(create(res))
    assert res.FnGetRefId() == res.FnGetAtt("value")


def test_value_is_kept_in_resource_data():
    """Data is persisted with the resource: a reloaded resource has the same value."""
    res = created({"length": 10})
    reloaded = make(RandomString, {"length": 10})
    reloaded.action, reloaded.status = res.action, res.status
    reloaded.resource_id, reloaded._data = res.resource_id, res.data()
    assert reloaded.FnGetAtt("value") == res.FnGetAtt("value")
    assert reloaded.FnGetRefId() == res.FnGetRefId()


def test_two_strings_differ():
    assert created().FnGetAtt("value") != created().FnGetAtt("value")


def test_sequences_and_classes_together():
    value = created({
        "length": 12,
        "character_classes": [{"class": "digits", "min": 4}],
        "character_sequences": [{"sequence": "!@#", "min": 3}],
    }).FnGetAtt("value")
    assert len(value) == 12
    assert set(value) <= set(string.digits + "!@#")
    assert sum(c.isdigit() for c in value) >= 4
    assert sum(c in "!@#" for c in value) >= 3


def test_sequences_alone_still_include_the_default_class():
    """As in Heat: character_classes keeps its default when only sequences are given."""
    value = created({"length": 64, "character_sequences": [{"sequence": "*", "min": 2}]}
                    ).FnGetAtt("value")
    assert value.count("*") >= 2
    assert set(value) <= set(string.ascii_letters + string.digits + "*")


def test_deprecated_sequence_property_names_the_class():
    value = created({"length": 40, "sequence": "octdigits"}).FnGetAtt("value")
    assert set(value) <= set(string.octdigits)


def test_deprecated_sequence_adds_to_explicit_classes():
    value = created({"length": 40, "sequence": "octdigits",
                     "character_classes": [{"class": "uppercase", "min": 5}]}).FnGetAtt("value")
    assert set(value) <= set(string.octdigits + string.ascii_uppercase)
    assert sum(c.isupper() for c in value) >= 5


def test_minimums_larger_than_length_are_rejected_naming_the_place():
    res = make(RandomString, {"length": 5, "character_classes": [{"class": "digits", "min": 3}],
                              "character_sequences": [{"sequence": "ab", "min": 3}]})
    with pytest.raises(ValidationFailed) as info:
        res.validate_template()
    problem = info.value.problems[0]
    assert problem.path == ("resources", "res", "properties", "length")
    assert "minimums" in problem.message


@pytest.mark.parametrize("props", [
    {"length": 0}, {"length": 513}, {"sequence": "vowels"},
    {"character_classes": [{"class": "emoji"}]},
    {"character_classes": [{"class": "digits", "min": 0}]},
    {"character_sequences": [{"min": 1}]},
])
def test_invalid_properties(props):
    with pytest.raises(ValidationFailed):
        make(RandomString, props).validate_template()


def test_any_change_replaces():
    res = created({"salt": "a"})
    assert run(update(res, {"salt": "b"})) == "replace"
    assert run(update(res, {"salt": "a"})) == "unchanged"


@st.composite
def pools_and_length(draw):
    names = draw(st.lists(st.sampled_from(sorted(CLASS_MEMBERS)), max_size=4))
    sequences = draw(st.lists(st.text(alphabet="!@#$%^&*()-_=+", min_size=1, max_size=5),
                              max_size=3))
    pools = [(CLASS_MEMBERS[n], draw(st.integers(1, 20))) for n in names]
    pools += [(s, draw(st.integers(1, 20))) for s in sequences]
    if not pools:
        pools = [(CLASS_MEMBERS["lettersdigits"], 1)]
    length = draw(st.integers(sum(m for _, m in pools), 200))
    return pools, length


@settings(max_examples=200, deadline=None)
@given(pools_and_length())
def test_generate_respects_every_minimum(case):
    pools, length = case
    value = generate(length, pools)
    assert len(value) == length
    assert set(value) <= {c for chars, _ in pools for c in chars}
    for chars, minimum in pools:
        assert sum(c in chars for c in value) >= minimum


@settings(max_examples=50, deadline=None)
@given(st.integers(1, 512), st.integers(1, 10), st.integers(1, 10))
def test_resource_respects_minimums_for_any_length(length, digits, upper):
    props = {"length": length, "character_classes": [
        {"class": "digits", "min": digits}, {"class": "uppercase", "min": upper}]}
    res = make(RandomString, props)
    if digits + upper > length:
        with pytest.raises(ValidationFailed):
            res.validate_template()
        return
    run(create(res))
    value = res.FnGetAtt("value")
    assert len(value) == length
    assert sum(c.isdigit() for c in value) >= digits
    assert sum(c.isupper() for c in value) >= upper
