"""When a scheduled workflow runs: Cloudify's scheduling rules, read and checked as its manager reads them.

A rule is one of ``{"rrule": "RRULE:..."}`` (iCalendar, given whole), ``{"recurrence": "2 weeks",
"count": 5, "weekdays": ["MO", "L-FR"]}`` (every 2 weeks, 5 times in all, on Mondays and the last Friday of
a month...), or ``{"count": 1}`` (once, at ``since``).  Times are naive UTC, as Cloudify keeps them.
dateutil's rrule computes the occurrences (Cloudify's manager uses it too).
"""

from __future__ import annotations

import itertools
import json
import re
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from typing import Any, Iterator

from dateutil import parser as time_parser, rrule

from stoker.workflows.workflow_error import WorkflowError

#: ``<number> seconds|minutes|hours|days|weeks|months|years`` and their short forms, as Cloudify reads them
RECURRENCE = re.compile(r"(\d+) ?(sec(?:ond)?|min(?:ute)?|h(?:our)?|d(?:ay)?|w(?:eek)?|mo(?:nth)?|y(?:ear)?)s?$")
FREQUENCIES = {"sec": rrule.SECONDLY, "second": rrule.SECONDLY, "min": rrule.MINUTELY, "minute": rrule.MINUTELY,
               "h": rrule.HOURLY, "hour": rrule.HOURLY, "d": rrule.DAILY, "day": rrule.DAILY,
               "w": rrule.WEEKLY, "week": rrule.WEEKLY, "mo": rrule.MONTHLY, "month": rrule.MONTHLY,
               "y": rrule.YEARLY, "year": rrule.YEARLY}
#: the fixed-length units, in seconds
SECONDS = {rrule.SECONDLY: 1, rrule.MINUTELY: 60, rrule.HOURLY: 3600, rrule.DAILY: 86400, rrule.WEEKLY: 604800}
WEEKDAYS = {str(day): day for day in rrule.weekdays}
#: the time formats a schedule's ``since``/``until`` may be given in
TIME_FORMATS = ("%Y-%m-%d", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M:%S.%f",
                "%Y-%m-%dT%H:%M:%S.%f", "%Y-%m-%dT%H:%M:%S.%fZ")
#: the longest text a rule, a recurrence or a time may be (a schedule is stored, and read back each minute)
LONGEST = 1000
#: how many upcoming runs a schedule shows (none further than ``HORIZON``), and how many runs of a rule
#: may be walked before now
SHOWN, HORIZON, SEARCHED = 1000, timedelta(days=3660), 100_000
#: seconds a walked rule may take to give its next runs
WALK_SECONDS = 3.0


def parse_time(text: Any, name: str) -> datetime:
    """``since``/``until`` as given (one of ``TIME_FORMATS``), as naive UTC."""
    if isinstance(text, str) and len(text) <= LONGEST:
        for form in TIME_FORMATS:
            try:
                return datetime.strptime(text, form)
            except ValueError:
                continue
    raise WorkflowError(f"{name}: {str(text)[:100]} is not a legal time format")


#: what Cloudify's refusal of a scheduled execution's time ends with
EXPECTED_TIME = ("Expected format: YYYYMMDDHHMM+HHMM or YYYYMMDDHHMM-HHMM i.e: 201801012230-0500 "
                 "(Jan-01-18 10:30pm EST)")


def scheduled_time(text: Any, now: datetime) -> datetime:
    """``cfy executions start --schedule``'s time (any form dateutil reads, ``201801182230-0500`` as cfy's help
    shows; without an offset, UTC), as naive UTC; refused, as Cloudify does, when it is not after ``now``."""
    try:
        if not isinstance(text, str) or len(text) > LONGEST:
            raise ValueError(text)
        when = time_parser.parse(text)
    except (ValueError, OverflowError):
        raise WorkflowError(f"Date `{str(text)[:100]}` is not a valid date, please provide valid date. \n"
                            f"{EXPECTED_TIME}") from None
    if when.tzinfo is not None:
        when = when.astimezone(timezone.utc).replace(tzinfo=None)
    if when <= now:
        raise WorkflowError(f"Date `{text}` has already passed, please provide valid date. \n{EXPECTED_TIME}")
    return when


def _recurrence(text: Any) -> tuple[int, str] | None:
    if not text:
        return None
    found = RECURRENCE.match(text) if isinstance(text, str) and len(text) <= LONGEST else None
    if not found:
        raise WorkflowError(f"`{str(text)[:100]}` is not a legal recurrence expression. Supported format is: "
                            "<number> seconds|minutes|hours|days|weeks|months|years")
    return int(found.group(1)), found.group(2)


