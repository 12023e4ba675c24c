"""How far a resource type, property or attribute is supported.

Plug-ins tag their schemas with a ``SupportStatus`` so that users (and the
``resource type`` listings) can tell a deprecated property from a current one.
The status never changes how a template runs; it only informs.
"""

from __future__ import annotations

#: the template shapes a type can be shown in (``resource type show --template-type``); here, not in
#: ``type_info``, so that the CLI's options need none of the schema machinery
TEMPLATE_TYPES = ("cfn", "hot")

SUPPORT_STATUSES = (UNKNOWN, SUPPORTED, DEPRECATED, UNSUPPORTED, HIDDEN) = (
    "UNKNOWN",
    "SUPPORTED",
    "DEPRECATED",
    "UNSUPPORTED",
    "HIDDEN",
)


class SupportStatus:
    """The status of one thing, since ``version``, with the status it had before.

    An unknown ``status`` is not an error (a plug-in written for a newer Heat
    must still load): it becomes ``UNKNOWN`` with a message saying why.
    """

    def __init__(
        self,
        status: str = SUPPORTED,
        message: str | None = None,
        version: str | None = None,
        previous_status: "SupportStatus | None" = None,
        substitute_class: type | None = None,
    ):
        if previous_status is not None and not isinstance(previous_status, SupportStatus):
            raise ValueError(
                f"previous_status must be a SupportStatus, not {type(previous_status).__name__}"
            )
        if status not in SUPPORT_STATUSES:
            status, version, previous_status = UNKNOWN, None, None
            message = f"Specified status is invalid, defaulting to {UNKNOWN}"
        self.status = status
        self.message = message
        self.version = version
        self.previous_status = previous_status
        self.substitute_class = substitute_class

    def to_dict(self) -> dict:
        previous = self.previous_status
        return {
            "status": self.status,
            "message": self.message,
            "version": self.version,
            "previous_status": previous.to_dict() if previous is not None else None,
        }

    def is_substituted(self, substitute_class: type) -> bool:
        return self.substitute_class is not None and self.substitute_class is substitute_class

    def __repr__(self) -> str:
        return f"SupportStatus({self.status!r}, version={self.version!r})"


def is_valid_status(status: str) -> bool:
    return status in SUPPORT_STATUSES
