"""Exceptions that resource plug-ins raise (and the engine understands).

Plug-ins written for OpenStack Heat raise ``heat.common.exception.X``; the
``heat`` compatibility package maps those names onto the classes here, so a
plug-in's ``raise exception.ResourceInError(...)`` reaches Stoker's engine as
a ``StokerError`` it knows how to report.

Most classes only fix a message; ``PluginError`` fills it from positional or
keyword arguments, so each subclass is a message and a list of field names.
"""

from __future__ import annotations

from typing import Any

from stoker import errors
from stoker.errors import Problem, StokerError, ValidationFailed, format_path


class _Fields(dict):
    """Formats a message even when a plug-in left out a field (shown as '')."""

    def __missing__(self, key: str) -> str:
        return ""


class PluginError(StokerError):
    """Base of the plug-in exceptions (Heat's ``HeatException``/``Error``).

    ``fields`` names the positional arguments, in order; every argument also
    becomes an attribute (``EntityNotFound(...).entity``).
    """

    code = "resource-error"
    fmt = "{message}"
    fields: tuple[str, ...] = ("message",)
    defaults: dict[str, Any] = {}

    def __init__(self, *args: Any, **kwargs: Any):
        values = {**self.defaults, **dict(zip(self.fields, args)), **kwargs}
        self.kwargs = values
        for name, value in values.items():
            setattr(self, name, value)
        self.message = self.fmt.format_map(_Fields(values))
        super().__init__(self.message)

    def __str__(self) -> str:
        return self.message


class _JoinedProperties(PluginError):
    """Takes property names as positional arguments: ``X('a', 'b')``."""

    def __init__(self, *props: str, **kwargs: Any):
        if props:
            kwargs["props"] = ", ".join(props)
        super().__init__(**kwargs)


class InvalidSchemaError(PluginError):
    """A plug-in's schema is wrong: a bug in the plug-in, not in the template."""

    code = "invalid-schema"


class NotFound(PluginError, errors.NotFound):
    code = "not-found"
    defaults = {"message": "Not found"}


class EntityNotFound(NotFound):
    fmt = "The {entity} ({name}) could not be found."
    fields = ("entity", "name")


class ResourceNotFound(EntityNotFound):
    fmt = "The Resource ({resource_name}) could not be found in Stack {stack_name}."
    fields = ("resource_name", "stack_name")


class UnknownResourceType(NotFound):
    """A template names a resource type nobody registered."""

    code = "unknown-resource-type"
    fmt = "The Resource Type ({type_name}) could not be found.{hint}"
    fields = ("type_name", "hint")


class InvalidTemplateAttribute(PluginError):
    code = "invalid-attribute"
    fmt = "The Referenced Attribute ({resource} {key}) is incorrect."
    fields = ("resource", "key")


class InvalidTemplateReference(PluginError):
    code = "invalid-reference"
    fmt = 'The specified reference "{resource}" (in {key}) is incorrect.'
    fields = ("resource", "key")


class PhysicalResourceNameAmbiguity(PluginError):
    fmt = "Multiple physical resources were found with name ({name})."
    fields = ("name",)


class PhysicalResourceExists(PluginError):
    fmt = "The physical resource for ({name}) exists."
    fields = ("name",)


class ResourceNotAvailable(PluginError):
    fmt = "The Resource ({resource_name}) is not available."
    fields = ("resource_name",)


class NotSupported(PluginError):
    fmt = "{feature} is not supported."
    fields = ("feature",)


class ResourceActionNotSupported(PluginError):
    fmt = "{action} is not supported for resource."
    fields = ("action",)


class ResourcePropertyConflict(_JoinedProperties):
    code = "property-conflict"
    fmt = "Cannot define the following properties at the same time: {props}."


class PropertyUnspecifiedError(_JoinedProperties):
    code = "property-unspecified"
    fmt = "At least one of the following properties must be specified: {props}."


class ResourcePropertyDependency(PluginError):
    fmt = "{prop1} cannot be specified without {prop2}."
    fields = ("prop1", "prop2")


