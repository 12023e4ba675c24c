"""Execution schedules of a project's deployments: made, changed, read and deleted as Cloudify's
``/execution-schedules`` does, and fired when due (``fire_due``, from every ``stoker api`` server's beat).

A due schedule runs its workflow as ``cfy executions start --queue`` would (queued behind a running
execution), unless its last run has not ended, or failed with ``stop_on_fail`` (the schedule is then
disabled), or the run is later than its ``slip`` (minutes, plus a minute's grace: a server down at the
time skips it).  Either way its next occurrence moves on.
"""

from __future__ import annotations

import logging
import uuid
from datetime import datetime, timedelta, timezone
from typing import Any, Callable

from stoker import secretbox
from stoker.errors import NotFound
from stoker.store.blueprint_records import BlueprintRecords
from stoker.store.models import ACTIVE_EXECUTION, iso_time
from stoker.store.schedule_records import ScheduleRecords
from stoker.workflows import schedule_rules
from stoker.workflows.parameters import given_flag
from stoker.workflows.workflow_error import WorkflowError

LOG = logging.getLogger(__name__)
#: the longest schedule id (as the other ids)
LONGEST_ID = 255
#: a due run later than its slip by more than this is skipped (Cloudify's scheduler looks once a minute)
GRACE = timedelta(seconds=60)
#: schedules one server fires at one look, at most: the rest wait for the next look (a tenant's thousands
#: of schedules due at once never hold a server's heartbeat up)
PER_LOOK = 20
#: Cloudify's execution arguments, with their defaults
ARGUMENTS = {"allow_custom_parameters": False, "force": False, "is_dry_run": False, "wait_after_fail": 600}


def now_utc() -> datetime:
    """Schedules keep naive UTC times, as Cloudify's."""
    return datetime.now(timezone.utc).replace(tzinfo=None)


def naive(value: datetime | None) -> datetime | None:
    return value.astimezone(timezone.utc).replace(tzinfo=None) if value is not None and value.tzinfo else value


def _anchor(row: dict) -> datetime | None:
    """Where a stored schedule's runs are counted from: its next run, itself one of them, unless the rule
    counts its runs from ``since`` (a rule walked from ``since`` each look would cost more every day)."""
    if row["next_occurrence"] is not None and not row["rule"].get("count") and \
            "COUNT=" not in str(row["rule"].get("rrule", "")).upper():
        return naive(row["next_occurrence"])
    return naive(row["since"])


def upcoming(row: dict) -> list[datetime]:
    """A stored schedule's next runs (Cloudify's ``all_next_occurrences``), as computed when it was written
    or last fired: reading one never walks its rule."""
    now = now_utc()
    return [when for when in map(datetime.fromisoformat, row["upcoming"] or ()) if when >= now]


def _planned(rule: dict, since: datetime | None, until: datetime | None) -> dict:
    """The next run and those after it, as stored."""
    runs = schedule_rules.plan(rule, since, until, now_utc())
    return {"next_occurrence": runs[0] if runs else None, "upcoming": [when.isoformat() for when in runs]}


def _arguments(given: Any) -> dict:
    if not given:
        return dict(ARGUMENTS)
    if not isinstance(given, dict):
        raise WorkflowError(f"execution_arguments: expected a dict, but got: {str(given)[:100]}")
    wait = given.get("wait_after_fail", ARGUMENTS["wait_after_fail"])
    return {"allow_custom_parameters": given_flag(given, "allow_custom_parameters", False),
            "force": given_flag(given, "force", False), "is_dry_run": given_flag(given, "dry_run", False),
            "wait_after_fail": wait if isinstance(wait, int) and not isinstance(wait, bool) else 600}


