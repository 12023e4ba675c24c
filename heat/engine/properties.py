"""Heat's ``heat.engine.properties``: Stoker's property schema."""

from stoker.resources.properties import AnyIndexDict, Properties, Schema, schemata  # noqa: F401
