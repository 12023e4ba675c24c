"""Errors Heat finds only when it evaluates an output do not refuse the stack: the stack is
created and the output carries the error (``output_error``); validate warns, with the place."""

from __future__ import annotations

TEMPLATE = """\
heat_template_version: 2018-08-31
parameters:
  empty: {type: string, default: ""}
resources:
  thing: {type: OS::Heat::TestResource, properties: {value: made}}
outputs:
  strict:
    value: {str_replace_strict: {template: "hello", params: {missing: x}}}
  vstrict:
    value: {str_replace_vstrict: {template: "hello $x", params: {$x: {get_param: empty}}}}
  unequal:
    value:
      repeat:
        template: {a: <%a%>, b: <%b%>}
        for_each: {<%a%>: [1, 2], <%b%>: [3]}
        permutations: false
  algorithm:
    value: {digest: [nope, hello]}
  fine:
    value: {get_attr: [thing, output]}
"""

ERRORS = {
    "strict": "The following params were not found in the template: missing",
    "vstrict": "str_replace_vstrict has an undefined or empty value for param $x",
    "unequal": "For repeat, the length of for_each values should be equal if no nested loop.",
    "algorithm": 'Algorithm "nope" of "digest" is unknown',
}


def test_outputs_in_error_do_not_refuse_the_stack(cli, tmp_path):
    path = tmp_path / "outputs.yaml"
    path.write_text(TEMPLATE)
    validated = cli("template", "validate", "-t", path, "-f", "json").expect(0)
    warnings = [line for line in validated.stderr.splitlines() if line.startswith("WARNING: ")]
    warned = {line.split(": ")[2].split(".")[1]: line for line in warnings}
    assert set(warned) == set(ERRORS)
    assert "outputs.yaml:8:" in warned["strict"] and "[unused-param]" in warned["strict"]
    assert "outputs.vstrict.value.str_replace_vstrict" in warned["vstrict"]

    created = cli("stack", "create", "out", "-t", path, "--wait", "-f", "json").expect(0).json
    assert created["stack_status"] == "CREATE_COMPLETE"
    shown = {o["output_key"]: o for o in cli("stack", "output", "show", "out", "--all", "-f", "json").expect(0).json}
    assert shown["fine"] == {"output_key": "fine", "description": "No description given", "output_value": "made"}
    for key, error in ERRORS.items():
        assert shown[key]["output_value"] is None
        assert error in shown[key]["output_error"], shown[key]
        one = cli("stack", "output", "show", "out", key, "-f", "json").expect(0).json
        assert one == shown[key]
    stack_outputs = {o["output_key"]: o for o in cli("stack", "show", "out", "-f", "json").expect(0).json["outputs"]}
    assert stack_outputs == shown


def test_the_same_errors_in_a_resource_still_refuse_it(cli, tmp_path):
    path = tmp_path / "resource.yaml"
    path.write_text("heat_template_version: 2018-08-31\nresources:\n  thing:\n    type: OS::Heat::TestResource\n"
                    "    properties: {value: {str_replace_strict: {template: hello, params: {missing: x}}}}\n")
    refused = cli("template", "validate", "-t", path).expect(1)
    assert "resources.thing.properties.value.str_replace_strict" in refused.stderr
    assert "not found in the template: missing" in refused.stderr


NESTED = """\
heat_template_version: 2016-10-14
resources:
  r: {type: OS::Heat::None}
outputs:
  bad: {value: {get_param: undeclared}}
  good: {value: fine}
"""
TOP = """\
heat_template_version: 2016-10-14
resources:
  n: {type: nested.yaml}
outputs:
  inner_good: {value: {get_attr: [n, good]}}
  inner_bad: {value: {get_attr: [n, bad]}}
  own: {value: {get_param: not_here_either}}
"""


def test_an_undeclared_parameter_in_an_output_is_that_outputs_error(cli, tmp_path):
    (tmp_path / "nested.yaml").write_text(NESTED)
    (tmp_path / "top.yaml").write_text(TOP)
    cli("template", "validate", "-t", tmp_path / "top.yaml").expect(0)
    created = cli("stack", "create", "np", "-t", tmp_path / "top.yaml", "--wait", "-f", "json").expect(0).json
    assert created["stack_status"] == "CREATE_COMPLETE", created["stack_status_reason"]
    top = {o["output_key"]: o for o in cli("stack", "output", "show", "np", "--all", "-f", "json").expect(0).json}
    assert top["inner_good"]["output_value"] == "fine"
    assert "The Parameter (not_here_either) was not provided." in top["own"]["output_error"]  # Heat's words
    # as Heat's TemplateOutputError: the nested output's error reaches the output reading it
    assert top["inner_bad"]["output_value"] is None
    assert "Error in n output bad: The Parameter (undeclared) was not provided." in top["inner_bad"]["output_error"]
    nested_id = cli("stack", "resource", "show", "np", "n", "-f", "json").expect(0).json["physical_resource_id"]
    bad = cli("stack", "output", "show", nested_id, "bad", "-f", "json").expect(0).json
    assert bad["output_value"] is None
    assert "The Parameter (undeclared) was not provided." in bad["output_error"]
