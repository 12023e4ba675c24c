"""Versions: ``stoker template version list``, ``function list``, and every behaviour that
differs between ``heat_template_version``s, each checked on both sides of the change."""

from __future__ import annotations

import hashlib

import pytest

VERSIONS = ["2013-05-23", "2014-10-16", "2015-04-30", "2015-10-15", "2016-04-08", "2016-10-14",
            "2017-02-24", "2017-09-01", "2018-03-02", "2018-08-31", "2021-04-16"]
ALIASES = {"2016-10-14": "newton", "2017-02-24": "ocata", "2017-09-01": "pike",
           "2018-03-02": "queens", "2018-08-31": "rocky", "2021-04-16": "wallaby"}

# Heat's own tables (heat/engine/hot/template.py), without the Removed entries
_CFN = ["Fn::Base64", "Fn::GetAZs", "Fn::Join", "Fn::MemberListToMap", "Fn::Replace",
        "Fn::ResourceFacade", "Fn::Select", "Fn::Split", "Ref"]
_2014 = ["Fn::Select", "get_attr", "get_file", "get_param", "get_resource", "list_join",
         "resource_facade", "str_replace"]
_2015_04 = sorted(_2014 + ["digest", "repeat"], key=str)
_2015_10 = sorted([f for f in _2015_04 if f != "Fn::Select"] + ["str_split"])
_2016_04 = sorted(_2015_10 + ["map_merge"])
_2016_10 = sorted(_2016_04 + ["if", "map_replace", "yaql"])
_2017_02 = sorted(_2016_10 + ["filter", "str_replace_strict"])
_2017_09 = sorted(_2017_02 + ["contains", "list_concat", "list_concat_unique", "make_url",
                              "str_replace_vstrict"])
FUNCTIONS = {
    "2013-05-23": sorted(_CFN + [f for f in _2014 if f != "Fn::Select"]),
    "2014-10-16": _2014,
    "2015-04-30": _2015_04,
    "2015-10-15": _2015_10,
    "2016-04-08": _2016_04,
    "2016-10-14": _2016_10,
    "2017-02-24": _2017_02,
    "2017-09-01": _2017_09,
    "2018-03-02": _2017_09,
    "2018-08-31": _2017_09,
    "2021-04-16": _2017_09,
}
CONDITION_FUNCTIONS = {v: [] for v in VERSIONS[:5]}
CONDITION_FUNCTIONS.update({v: ["and", "equals", "get_param", "not", "or"]
                            for v in ("2016-10-14", "2017-02-24")})
CONDITION_FUNCTIONS.update({v: ["and", "contains", "equals", "get_param", "not", "or", "yaql"]
                            for v in VERSIONS[7:]})


# -- version list ------------------------------------------------------------------------------

def test_version_list(stoker):
    rows = stoker("template", "version", "list", "-f", "json").expect(0).json
    assert rows == [
        {"Version": "AWSTemplateFormatVersion.2010-09-09", "Type": "cfn", "Aliases": ""},
        {"Version": "HeatTemplateFormatVersion.2012-12-12", "Type": "cfn", "Aliases": ""},
    ] + [
        {"Version": f"heat_template_version.{v}", "Type": "hot",
         "Aliases": f"heat_template_version.{ALIASES[v]}" if v in ALIASES else ""}
        for v in VERSIONS
    ]


def test_version_list_as_a_table_and_values(stoker):
    table = stoker("template", "version", "list").expect(0).stdout
    for version in VERSIONS:
        assert f"heat_template_version.{version}" in table
    values = stoker("template", "version", "list", "-f", "value").expect(0).stdout.splitlines()
    assert values[0] == "AWSTemplateFormatVersion.2010-09-09 cfn "
    assert values[2] == "heat_template_version.2013-05-23 hot "
    assert values[-1] == "heat_template_version.2021-04-16 hot heat_template_version.wallaby"


# -- function list ------------------------------------------------------------------------------

@pytest.mark.parametrize("version", VERSIONS)
def test_function_list(stoker, version):
    rows = stoker("template", "function", "list", version, "-f", "json").expect(0).json
    assert [row["functions"] for row in rows] == FUNCTIONS[version]
    assert all(set(row) == {"functions", "description"} for row in rows)
    assert all(row["description"] for row in rows)


