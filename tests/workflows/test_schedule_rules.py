"""Cloudify's scheduling rules (``stoker.workflows.schedule_rules``): what a rule allows, and when it runs."""

from __future__ import annotations

import time
from datetime import datetime, timedelta

import pytest
from dateutil import rrule
from hypothesis import given, settings
from hypothesis import strategies as st

from stoker.workflows import schedule_rules as rules
from stoker.workflows.workflow_error import WorkflowError

NOW = datetime(2026, 11, 28, 12, 0, 0)


def _next_after(rule: dict, since: datetime | None, until: datetime | None, now: datetime) -> datetime | None:
    return next(rules.runs_after(rule, since, until, now), None)


@pytest.mark.parametrize("given, message", [
    ({"recurrence": "2 fortnights"}, "`2 fortnights` is not a legal recurrence expression"),
    ({"count": 3}, "recurrence must be specified for execution count larger than 1"),
    ({"rrule": "RRULE:FREQ=DAILY", "count": 2}, "`rrule` cannot be provided together with"),
    ({"rrule": "RRULE:FREQ=SOMETIMES"}, "invalid RRULE string provided"),
    ({"recurrence": "1 day", "weekdays": ["2MO"]}, "complex weekday expression 2MO can only be used with a months"),
    ({"recurrence": "1 day", "weekdays": ["XX"]}, "weekdays list contains an invalid weekday `XX`"),
    ({"recurrence": "1 day", "weekdays": "MO"}, "weekdays: expected a list"),
    ({"recurrence": "1 day", "count": "many"}, "count: expected an integer"),
    ({"recurrence": "1 day", "count": 0}, "count: expected an integer >= 1"),
    ({"recurrence": "1 min" * 500}, "is not a legal recurrence expression"),
])
def test_a_rule_cloudify_refuses_is_refused_with_its_message(given, message):
    with pytest.raises(WorkflowError) as refused:
        rules.rule_of(given)
    assert message in str(refused.value)


def test_an_update_keeps_what_it_does_not_name():
    kept = rules.rule_of({"count": 4}, existing={"recurrence": "2 hours", "count": 9, "weekdays": None})
    assert kept == {"recurrence": "2 hours", "count": 4, "weekdays": None}
    assert rules.rule_of({"weekdays": ["mo"]}, existing=kept)["weekdays"] == ["MO"]


@pytest.mark.parametrize("rule, since, until, expected", [
    ({"count": 1}, datetime(2026, 11, 29), None, [datetime(2026, 11, 29)]),
    ({"recurrence": "2 hours", "count": 4}, datetime(2026, 11, 28, 7), None,
     [datetime(2026, 11, 28, 13)]),  # 7, 9, 11 gone; 13 the fourth and last
    ({"recurrence": "1 month", "weekdays": ["L-FR"]}, datetime(2026, 1, 1), datetime(2027, 3, 1),
     [datetime(2026, 12, 25), datetime(2027, 1, 29), datetime(2027, 2, 26)]),
    ({"recurrence": "1 week", "weekdays": ["SA", "SU"], "count": 5}, datetime(2026, 11, 21), None,
     [datetime(2026, 11, 29), datetime(2026, 12, 5)]),  # Nov 21, 22, 28 before now
    ({"rrule": "RRULE:FREQ=DAILY;INTERVAL=10"}, datetime(2026, 11, 1), datetime(2026, 12, 31),
     [datetime(2026, 12, 1), datetime(2026, 12, 11), datetime(2026, 12, 21), datetime(2026, 12, 31)]),
    ({"recurrence": "1 sec"}, datetime(2020, 1, 1), datetime(2026, 11, 28, 12, 0, 2),
     [datetime(2026, 11, 28, 12, 0, 1), datetime(2026, 11, 28, 12, 0, 2)]),  # computed, not walked
])
def test_the_runs_after_now(rule, since, until, expected):
    assert rules.upcoming(rule, since, until, NOW) == expected
    assert _next_after(rule, since, until, NOW) == expected[0]


def test_a_rule_too_long_to_walk_is_refused_not_walked_for_minutes():
    every_second = {"rrule": "RRULE:FREQ=SECONDLY"}
    with pytest.raises(WorkflowError, match="runs more than 100000 times from since to now"):
        _next_after(every_second, datetime(2020, 1, 1), None, NOW)
    with pytest.raises(WorkflowError, match="runs more than 100000 times from since to now"):
        rules.upcoming(every_second, datetime(2020, 1, 1), None, NOW)


UNITS = ["sec", "min", "hour", "day", "week"]


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 50), st.sampled_from(UNITS), st.integers(0, 2000), st.integers(0, 2000),
       st.one_of(st.none(), st.integers(1, 30)), st.one_of(st.none(), st.integers(1, 3000)))
def test_a_plain_recurrence_computed_is_the_rule_walked(every, unit, since_back, now_ahead, count, until_after):
    """The computed path gives what dateutil's walk gives, for any interval, unit, count and bounds."""
    step = timedelta(seconds=every * rules.SECONDS[rules.FREQUENCIES[unit]])
    since = NOW - since_back * step / 7
    now = since + now_ahead * step / 13
    until = since + until_after * step / 5 if until_after is not None else None
    rule = {"recurrence": f"{every} {unit}s", "count": count, "weekdays": None}
    walked = rrule.rrule(rules.FREQUENCIES[unit], interval=every, dtstart=since, count=count,
                         until=None if count else until)  # dateutil deprecates both at once
    expected = [when for when in walked.xafter(now, count=3) if until is None or when <= until]
    assert rules.upcoming(rule, since, until, now)[:3] == expected


@pytest.mark.parametrize("rrule_text", ["RRULE:FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30",
                                        "RRULE:FREQ=SECONDLY;BYMONTH=2;BYMONTHDAY=30"])
def test_an_rrule_no_date_meets_is_refused_within_its_bound(rrule_text, monkeypatch):
    """dateutil would look for a February 30th until the year 9999 (35 s daily, minutes secondly)."""
    monkeypatch.setattr(rules, "WALK_SECONDS", 1.0)
    started = time.monotonic()
    with pytest.raises(WorkflowError, match="gives no run within 1 s of computing"):
        rules.plan({"rrule": rrule_text}, datetime(2026, 1, 1), None, NOW)
    assert time.monotonic() - started < 4


def test_plan_walks_other_rules_in_a_child_and_computes_plain_ones():
    weekly = {"recurrence": "1 week", "weekdays": ["MO", "FR"], "count": None}
    assert rules.plan(weekly, datetime(2026, 11, 1), None, NOW)[:2] == [datetime(2026, 11, 30), datetime(2026, 12, 4)]
    hourly = {"recurrence": "1 hour", "count": None, "weekdays": None}
    assert len(rules.plan(hourly, datetime(2026, 11, 1), None, NOW)) == rules.SHOWN
