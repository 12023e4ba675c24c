"""Heat's ``heat.engine`` names used by plug-ins (see ``heat/__init__.py``)."""
