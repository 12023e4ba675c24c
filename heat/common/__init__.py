"""Heat's ``heat.common`` names used by plug-ins (see ``heat/__init__.py``)."""