@pytest.mark.parametrize("version", VERSIONS)
def test_function_list_with_conditions(stoker, version):
    rows = stoker("template", "function", "list", version, "--with-conditions",
                  "-f", "json").expect(0).json
    names = [row["functions"] for row in rows]
    assert set(names) == set(FUNCTIONS[version]) | set(CONDITION_FUNCTIONS[version])


def test_function_list_with_conditions_names_each_function_once_with_a_description(stoker):
    rows = stoker("template", "function", "list", "2016-10-14", "--with-conditions",
                  "-f", "json").expect(0).json
    names = [row["functions"] for row in rows]
    assert len(names) == len(set(names))
    assert all(row["description"] for row in rows)


@pytest.mark.parametrize("name, version", [
    ("newton", "2016-10-14"), ("pike", "2017-09-01"), ("wallaby", "2021-04-16"),
    ("heat_template_version.2015-10-15", "2015-10-15"),
])
def test_function_list_takes_release_names_and_the_full_name(stoker, name, version):
    rows = stoker("template", "function", "list", name, "-f", "json").expect(0).json
    assert [row["functions"] for row in rows] == FUNCTIONS[version]


def test_function_list_of_an_unknown_version(stoker):
    run = stoker("template", "function", "list", "2019-01-01")
    assert run.exit_code == 2
    assert 'Invalid value for VERSION: "2019-01-01" is not a known template version' in run.stderr


@pytest.mark.parametrize("version, function, description", [
    ("2015-04-30", "list_join", "A function for joining strings."),
    ("2015-10-15", "list_join", "A function for joining one or more lists of strings."),
    ("2016-04-08", "repeat", "A function for iterating over a list of items."),
    ("2016-10-14", "repeat", "A function for iterating over a list of items or a dict of keys."),
    ("2017-09-01", "make_url", "A function for performing substitutions on maps."),  # Heat's words
    ("AWSTemplateFormatVersion.2010-09-09", "Ref", "A function for resolving parameters or resource references."),
    ("AWSTemplateFormatVersion.2010-09-09", "Fn::Base64", "A placeholder function for converting to base64."),
])
def test_function_list_describes_each_function_as_heats_api_does(stoker, version, function, description):
    rows = stoker("template", "function", "list", version, "-f", "json").expect(0).json
    assert {row["functions"]: row["description"] for row in rows}[function] == description


def test_function_list_with_conditions_describes_a_shared_name_by_its_condition_function(stoker):
    """Heat merges the condition table over the other: CFN's condition ``Ref`` reads parameters only."""
    rows = stoker("template", "function", "list", "AWSTemplateFormatVersion.2010-09-09", "--with-conditions",
                  "-f", "json").expect(0).json
    described = {row["functions"]: row["description"] for row in rows}
    assert described["Ref"] == "A function for resolving parameter references."
    assert described["Fn::Equals"] == "A function for comparing whether two values are equal."


def test_function_list_table_shows_heats_description(stoker_process):
    run = stoker_process("template", "function", "list", "2013-05-23").expect(0)
    assert "A function for including a file inline." in run.stdout


def test_function_list_in_a_subprocess(stoker_process):
    run = stoker_process("template", "function", "list", "2016-04-08", "-f", "value").expect(0)
    assert [line.split(" ", 1)[0] for line in run.stdout.splitlines()] == FUNCTIONS["2016-04-08"]


# -- the same template under two versions -------------------------------------------------------

def _outputs(stoker, template):
    return stoker.resolved(template)["outputs"]


def test_list_join_several_lists_and_json_items_from_2015_10_15(stoker):
    errors = stoker.resolve_errors("versions/list_join_2015-04-30.yaml")
    stoker.assert_errors(errors, [
        ("outputs.several_lists.value.list_join", "invalid-function-arguments", 5, 27,
         'Incorrect arguments to "list_join" should be: "list_join" : [ " ", [ "str1", "str2"]]'),
        ("outputs.map_item.value.list_join", "invalid-function-arguments", 6, 22,
         'Items to join must be strings not {"k": "v"} (in "list_join")'),
        ("outputs.list_item.value.list_join", "invalid-function-arguments", 7, 23,
         'Items to join must be strings not [1, 2] (in "list_join")'),
    ], file="versions/list_join_2015-04-30.yaml")
    assert _outputs(stoker, "versions/list_join_2015-10-15.yaml") == {
        "several_lists": "a,b,c",
        "map_item": 'x {"k": "v"}',
        "list_item": "x [1, 2]",
        "one_list": "a-b-c",
    }


