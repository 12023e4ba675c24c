"""Heat's ``heat.engine.constraints``: Stoker's constraints."""

from stoker.constraints import (  # noqa: F401
    AllowedPattern,
    AllowedValues,
    Constraint,
    CustomConstraint,
    Length,
    Modulo,
    Range,
)
from stoker.resources.exceptions import EntityNotFound, NotSupported
from stoker.resources.properties import AnyIndexDict, Schema  # noqa: F401


class BaseCustomConstraint:
    """Heat's base for custom constraints that look a value up through a cloud API.

    Stoker has no cloud clients: its custom-constraint registry calls
    ``validate_with_client(None, value)`` and takes an exception as "invalid"
    (see ``stoker.constraints.custom``).  Subclasses that only name a client
    and a getter cannot check anything here, and say so.
    """

    expected_exceptions = (EntityNotFound,)
    resource_client_name = None
    resource_getter_name = None

    def validate_with_client(self, client, value):
        raise NotSupported(f"Checking a value with the {self.resource_client_name} client")
