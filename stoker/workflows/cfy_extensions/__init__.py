"""The Cloudify manager's own operations (``cfy_extensions``: Component, SharedResource, Blueprint,
PasswordSecret), run natively on this project's deployments and executions (``table.OPERATIONS``)."""

#: the plugin the standard types name for these operations
PLUGIN = "cfy_extensions"
