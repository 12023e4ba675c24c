"""``OS::Heat::TestResource``: a resource with knobs, for testing templates and engines."""

from __future__ import annotations

import time
from typing import Any

from stoker.resources import attributes, properties
from stoker.resources.builtin._common import given
from stoker.resources.exceptions import UpdateReplace
from stoker.resources.resource import Resource
from stoker.resources.support import SupportStatus


def _number(description: str, default: Any = None, version: str | None = None) -> properties.Schema:
    return properties.Schema(
        properties.Schema.NUMBER, description, default=default, update_allowed=True,
        support_status=SupportStatus(version=version) if version else None,
    )


class TestResource(Resource):
    """Stores a string; can be told to wait, fail or need replacement.

    For testing only.  ``wait_secs`` (or ``action_wait_secs`` per action)
    makes create/update/delete take that long without blocking anything
    else (-1 waits forever), ``fail`` fails create and update once the wait
    is over, ``update_replace`` makes a change of ``value`` replace the
    resource.  ``client_name``, ``entity_name`` and ``constraint_prop_secs``
    are accepted for compatibility with Heat templates but do nothing here
    (there are no cloud clients to poll).
    """

    __test__ = False  # not a pytest test class, despite the name

    support_status = SupportStatus(version="5.0.0")
    run_in_thread = False
    # It only waits and keeps a string: a crash mid-action hides nothing
    # outside Stoker, so its start need not reach the disk before it acts.
    acts_outside = False

    PROPERTIES = (
        VALUE, UPDATE_REPLACE, FAIL, CLIENT_NAME, ENTITY_NAME, WAIT_SECS, ACTION_WAIT_SECS,
        ATTR_WAIT_SECS, CONSTRAINT_PROP_SECS, UPDATE_REPLACE_VALUE,
    ) = (
        "value", "update_replace", "fail", "client_name", "entity_name", "wait_secs",
        "action_wait_secs", "attr_wait_secs", "constraint_prop_secs", "update_replace_value",
    )
    OUTPUT = "output"

    properties_schema = {
        CONSTRAINT_PROP_SECS: _number(
            "Seconds to delay property constraint checking (ignored by Stoker).", 0, "6.0.0"),
        ATTR_WAIT_SECS: _number("Seconds to delay resolving the output attribute.", 0, "6.0.0"),
        VALUE: properties.Schema(
            properties.Schema.STRING, "The string to store.",
            default="test_string", update_allowed=True,
        ),
        UPDATE_REPLACE_VALUE: properties.Schema(
            properties.Schema.STRING,
            "A value that can be stored but not updated: changing it replaces the resource.",
            support_status=SupportStatus(version="7.0.0"),
        ),
        FAIL: properties.Schema(
            properties.Schema.BOOLEAN,
            "Fail create and update (after waiting), to test failure handling.",
            default=False, update_allowed=True,
        ),
        UPDATE_REPLACE: properties.Schema(
            properties.Schema.BOOLEAN,
            "Replace the resource, rather than update it, when value changes.",
            default=False, update_allowed=True,
        ),
        WAIT_SECS: _number("Seconds each action takes (-1 is forever).", 0),
        ACTION_WAIT_SECS: properties.Schema(
            properties.Schema.MAP, "Seconds each action takes, per action.",
            update_allowed=True,
            schema={action: _number(f"Seconds a {action} takes (default: wait_secs).")
                    for action in ("create", "update", "delete")},
        ),
        CLIENT_NAME: properties.Schema(
            properties.Schema.STRING, "Client to poll (ignored by Stoker).",
            default="", update_allowed=True,
        ),
        ENTITY_NAME: properties.Schema(
            properties.Schema.STRING, "Client entity to poll (ignored by Stoker).",
            default="", update_allowed=True,
        ),
    }

    attributes_schema = {
        OUTPUT: attributes.Schema(
            "The stored string.",
            cache_mode=attributes.Schema.CACHE_NONE,
        ),
    }

    # -- waiting, without blocking: the token is the deadline -----------------------
    def _wait_secs(self) -> float:
        """The current action's own wait if the template gives one, else wait_secs."""
        action = self.action.lower()
        if (given(self, self.ACTION_WAIT_SECS) or {}).get(action) is not None:
            return self.properties[self.ACTION_WAIT_SECS][action]
        return self.properties[self.WAIT_SECS]

    @staticmethod
    def _deadline(secs: float) -> float | None:
        """When an action taking ``secs`` is done (wall clock: any worker host may poll it); None: never."""
        return None if secs < 0 else time.time() + secs

    def poll_delay(self, token: Any) -> float | None:
        if isinstance(token, float):
            return max(0.0, token - time.time())
        return None

    def _check_done(self, deadline: float | None) -> bool:
        if deadline is None or time.time() < deadline:
            return False
        if self.properties[self.FAIL] and self.action != self.DELETE:
            raise ValueError(f"Test Resource failed {self.name}")
        return True

    check_create_complete = check_update_complete = check_delete_complete = _check_done

    # -- the actions ------------------------------------------------------------------
    def handle_create(self) -> float | None:
        if not self.properties[self.FAIL]:
            self.data_set("value", self.properties[self.VALUE])
            self.resource_id_set(self.physical_resource_name())
        return self._deadline(self._wait_secs())

    def plan_update(self, definition: Any, new_props: Any):
        """A change of ``value`` with ``update_replace`` is known to replace before any
        update starts (Heat decides it in ``needs_update``)."""
        plan = super().plan_update(definition, new_props)
        if plan is not None and self.VALUE in plan.prop_diff and new_props[self.UPDATE_REPLACE]:
            plan.forcing = sorted({*plan.forcing, self.VALUE})
        return plan

    def handle_update(self, json_snippet: Any, tmpl_diff: dict, prop_diff: dict) -> float | None:
        if self.VALUE in prop_diff and self.properties[self.UPDATE_REPLACE]:
            raise UpdateReplace(self.name)
        value = prop_diff.get(self.VALUE)
        if value and not self.properties[self.FAIL]:
            self.data_set("value", value)
        return self._deadline(self._wait_secs() if value else 0)

    def handle_delete(self) -> float | None:
        return self._deadline(self._wait_secs())

    def handle_check(self) -> None:
        if not self.resource_id:
            raise ValueError("Resource not created")

    def _resolve_attribute(self, name: str) -> Any:
        delay = self.properties[self.ATTR_WAIT_SECS]
        if delay and delay > 0:
            time.sleep(delay)  # blocks by design: simulates a slow attribute
        if name == self.OUTPUT:
            return self.data().get("value")
        return None


def resource_mapping() -> dict:
    return {"OS::Heat::TestResource": TestResource}
