"""yaql: evaluation, validation-time parsing, and the limits that fence it in."""

from __future__ import annotations

import threading

import pytest

from stoker.errors import FunctionError, ValidationFailed
from stoker.functions import yaql_function
from stoker.functions.base import resolve
from stoker.template.stack_context import StackContext
from stoker.template.parse import Parser
from stoker.template.versions import get_version


def parse(snippet, version="2017-09-01", condition=False, **context):
    parser = Parser(get_version(version), StackContext(**context))
    return parser, parser.parse(snippet, ("value",), conditions=condition)


def evaluate(snippet, version="2017-09-01", **context):
    parser, parsed = parse(snippet, version, **context)
    if parser.problems.errors:
        raise ValidationFailed(parser.problems.items)
    return resolve(parsed)


def yaql(expression, data=None):
    return {"yaql": {"expression": expression, "data": data if data is not None else {}}}


def failure(snippet, **context) -> FunctionError:
    parser, parsed = parse(snippet, **context)
    assert not parser.problems.errors
    with pytest.raises(FunctionError) as caught:
        resolve(parsed)
    return caught.value


def test_data_defaults_to_an_empty_map():
    assert evaluate({"yaql": {"expression": "$.data"}}) == {}


def test_results_are_plain_data():
    result = evaluate(yaql("$.data.items.select({name => $})", {"items": ["a", "b"]}))
    assert result == [{"name": "a"}, {"name": "b"}]
    assert type(result[0]) is dict


def test_expression_from_a_function_is_parsed_when_resolved():
    snippet = {"yaql": {"expression": {"get_param": "e"}, "data": 2}}
    assert evaluate(snippet, parameters={"e": "$.data * 3"}) == 6
    error = failure(snippet, parameters={"e": "$.data *"})
    assert error.code == "yaql-error"


def test_syntax_errors_are_validation_errors():
    parser, _ = parse(yaql("$.data.where("))
    [problem] = parser.problems.errors
    assert problem.code == "yaql-error" and "Bad expression" in problem.message


def test_expression_must_be_a_string():
    parser, _ = parse({"yaql": {"expression": 5}})
    assert "must contain a string" in parser.problems.errors[0].message


def test_runtime_errors_name_the_function():
    error = failure(yaql("$.data.x.select(1 / $)", {"x": [1, 0]}))
    assert error.code == "yaql-error" and '"yaql" expression failed' in error.message


def test_in_conditions_its_arguments_follow_condition_rules():
    parser, parsed = parse(yaql("$.data.a", {"a": True}), condition=True)
    assert not parser.problems.errors and resolve(parsed) is True


@pytest.mark.parametrize("expression", [
    "range(1000).select($).sum()",          # more items than limitIterators
    "'abcdefghij' * 100000",                # a value bigger than memoryQuota
    "pow(10, 100000000)",                   # refused before it is computed
    "shiftBitsLeft(1, 10000000000)",
])
def test_limits(expression):
    error = failure(yaql(expression))
    assert error.code == "yaql-limit"


def test_small_powers_still_work():
    assert evaluate(yaql("pow(2, 10) + shiftBitsLeft(1, 3) + pow(3, 2, 5)")) == 1024 + 8 + 4


@pytest.fixture
def short_budget(monkeypatch):
    monkeypatch.setattr(yaql_function, "TIME_BUDGET", 0.3)


# a loop in Python over a C iterator: no calls, only lines; far beyond any limit otherwise
RUNAWAY = "range(1000000000000).len()"


def test_time_budget_in_the_main_thread(short_budget):
    error = failure(yaql(RUNAWAY))
    assert error.code == "yaql-limit" and "longer than 0.3 seconds" in error.message


def test_time_budget_in_another_thread(short_budget):
    outcome = []

    def run():
        try:
            evaluate(yaql(RUNAWAY))
        except FunctionError as exc:
            outcome.append(exc.code)

    worker = threading.Thread(target=run)
    worker.start()
    worker.join(timeout=30)
    assert outcome == ["yaql-limit"]


def test_the_budget_leaves_tracing_and_signals_as_they_were(short_budget):
    import signal
    import sys

    tracer, handler = sys.gettrace(), signal.getsignal(signal.SIGALRM)
    failure(yaql(RUNAWAY))
    assert evaluate(yaql("1 + 1")) == 2
    assert sys.gettrace() is tracer
    assert signal.getsignal(signal.SIGALRM) == handler
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_an_existing_tracer_keeps_receiving_events():
    import sys

    events = []

    def tracer(frame, event, arg):
        events.append(event)
        return tracer

    before = sys.gettrace()
    sys.settrace(tracer)
    try:
        assert evaluate(yaql("$.data.sum()", [1, 2])) == 3
        assert sys.gettrace() is tracer
    finally:
        sys.settrace(before)
    assert "call" in events and "line" in events
