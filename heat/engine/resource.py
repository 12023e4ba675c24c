"""Heat's ``heat.engine.resource``: the ``Resource`` base class plug-ins extend."""

from stoker.resources.exceptions import NoActionRequired, PollDelay, UpdateReplace  # noqa: F401
from stoker.resources.resource import Resource  # noqa: F401
