"""Authors' regular expressions over ``stoker api``: a match that would make ``re`` backtrack for hours, holding
the GIL (the whole server), ends within ``max_pattern_seconds`` as a 400 naming the place and
the limit, and other requests are answered meanwhile.  Every request has a 30 s time-out: a hang is a failure."""

from __future__ import annotations

import threading

import httpx
import pytest

from .helpers import heat_error, sqlite_server

pytestmark = pytest.mark.slow  # a server of its own, and matches that run for a second
OUT_OF_TIME = 'the regular expression "(a|aa)+$" took longer than 1 s to match (max_pattern_seconds)'
HOSTILE = "a" * 60 + "!"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A server of this module's own: on a Stoker without the bound, a hostile match would hang it for good."""
    yield from sqlite_server(tmp_path_factory, "patterns")


def _template(pattern: str) -> dict:
    return {"heat_template_version": "2018-08-31", "parameters": {"p": {
        "type": "string", "constraints": [{"allowed_pattern": pattern}]}}, "resources": {}}


def test_a_backtracking_allowed_pattern_is_a_400_while_other_requests_are_answered(server):
    base = server.endpoint("patterns")
    answers = []
    hostile = threading.Thread(target=lambda: answers.append(httpx.post(
        base + "/stacks", json={"stack_name": "p", "template": _template("(a|aa)+$"), "parameters": {"p": HOSTILE}},
        timeout=30)))
    hostile.start()
    others = []
    while hostile.is_alive() or not others:
        others.append(httpx.get(server.endpoint("calm") + "/stacks", timeout=30).status_code)
    hostile.join()
    assert set(others) == {200}
    assert f"p: allowed_pattern: {OUT_OF_TIME}" in heat_error(answers[0], 400)["message"]
    nested = httpx.post(base + "/stacks", json={"stack_name": "p", "template": _template("(a+)+$"),
                                                "parameters": {"p": "a" * 40 + "!"}}, timeout=30)
    assert '"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!" does not match pattern "(a+)+$"' \
        in heat_error(nested, 400)["message"]
    plain = httpx.post(base + "/stacks", json={"stack_name": "p", "template": _template("(a|aa)+$"),
                                               "parameters": {"p": "aaa"}}, timeout=30)
    assert plain.status_code == 201, plain.text


def test_a_backtracking_type_name_filter_lists_no_type(server):
    """``(.|.|.)*X`` searched in "OS::Heat::ResourceGroup" is hours of re's backtracking; regex sees no X."""
    listed = httpx.get(server.endpoint("patterns") + "/resource_types", params={"name": "(.|.|.)*X"}, timeout=30)
    assert listed.status_code == 200 and listed.json() == {"resource_types": []}
    plain = httpx.get(server.endpoint("patterns") + "/resource_types", params={"name": "Heat::None$"}, timeout=30)
    assert plain.json() == {"resource_types": ["OS::Heat::None"]}


def test_a_backtracking_yaql_regex_is_a_400_and_the_regex_functions_answer_as_before(server):
    """In a request thread the yaql trace hook cannot stop a match running in C: the bound does."""
    template = {"heat_template_version": "2018-08-31", "resources": {"v": {"type": "OS::Heat::Value", "properties": {
        "value": {"yaql": {"expression": '$.data =~ "(a|aa)+$"', "data": HOSTILE}}}}}}
    base = server.endpoint("patterns")
    created = httpx.post(base + "/stacks", json={"stack_name": "y", "template": template}, timeout=30)
    problem, = heat_error(created, 400)["problems"]
    assert problem["path"] == "resources.v.properties.value.yaql" and problem["code"] == "yaql-limit"
    # the pattern's bound is CPU time, the expression's budget wall time: on a machine loaded enough that a CPU
    # second of matching spans the 5 s budget, the budget is reached first (and the refusal says so)
    assert problem["message"] in (f'The "yaql" expression went over its limits: a regex function: {OUT_OF_TIME}',
                                  'The "yaql" expression took longer than 5 seconds')
    # otherwise each of the library's regex functions gives what the library's own give on the same data
    expression = ('[regex("a(.)").search($.data, $2.value), regex("a.").searchAll($.data, $1.value), '
                  '$.data.split(regex("c")), $.data.replace(regex("a."), "x"), '
                  'regex("a.c").replaceBy($.data, $.value.toUpper()), $.data =~ "^ab", $.data !~ "^ab", '
                  '$.data.matches("d"), isRegex(regex("A", ignoreCase => true)), escapeRegex("a.b"), '
                  '$.data =~ "(a|aa)+$"]')
    template = {"heat_template_version": "2018-08-31", "outputs": {"o": {"value": {
        "yaql": {"expression": expression, "data": "abcadc"}}}}}
    created = httpx.post(base + "/stacks", json={"stack_name": "r", "template": template}, timeout=30)
    shown = httpx.get(f"{base}/stacks/r/{created.json()['stack']['id']}/outputs/o", timeout=30)
    assert shown.json()["output"]["output_value"] == [
        "b", ["ab", "ad"], ["ab", "ad", ""], "xcxc", "ABCADC", True, False, True, True, "a\\.b", False]
