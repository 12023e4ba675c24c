"""The Cloudify manager's own operations (``cfy_extensions``: Component, SharedResource, Blueprint,
PasswordSecret), run natively on this project's deployments and executions (``table.OPERATIONS``)."""
