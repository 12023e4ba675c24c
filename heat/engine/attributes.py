"""Heat's ``heat.engine.attributes``: Stoker's attribute schema."""

from stoker.resources.attributes import ALL_ATTRIBUTES, SHOW, Schema, schemata  # noqa: F401

SHOW_ATTR = SHOW