def test_str_replace_json_values_from_2015_10_15(stoker):
    errors = stoker.resolve_errors("versions/str_replace_2015-04-30.yaml")
    stoker.assert_errors(errors, [
        ("outputs.map.value.str_replace", "invalid-function-arguments", 7, 17,
         '"str_replace" params must be strings or numbers, param C is not valid'),
        ("outputs.list.value.str_replace", "invalid-function-arguments", 8, 18,
         '"str_replace" params must be strings or numbers, param I is not valid'),
    ], file="versions/str_replace_2015-04-30.yaml")
    assert _outputs(stoker, "versions/str_replace_2015-10-15.yaml") == {
        "number": "port 8080",
        "float": "ratio 0.5",
        "map": 'config {"a": 1, "b": 2}',
        "list": 'items [1, "two"]',
    }


def test_get_attr_without_attribute_from_2015_10_15(stoker):
    errors = stoker.validate_errors("versions/get_attr_2015-04-30.yaml")
    stoker.assert_errors(errors, [
        ("outputs.all_attributes.value.get_attr", "invalid-function-arguments", 10, 28,
         'Arguments to "get_attr" must be of the form [resource_name, attribute, (path), ...]'),
    ], file="versions/get_attr_2015-04-30.yaml")
    assert stoker.resolved("versions/get_attr_2015-10-15.yaml")["pending"] == [
        "one_attribute", "with_path", "all_attributes"]


def test_repeat_over_a_map_from_2016_10_14(stoker):
    errors = stoker.resolve_errors("versions/repeat_map_2016-04-08.yaml")
    stoker.assert_errors(errors, [
        ("outputs.over_a_map.value.repeat", "invalid-function-arguments", 5, 24,
         'The values of the "for_each" argument to "repeat" must be lists, not a map (for %k%)'),
    ], file="versions/repeat_map_2016-04-08.yaml")
    assert _outputs(stoker, "versions/repeat_map_2016-10-14.yaml") == {
        "over_a_map": ["key-alpha", "key-beta"],
        "over_a_list": ["item-one", "item-two"],
    }


def test_repeat_permutations_false_from_2017_09_01(stoker):
    run = stoker.resolve("versions/repeat_permutations_2016-10-14.yaml").expect(0)
    assert run.json["outputs"] == {
        "side_by_side": ["a:1", "a:2", "b:1", "b:2"],  # the key is ignored: every combination
        "all_combinations": ["a:1", "a:2", "b:1", "b:2"],
    }
    assert run.warnings == [
        "WARNING: versions/repeat_permutations_2016-10-14.yaml:10:9: "
        'outputs.side_by_side.value.repeat.permutations: "repeat" ignores the key "permutations" '
        "(it needs heat_template_version 2017-09-01 or later) [ignored-argument]",
    ]
    run = stoker.resolve("versions/repeat_permutations_2017-09-01.yaml").expect(0)
    assert run.json["outputs"] == {
        "side_by_side": ["a:1", "b:2"],
        "all_combinations": ["a:1", "a:2", "b:1", "b:2"],
    }
    assert run.warnings == []


def test_repeat_permutations_false_errors(stoker):
    run = stoker.resolve("versions/repeat_permutations_errors_2017-09-01.yaml").expect(1)
    errors = run.json["errors"]
    # as in Heat, unequal lengths are the output's error, not the template's: a warning here
    assert any("outputs.unequal_lengths.value.repeat: For repeat, the length of for_each values should be "
               "equal if no nested loop." in line and "[unequal-lengths]" in line for line in run.warnings)
    stoker.assert_errors(errors, [
        ("outputs.over_a_map.value.repeat", "invalid-function-arguments", 8, 13,
         'The values of the "for_each" argument to "repeat" must be lists, not a map (for %a%)'),
        ("outputs.not_a_boolean.value.repeat", "invalid-function-arguments", 10, 13,
         '"permutations" should be boolean type for repeat function.'),
    ], file="versions/repeat_permutations_errors_2017-09-01.yaml")


