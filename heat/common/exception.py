"""Heat's exception names, mapped onto ``stoker.resources.exceptions``."""

from stoker.resources.exceptions import (  # noqa: F401 - re-exported for plug-ins
    EntityNotFound,
    InvalidSchemaError,
    InvalidTemplateAttribute,
    InvalidTemplateReference,
    NotFound,
    NotSupported,
    PhysicalResourceExists,
    PhysicalResourceNameAmbiguity,
    PluginError,
    PropertyUnspecifiedError,
    ResourceActionNotSupported,
    ResourceFailure,
    ResourceInError,
    ResourceNotAvailable,
    ResourceNotFound,
    ResourcePropertyConflict,
    ResourcePropertyDependency,
    ResourcePropertyValueDependency,
    ResourceUnknownStatus,
    StackValidationFailed,
    UpdateReplace,
)

HeatException = Error = PluginError