class ResourcePropertyValueDependency(PluginError):
    fmt = "{prop1} property should only be specified for {prop2} with value {value}."
    fields = ("prop1", "prop2", "value")


class ResourceInError(PluginError):
    """The physical resource went to an error state (raised from check_*_complete)."""

    fmt = 'Went to status {resource_status} due to "{status_reason}"'
    fields = ("status_reason",)
    defaults = {"status_reason": "Unknown", "resource_status": "ERROR"}


class ResourceUnknownStatus(PluginError):
    fmt = '{result} - Unknown status {resource_status} due to "{status_reason}"'
    fields = ("result", "status_reason")
    defaults = {"result": "Resource failed", "status_reason": "Unknown"}


class UpdateReplace(PluginError):
    """Raised by ``handle_update`` when the change needs a new physical resource."""

    code = "update-replace"
    fmt = "The Resource {resource_name} requires replacement."
    fields = ("resource_name",)
    defaults = {"resource_name": "Unknown"}


class NoActionRequired(PluginError):
    """Raised by ``handle_signal`` to say the signal changed nothing (no event)."""

    fmt = "The resource {res_name} could not perform scaling action: {reason}"
    fields = ("res_name", "reason")
    defaults = {"res_name": "Unknown", "reason": ""}


class PollDelay(StokerError):
    """Raised by ``check_*_complete``: poll me again only after ``period`` rounds."""

    def __init__(self, period: int):
        if period < 1:
            raise ValueError("PollDelay period must be at least 1")
        super().__init__(f"poll again in {period} rounds")
        self.period = period


class ResourceFailure(StokerError):
    """An action of one resource failed; wraps the plug-in's own exception.

    The text reads like Heat's status reasons
    (``ValueError: resources.web: disk full``) because users grep for them.
    """

    code = "resource-failure"

    def __init__(self, exception_or_error: BaseException | str, resource: Any = None, action: str | None = None):
        self.resource = resource
        self.action = action if action is not None else getattr(resource, "action", None)
        name = getattr(resource, "name", None)
        self.path: tuple = ("resources", name) if name is not None else ()
        if isinstance(exception_or_error, ResourceFailure):
            self.exc, self.error = exception_or_error.exc, exception_or_error.error
            self.error_message, self.path = exception_or_error.error_message, exception_or_error.path
        elif isinstance(exception_or_error, BaseException):
            self.exc, self.error = exception_or_error, type(exception_or_error).__name__
            self.error_message = str(exception_or_error)
        else:
            self.exc, self.error, self.error_message = None, None, str(exception_or_error)
            inner = _from_status_reason(self.error_message, self.action)
            if inner is not None:  # a nested stack's reason: its path continues this one
                self.error, inner_path, self.error_message = inner
                self.path += inner_path
        parts = [self.error, format_path(self.path), self.error_message]
        super().__init__(": ".join(p for p in parts if p))


def _from_status_reason(reason: str, action: str | None) -> tuple[str, tuple, str] | None:
    """``Resource CREATE failed: ValueError: resources.oops: boom`` -> (error, path, message),
    as Heat reads a nested stack's status reason; None for any other text."""
    if action is None or f"Resource {str(action).upper()} failed: " not in reason:
        return None
    parts = [part.strip() for part in reason.split(":")]
    if len(parts) < 4:
        return None
    return parts[1], tuple(parts[2].split(".")), ": ".join(parts[3:])


class StackValidationFailed(ValidationFailed):
    """A plug-in's ``validate()`` rejects its resource; becomes one ``Problem``.

    ``path`` is kept as given (Stoker's built-ins give it whole, from
    ``resources``); given only ``resource``, the problem is at that resource.
    """

    def __init__(self, error: str | None = None, path: Any = None, message: str | None = None, resource: Any = None):
        if isinstance(path, str):
            path = [path]
        self.error = error
        self.path = tuple(path or ())
        self.error_message = message or ""
        if resource is not None and not self.path:
            self.path = ("resources", getattr(resource, "name", None))
        text = f"{error}: {self.error_message}" if error else self.error_message
        super().__init__([Problem(self.path, "resource-validation-failed", text)])