def test_if_with_one_value_from_2021_04_16(stoker):
    usage = 'Arguments to "if" must be of the form: [condition_name, value_if_true, value_if_false]'
    errors = stoker.resolve_errors("versions/if_2018-08-31.yaml")
    stoker.assert_errors(errors, [
        ("outputs.single_value_true.value.if", "invalid-function-arguments", 9, 31, usage),
        ("outputs.single_value_false.value.if", "invalid-function-arguments", 10, 32, usage),
        ("outputs.in_a_list.value.1.if", "invalid-function-arguments", 11, 31, usage),
        ("outputs.in_a_map.value.dropped.if", "invalid-function-arguments", 12, 41, usage),
    ], file="versions/if_2018-08-31.yaml")
    assert _outputs(stoker, "versions/if_2021-04-16.yaml") == {
        "single_value_true": "here",
        "single_value_false": None,
        "in_a_list": ["first", "third"],  # the item disappears
        "in_a_map": {"kept": 1},  # the key disappears
        "two_values": "no_value",
    }


@pytest.mark.parametrize("version", ["2013-05-23", "2015-04-30"])
def test_fn_select_until_2015_04_30(stoker, version):
    assert _outputs(stoker, f"versions/fn_select_{version}.yaml") == {
        "from_list": "b", "from_map": "value"}


def test_fn_select_removed_in_2015_10_15_is_an_error_naming_the_version(stoker):
    message = ('The function "Fn::Select" is not supported in heat_template_version 2015-10-15; '
               "it was removed in this version")
    errors = stoker.validate_errors("versions/fn_select_2015-10-15.yaml")
    stoker.assert_errors(errors, [
        ("outputs.from_list.value.Fn::Select", "removed-function", 5, 23, message),
        ("outputs.from_map.value.Fn::Select", "removed-function", 6, 22, message),
    ], file="versions/fn_select_2015-10-15.yaml")


def test_cloudformation_functions_in_2013_05_23(stoker):
    document = stoker.resolved("versions/cfn_2013-05-23.yaml")
    assert document["outputs"] == {
        "join": "a-b",
        "split": ["a", "b"],
        "replace": "hello world",
        "base64": "plain text",
        "ref_parameter": "web",
        "zones": ["nova"],
        "member_list": {"k": "v"},
    }
    assert document["pending"] == ["ref_resource"]


def test_cloudformation_functions_removed_in_2014_10_16(stoker):
    errors = stoker.validate_errors("versions/cfn_2014-10-16.yaml")
    expected = [("join", "Fn::Join", 11, 18), ("split", "Fn::Split", 12, 19),
                ("replace", "Fn::Replace", 13, 21), ("base64", "Fn::Base64", 14, 20),
                ("ref_parameter", "Ref", 15, 27), ("ref_resource", "Ref", 16, 26),
                ("zones", "Fn::GetAZs", 17, 19), ("member_list", "Fn::MemberListToMap", 18, 25)]
    stoker.assert_errors(errors, [
        (f"outputs.{output}.value.{fn}", "removed-function", line, column,
         f'The function "{fn}" is not supported in heat_template_version 2014-10-16; '
         "it was removed in this version")
        for output, fn, line, column in expected
    ], file="versions/cfn_2014-10-16.yaml")


def test_map_merge_before_2016_04_08_is_data_and_a_warning(stoker):
    run = stoker.resolve("versions/map_merge_2015-10-15.yaml").expect(0)
    assert run.json["outputs"] == {"merged": {"map_merge": [{"a": 1}, {"b": 2}]}}
    assert run.warnings == [
        "WARNING: versions/map_merge_2015-10-15.yaml:5:20: outputs.merged.value.map_merge: "
        '"map_merge" is not a function in heat_template_version 2015-10-15, so it is kept as plain '
        "data; it needs heat_template_version 2016-04-08 or later [function-look-alike]",
    ]
    validate = stoker.validate("versions/map_merge_2015-10-15.yaml").expect(0)
    assert validate.warnings == run.warnings
    assert _outputs(stoker, "versions/map_merge_2016-04-08.yaml") == {"merged": {"a": 1, "b": 2}}


