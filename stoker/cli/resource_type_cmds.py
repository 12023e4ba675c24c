"""``stoker resource type list|show``: the resource types this Stoker knows (its own, plug-ins',
Heat's OpenStack types it simulates), in the shapes ``openstack orchestration resource type``
prints."""

from __future__ import annotations

import click

from stoker.cli.formatting import format_option, show_document, show_list
from stoker.cli.group import pass_settings
from stoker.errors import StokerError
from stoker.resources.support import TEMPLATE_TYPES


@click.group("resource")
def resource() -> None:
    """Resource types."""


@resource.group("type")
def resource_type() -> None:
    """Resource types: list them, show one's schema or a template using it."""


def _registry(settings):
    from stoker.resources.registry import default_registry

    return default_registry(settings.plugin_dirs)


@resource_type.command("list")
@click.option("--filter", "filters", multiple=True, metavar="KEY=VALUE",
              help="name (a regular expression), support_status or version; repeat for several.")
@click.option("--long", "long_", is_flag=True, help="Also show each type's description.")
@format_option()
@pass_settings
def type_list(settings, filters, long_, fmt) -> None:
    """List the resource types (hidden ones left out, as Heat does, and those of services the
    inventory's ``services`` does not list)."""
    wanted = {}
    for item in filters:
        key, sep, value = item.partition("=")
        if not sep or key not in ("name", "support_status", "version"):
            raise click.BadParameter(f"{item!r}: expected name=..., support_status=... or version=...",
                                     param_hint="--filter")
        wanted[key] = value
    from stoker.resources import type_info
    from stoker.resources.openstack import inventory  # SQLAlchemy and more: not every command's import

    found = type_info.list_types(_registry(settings), with_description=long_,
                                 usable=lambda name, cls: inventory.unavailable(cls, name) is None, **wanted)
    rows = found if long_ else [{"resource_type": name} for name in found]
    show_list(rows, ["resource_type", "description"] if long_ else ["resource_type"], fmt)


@resource_type.command("show")
@click.argument("type_name", metavar="TYPE")
@click.option("--template-type", type=click.Choice(TEMPLATE_TYPES), default=None,
              help="Show a template using the type instead of its schema.")
@click.option("--long", "long_", is_flag=True, help="Also show the type's description.")
@format_option("yaml")
@pass_settings
def type_show(settings, type_name, template_type, long_, fmt) -> None:
    """Show TYPE's properties, attributes and support status (or a template using it)."""
    from stoker.resources import type_info

    try:
        cls = _registry(settings).get(type_name)
    except StokerError as exc:
        raise click.ClickException(str(exc)) from None
    if template_type:
        show_document(type_info.type_template(cls, type_name, template_type), fmt)
    else:
        show_document(type_info.type_schema(cls, type_name, long_), fmt)
