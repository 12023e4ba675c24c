"""Compatibility names for resource plug-ins written for OpenStack Heat.

Heat's plug-in guide has plug-ins import ``heat.engine.resource``,
``heat.engine.properties``, ``heat.engine.constraints``,
``heat.engine.attributes``, ``heat.engine.support``, ``heat.common.i18n`` and
``heat.common.exception``.  This package lets such a plug-in load unmodified
into Stoker, without OpenStack Heat installed: each module only re-exports
Stoker's own classes under Heat's names.

It is installed with Stoker (and so would shadow a real Heat installed in the
same environment); Stoker is a replacement for the Heat engine, so the two
are not meant to share an environment.  Stoker itself never imports it.
"""