NEW_FUNCTIONS = {
    "2015-04-30": ("2014-10-16", {
        "digest": hashlib.md5(b"heat").hexdigest(),
        "repeat": ["n-1", "n-2"],
    }, {
        "digest": {"digest": ["md5", "heat"]},
        "repeat": {"repeat": {"template": "n-%i%", "for_each": {"%i%": ["1", "2"]}}},
    }),
    "2015-10-15": ("2015-04-30", {
        "str_split": ["a", "b"],
    }, {
        "str_split": {"str_split": [",", "a,b"]},
    }),
    "2016-10-14": ("2016-04-08", {
        "yaql": 6,
        "map_replace": {"b": 1},
    }, {
        "yaql": {"yaql": {"expression": "$.data.sum()", "data": [1, 2, 3]}},
        "map_replace": {"map_replace": [{"a": 1}, {"keys": {"a": "b"}}]},
    }),
    "2017-02-24": ("2016-10-14", {
        "filter": [1, 3],
        "str_replace_strict": "a-b",
    }, {
        "filter": {"filter": [[2], [1, 2, 3]]},
        "str_replace_strict": {"str_replace_strict": {"template": "a-X", "params": {"X": "b"}}},
    }),
    "2017-09-01": ("2017-02-24", {
        "make_url": "https://example.com/x",
        "list_concat": [1, 2],
        "list_concat_unique": [1, 2],
        "contains": True,
        "str_replace_vstrict": "a-b",
    }, {
        "make_url": {"make_url": {"scheme": "https", "host": "example.com", "path": "/x"}},
        "list_concat": {"list_concat": [[1], [2]]},
        "list_concat_unique": {"list_concat_unique": [[1], [1, 2]]},
        "contains": {"contains": [1, [1, 2]]},
        "str_replace_vstrict": {"str_replace_vstrict": {"template": "a-X", "params": {"X": "b"}}},
    }),
}


@pytest.mark.parametrize("version", sorted(NEW_FUNCTIONS))
def test_functions_a_version_adds(stoker, version):
    previous, results, as_data = NEW_FUNCTIONS[version]
    run = stoker.resolve(f"versions/new_in_{version}.yaml").expect(0)
    assert run.json["outputs"] == results
    assert run.warnings == []

    template = f"versions/new_in_{version}_as_{previous}.yaml"
    run = stoker.resolve(template).expect(0)
    assert run.json["outputs"] == as_data
    assert [w.split(": ", 3)[2] for w in run.warnings] == [
        f"outputs.{name}.value.{name}" for name in as_data]
    for warning in run.warnings:
        assert (f"is not a function in heat_template_version {previous}, so it is kept as plain "
                f"data; it needs heat_template_version {version} or later") in warning


def test_yaql_and_contains_are_condition_functions_from_2017_09_01(stoker):
    errors = stoker.validate_errors("versions/condition_functions_2016-10-14.yaml")
    stoker.assert_errors(errors, [
        ("conditions.has_az1", "invalid-condition", 8, 3,
         'The definition of condition "has_az1" is invalid'),
        ("conditions.two_zones.yaql", "function-not-allowed-here", 9, 15,
         'The function "yaql" is not allowed in conditions'),
    ])
    assert stoker.resolved("versions/condition_functions_2017-09-01.yaml")["conditions"] == {
        "has_az1": True, "two_zones": True}