def _weekdays(given: Any, recurrence: tuple[int, str] | None) -> list[str] | None:
    if not given:
        return None
    if not isinstance(given, list) or len(given) > 100:
        raise WorkflowError(f"weekdays: expected a list, but got: {str(given)[:100]}")
    monthly = recurrence is not None and recurrence[1] in ("mo", "month", "y", "year")
    days = []
    for day in given:
        found = re.fullmatch(r"([1-4]|L-)?(%s)" % "|".join(WEEKDAYS), str(day).upper()[:10])
        if not found:
            raise WorkflowError(f"weekdays list contains an invalid weekday `{str(day)[:10]}`. Valid weekdays are: "
                                f"{'|'.join(WEEKDAYS)} or their lowercase values, optionally prefixed by 1-4 or l-/L-.")
        if found.group(1) and not monthly:
            raise WorkflowError(f"complex weekday expression {found.group(0)} can only be used with a "
                                f"months|years recurrence, but got {recurrence and recurrence[1]}.")
        days.append(found.group(0))
    return days


def whole_number(name: str, value: Any, least: int) -> int:
    """A schedule's count or slip (text as well, as the REST client may send it), at least ``least``."""
    try:
        number = int(value)
    except (TypeError, ValueError, OverflowError):
        raise WorkflowError(f"{name}: expected an integer, but got: {str(value)[:100]}") from None
    if number < least:
        raise WorkflowError(f"{name}: expected an integer >= {least}, but got: {number}")
    return number


def rule_of(given: dict, existing: dict | None = None) -> dict:
    """The rule a schedule's request asks for (an update keeps what it does not name), checked."""
    text = given.get("rrule")
    if text:
        if given.get("recurrence") or given.get("weekdays") or given.get("count"):
            raise WorkflowError("`rrule` cannot be provided together with `recurrence`, `weekdays` or `count`.")
        if not isinstance(text, str) or len(text) > LONGEST:
            raise WorkflowError(f"invalid RRULE string provided: longer than {LONGEST} characters")
        try:
            rrule.rrulestr(text)
        except (ValueError, TypeError) as exc:
            raise WorkflowError(f"invalid RRULE string provided: {exc}") from None
        return {"rrule": text}
    count = whole_number("count", given["count"], least=1) if given.get("count") is not None else None
    recurrence = _recurrence(given.get("recurrence"))
    weekdays = _weekdays(given.get("weekdays"), recurrence)
    existing = existing or {}
    count = count or existing.get("count")
    recurrence_text = given.get("recurrence") or existing.get("recurrence")
    weekdays = weekdays or existing.get("weekdays")
    if not recurrence_text and count != 1:
        raise WorkflowError("recurrence must be specified for execution count larger than 1")
    return {"recurrence": recurrence_text, "count": count, "weekdays": weekdays}


def _position(day: str) -> tuple[Any, int | None]:
    prefix = day[:-2]
    return WEEKDAYS[day[-2:]], (-1 if prefix == "L-" else int(prefix) if prefix else None)


def occurrences(rule: dict, since: datetime | None, until: datetime | None) -> rrule.rrulebase | None:
    """Every time ``rule`` runs from ``since`` to ``until`` (None: it never runs)."""
    if rule.get("rrule"):
        return rrule.rrulestr(rule["rrule"], dtstart=since, cache=True)  # ``_walked`` stops at ``until``
    recurrence = _recurrence(rule.get("recurrence"))
    if recurrence is None:
        if rule.get("count") != 1:
            return None
        interval, frequency = 0, rrule.DAILY
    else:
        interval, frequency = recurrence[0], FREQUENCIES[recurrence[1]]
    count = rule.get("count")
    if not rule.get("weekdays"):
        # dateutil deprecates a count with an until: ``_walked`` stops at the until
        return rrule.rrule(frequency, interval=interval, dtstart=since, until=None if count else until, count=count,
                           cache=True)
    days = rrule.rruleset(cache=True)
    for day in rule["weekdays"]:
        weekday, position = _position(day)
        days.rrule(rrule.rrule(frequency, interval=interval, dtstart=since, until=until, byweekday=weekday,
                               bysetpos=position))
    if not count:
        return days
    last = next((when for index, when in enumerate(days) if index == count - 1 or index >= SEARCHED), None)
    if last is None:
        return days
    capped = rrule.rruleset(cache=True)
    for each in days._rrule:
        capped.rrule(each.replace(until=last))
    return capped


