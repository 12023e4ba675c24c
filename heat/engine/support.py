"""Heat's ``heat.engine.support``: Stoker's support statuses."""

from stoker.resources.support import (  # noqa: F401
    DEPRECATED,
    HIDDEN,
    SUPPORT_STATUSES,
    SUPPORTED,
    UNKNOWN,
    UNSUPPORTED,
    SupportStatus,
    is_valid_status,
)