def test_lowercase_deletion_policies_from_2016_10_14(stoker):
    errors = stoker.validate_errors("versions/deletion_policy_2016-04-08.yaml")
    stoker.assert_errors(errors, [
        ("resources.kept.deletion_policy", "invalid-deletion-policy", 5, 32,
         'Invalid deletion policy "retain" (allowed in 2016-04-08: Delete, Retain, Snapshot)'),
        ("resources.snap.deletion_policy", "invalid-deletion-policy", 6, 32,
         'Invalid deletion policy "snapshot" (allowed in 2016-04-08: Delete, Retain, Snapshot)'),
    ], file="versions/deletion_policy_2016-04-08.yaml")
    # lowercase is known from 2016-10-14; as in Heat, a type that cannot snapshot refuses it
    errors = stoker.validate_errors("versions/deletion_policy_2016-10-14.yaml")
    stoker.assert_errors(errors, [
        ("resources.snap.deletion_policy", "invalid-deletion-policy", 6, 32,
         '"Snapshot" deletion policy not supported'),
    ], file="versions/deletion_policy_2016-10-14.yaml")


def test_modulo_constraint_from_2017_02_24(stoker):
    errors = stoker.validate_errors("versions/modulo_2016-10-14.yaml")
    stoker.assert_errors(errors, [
        ("parameters.odd.constraints.0.modulo", "invalid-constraint", 9, 9,
         "modulo constraints need heat_template_version 2017-02-24 or later"),
    ], file="versions/modulo_2016-10-14.yaml")
    assert stoker.valid("versions/modulo_2017-02-24.yaml")["Parameters"]["odd"] == {
        "Type": "Number", "Description": "", "NoEcho": "false", "Label": "odd", "Default": 3,
        "Step": 2, "Offset": 1}


# -- keys each version allows --------------------------------------------------------------------

TAGS = ("parameters.tagged.tags", "unknown-key", 7, 38,
        '"tags" is not a valid parameter key; it needs heat_template_version 2018-03-02 or later')
KEYS_2016_04_08 = [
    ("conditions", "unknown-section", 9, 1,
     '"conditions" is not a valid template section; it needs heat_template_version 2016-10-14 '
     "or later"),
    TAGS,
    ("resources.imported.external_id", "unknown-key", 15, 5,
     '"external_id" is not a valid keyword inside a resource definition (heat_template_version '
     "2016-04-08 allows: type, properties, metadata, depends_on, deletion_policy, update_policy, "
     "description)"),
    ("resources.conditional.condition", "unknown-key", 18, 5,
     '"condition" is not a valid keyword inside a resource definition'),
]  # outputs.conditional's "condition" is only a warning there: Heat ignores other output keys


@pytest.mark.parametrize("version, expected", [
    ("2016-10-14", [TAGS]),  # conditions, condition and external_id are fine; immutable in every version
    ("2017-02-24", [TAGS]),
])
def test_keys_later_versions_add(stoker, version, expected):
    errors = stoker.validate_errors(f"versions/keys_{version}.yaml")
    stoker.assert_errors(errors, expected, file=f"versions/keys_{version}.yaml")


def test_every_key_is_fine_in_2018_03_02(stoker):
    document = stoker.resolved("versions/keys_2018-03-02.yaml")
    assert document == {
        "parameters": {"plain": "x", "frozen": "x", "tagged": "x"},
        "conditions": {"always": True},
        "outputs": {"conditional": 1},
        "pending": [],
    }
    params = stoker.valid("versions/keys_2018-03-02.yaml")["Parameters"]
    assert params["tagged"]["Tags"] == ["one"]


def test_keys_before_2016_10_14_are_unknown(stoker):
    errors = stoker.validate_errors("versions/keys_2016-04-08.yaml")
    found = stoker.places(errors)
    for expected in KEYS_2016_04_08:
        assert tuple(expected[:4]) in found


def test_keys_before_2016_10_14_are_each_reported_once(stoker):
    run = stoker.validate("versions/keys_2016-04-08.yaml").expect(1)
    stoker.assert_errors(run.json, KEYS_2016_04_08, file="versions/keys_2016-04-08.yaml")
    assert [w for w in run.warnings if "outputs.conditional.condition" in w] == [
        "WARNING: versions/keys_2016-04-08.yaml:23:5: outputs.conditional.condition: \"condition\" is not a "
        "valid keyword inside a output definition (heat_template_version 2016-04-08 allows: description, "
        "value) [unknown-key]"]


def test_release_name_as_the_version(stoker):
    assert stoker.resolved("versions/release_names.yaml")["outputs"] == {"contains": True}