def _step(rule: dict, since: datetime | None) -> timedelta | None:
    """The fixed time between two runs of a plain recurrence in a fixed-length unit, else None."""
    recurrence = _recurrence(rule.get("recurrence")) if not rule.get("rrule") else None
    if recurrence is None or rule.get("weekdays") or since is None or FREQUENCIES[recurrence[1]] not in SECONDS:
        return None
    return timedelta(seconds=recurrence[0] * SECONDS[FREQUENCIES[recurrence[1]]]) or None


def _computed(rule: dict, since: datetime, until: datetime | None, step: timedelta, now: datetime) -> Iterator[datetime]:
    """The runs of a plain recurrence after ``now``, computed from ``since``."""
    index = 0 if now < since else (now - since) // step + 1
    while not (rule.get("count") and index >= rule["count"]):
        when = since + index * step
        if until is not None and when > until:
            return
        yield when
        index += 1


def _walked(rule: dict, since: datetime | None, until: datetime | None, now: datetime) -> Iterator[datetime]:
    """The runs of any other rule after ``now``, walked from ``since`` (refused past ``SEARCHED`` steps)."""
    times = occurrences(rule, since, until)
    for index, when in enumerate(times if times is not None else ()):
        if until is not None and when > until:
            return
        if when > now:
            yield when
        elif index >= SEARCHED:
            raise WorkflowError(f"the rule runs more than {SEARCHED} times from since to now: give a later since")


def runs_after(rule: dict, since: datetime | None, until: datetime | None, now: datetime) -> Iterator[datetime]:
    """When ``rule`` runs after ``now``, in order.  A plain recurrence every N seconds, minutes, hours, days or
    weeks is computed (every second since a year ago would be 31 million steps to walk); a rule that would
    be walked more than ``SEARCHED`` steps before ``now`` is refused (``WorkflowError``)."""
    since = since.replace(microsecond=0) if since is not None else None  # as dateutil's rules start
    step = _step(rule, since)
    return _computed(rule, since, until, step, now) if step is not None and since is not None else \
        _walked(rule, since, until, now)


def upcoming(rule: dict, since: datetime | None, until: datetime | None, now: datetime) -> list[datetime]:
    """The next ``SHOWN`` runs at most, none past ``HORIZON`` from now (in this process)."""
    horizon = now + HORIZON
    return list(itertools.takewhile(lambda when: when <= horizon,
                                     itertools.islice(runs_after(rule, since, until, now), SHOWN)))


def plan(rule: dict, since: datetime | None, until: datetime | None, now: datetime) -> list[datetime]:
    """``upcoming``, its first the next run; a rule that is walked is walked in a child process given
    ``WALK_SECONDS``: dateutil looks for a run of an RRULE no date meets (February 30th) until the year
    9999, minutes on end, and cannot be stopped from within."""
    once = not rule.get("rrule") and not rule.get("recurrence") and rule.get("count") == 1
    if once or _step(rule, since.replace(microsecond=0) if since else None) is not None:
        return upcoming(rule, since, until, now)
    asked = json.dumps({"rule": rule, "since": _text(since), "until": _text(until), "now": _text(now)})
    try:
        done = subprocess.run([sys.executable, "-P", "-c", "from stoker.workflows.schedule_rules import _walk; _walk()"],
                              input=asked, capture_output=True, text=True, timeout=WALK_SECONDS)
    except subprocess.TimeoutExpired:
        raise WorkflowError(f"the rule gives no run within {WALK_SECONDS:g} s of computing (an RRULE no date "
                            "meets, or with runs that far apart): refused") from None
    answer = json.loads(done.stdout or "{}")
    if "error" in answer or "runs" not in answer:
        raise WorkflowError(answer.get("error") or f"the rule could not be computed: {done.stderr[-300:]}")
    return [datetime.fromisoformat(when) for when in answer["runs"]]


def _text(when: datetime | None) -> str | None:
    return when.isoformat() if when is not None else None


def _walk() -> None:
    """``plan``'s child: the runs of the rule it reads on stdin, as JSON on stdout."""
    asked = json.load(sys.stdin)
    times = {key: datetime.fromisoformat(asked[key]) if asked[key] else None for key in ("since", "until", "now")}
    try:
        runs = upcoming(asked["rule"], times["since"], times["until"], times["now"])
        print(json.dumps({"runs": [when.isoformat() for when in runs]}))
    except WorkflowError as refused:
        print(json.dumps({"error": str(refused)}))