class Schedules:
    """One project's execution schedules."""

    def __init__(self, store: Any, project_id: str):
        self.deployments = BlueprintRecords(store)
        self.records = ScheduleRecords(store)
        self.project_id = project_id

    def _deployment(self, deployment_id: str) -> dict:
        return self.deployments.get_deployment(self.project_id, deployment_id)

    @staticmethod
    def _check_workflow(deployment: dict, workflow_id: Any) -> str:
        workflows = secretbox.unseal(deployment["plan"]).get("workflows") or {}
        if not isinstance(workflow_id, str) or workflow_id not in workflows:
            raise NotFound(f"Workflow {str(workflow_id)[:100]} not found in deployment {deployment['id']} "
                           f"(it has: {', '.join(sorted(workflows))})")
        return workflow_id

    def create(self, schedule_id: str, deployment_id: str, given: dict, created_by: str) -> dict:
        if not schedule_id or len(schedule_id) > LONGEST_ID:
            raise WorkflowError(f"a schedule id is 1 to {LONGEST_ID} characters")
        deployment = self._deployment(deployment_id)
        parameters = given.get("parameters")
        if parameters is not None and not isinstance(parameters, dict):
            raise WorkflowError(f"parameters: expected a dict, but got: {str(parameters)[:100]}")
        since = given.get("since") or now_utc()
        since = since if isinstance(since, datetime) else schedule_rules.parse_time(since, "since")
        until = schedule_rules.parse_time(given["until"], "until") if given.get("until") else None
        row = {"id": schedule_id, "project_id": self.project_id, "deployment_pk": deployment["pk"],
               "workflow_id": self._check_workflow(deployment, given.get("workflow_id")),
               "parameters": parameters, "execution_arguments": _arguments(given.get("execution_arguments")),
               "since": since, "until": until, "rule": schedule_rules.rule_of(given),
               "slip": schedule_rules.whole_number("slip", given.get("slip", 0), least=0),
               "stop_on_fail": given_flag(given, "stop_on_fail", False),
               "enabled": given_flag(given, "enabled", True), "created_by": created_by}
        return self.records.add({**row, **_planned(row["rule"], since, until)})

    def once(self, workflow_id: str, deployment_id: str, when: Any, parameters: dict | None, arguments: dict,
             created_by: str) -> dict:
        """``cfy executions start --schedule WHEN``: as Cloudify 7 keeps it, a schedule that runs the workflow
        once, at ``when`` (``schedule_rules.scheduled_time``: refused unless later than now), named
        ``<workflow>_<hex>``; ``arguments``: a schedule's execution arguments (``dry_run``, ``force``...).  What the start answers:
        a ``scheduled`` execution, with no id (none is made until it runs), and its schedule's id."""
        since = schedule_rules.scheduled_time(when, now_utc())
        made = self.create(f"{workflow_id}_{uuid.uuid4().hex}", deployment_id, {
            "workflow_id": workflow_id, "parameters": parameters, "execution_arguments": arguments, "count": 1,
            "since": since}, created_by)
        return {"id": None, "workflow_id": workflow_id, "deployment_id": deployment_id, "status": "scheduled",
                "scheduled_for": iso_time(made["next_occurrence"]), "parameters": parameters or {},
                "created_at": iso_time(made["created_at"]), "created_by": created_by,
                "is_dry_run": made["execution_arguments"]["is_dry_run"], "error": "", "schedule_id": made["id"]}

    def update(self, schedule_id: str, deployment_id: str, given: dict) -> dict:
        """Change what ``given`` names (times, rule, workflow, slip, stop_on_fail, enabled); the rest stays."""
        deployment = self._deployment(deployment_id)
        row = self.records.get(deployment["pk"], schedule_id)
        fields: dict[str, Any] = {}
        if given.get("since"):
            fields["since"] = schedule_rules.parse_time(given["since"], "since")
        if given.get("until"):
            fields["until"] = schedule_rules.parse_time(given["until"], "until")
        if given.get("workflow_id"):
            fields["workflow_id"] = self._check_workflow(deployment, given["workflow_id"])
        if given.get("slip") is not None:
            fields["slip"] = schedule_rules.whole_number("slip", given["slip"], least=0)
        for name in ("stop_on_fail", "enabled"):
            if given.get(name) is not None:
                fields[name] = given_flag(given, name, row[name])
        if any(given.get(name) for name in ("rrule", "recurrence", "count", "weekdays")):
            fields["rule"] = schedule_rules.rule_of(given, existing=row["rule"])
        since, until = fields.get("since", naive(row["since"])), fields.get("until", naive(row["until"]))
        fields.update(_planned(fields.get("rule", row["rule"]), since, until))
        self.records.change(row["pk"], **fields)
        return self.records.get(deployment["pk"], schedule_id)

    def get(self, schedule_id: str, deployment_id: str) -> dict:
        return self.records.get(self._deployment(deployment_id)["pk"], schedule_id)

    def list(self, deployment_id: str | None = None) -> list[dict]:
        pk = self._deployment(deployment_id)["pk"] if deployment_id else None
        return self.records.list([self.project_id], pk)

    def delete(self, schedule_id: str, deployment_id: str) -> None:
        self.records.delete(self.get(schedule_id, deployment_id)["pk"])



def _moved_on(row: dict, now: datetime) -> dict:
    """A due schedule's next run and those after it: the stored ones still ahead, else the rule's again."""
    later = [when for when in map(datetime.fromisoformat, row["upcoming"] or ()) if when > now]
    if not later:
        try:
            later = schedule_rules.plan(row["rule"], _anchor(row), naive(row["until"]), now)
        except WorkflowError:  # the rule grew too long to walk: stop it rather than look again each time
            later = []
    return {"next_occurrence": later[0] if later else None, "upcoming": [when.isoformat() for when in later]}


def _runs(row: dict, now: datetime, fields: dict) -> bool:
    """Whether a due schedule runs now: its last execution ended (a failure with ``stop_on_fail`` disables
    it, in ``fields``), and it is not later than its slip."""
    latest = row["latest_execution_status"]
    if latest in ACTIVE_EXECUTION + ("queued",):
        return False
    if row["stop_on_fail"] and latest == "failed":
        fields["enabled"] = False
        LOG.warning("schedule %s disabled: its last execution failed and stop_on_fail is set", row["id"])
        return False
    return now - naive(row["next_occurrence"]) <= timedelta(minutes=row["slip"]) + GRACE


def fire_due(store: Any, start: Callable[[dict], str], now: datetime | None = None) -> list[str]:
    """Run the schedules of every project that are due: ``start(row)`` starts one's workflow (on
    ``row["deployment_id"]``) and gives its execution's id.  The schedules this server moved on (another server may
    have taken some first)."""
    records = ScheduleRecords(store)
    now = now or now_utc()
    fired = []
    for row in records.due(now, PER_LOOK):
        fields = _moved_on(row, now)
        runs = _runs(row, now, fields)
        if not records.claim(row, **fields):
            continue
        fired.append(row["id"])
        if not runs:
            continue
        try:
            records.change(row["pk"], latest_execution_id=start(row))
        except Exception as exc:  # a refused run (scripts off, bad parameters...): the schedule goes on
            LOG.warning("schedule %s of project %s did not start its execution: %s", row["id"], row["project_id"],
                        exc)
    return fired
