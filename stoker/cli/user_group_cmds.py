"""``stoker user-group create|list|delete|add-user|remove-user|add-tenant|remove-tenant``: Cloudify's user groups
on the database, as ``stoker user`` keeps its users (the same rules as ``cfy user-groups`` on ``stoker api``)."""

from __future__ import annotations

import sys

import click

from stoker.cli.api_cmds import db_url_of
from stoker.cli.formatting import format_option, show_list
from stoker.cli.group import pass_settings

DB_URL = click.option("--db-url", "db_url", default=None)


@click.group("user-group")
def user_group() -> None:
    """Groups of Cloudify API users: a group's role in a tenant is each member's there (the highest of its own and
    its groups' counts); a sys_admin group makes its members operators."""


def _groups(settings, db_url: str | None):
    from stoker.api.cloudify.user_groups import GroupStore
    from stoker.store.db import open_store

    return GroupStore(open_store(db_url_of(settings, db_url)).engine)


def _run(change, *args, done: str) -> None:
    from stoker.api.cloudify.users import UserError

    try:
        change(*args)
    except UserError as exc:
        click.echo(f"ERROR: {exc}", err=True)
        sys.exit(1)
    click.echo(done)


@user_group.command("create")
@click.argument("name")
@click.option("-r", "--role", type=click.Choice(["default", "sys_admin"]), default="default", show_default=True,
              help="The group's system role: sys_admin makes its members operators.")
@click.option("-l", "--ldap-distinguished-name", "ldap_dn", default=None, help="The LDAP group it stands for (kept "
              "and shown only).")
@DB_URL
@pass_settings
def group_create(settings, name, role, ldap_dn, db_url):
    """Create group NAME."""
    _run(_groups(settings, db_url).create, name, role, ldap_dn, done=f"Group {name} created")


@user_group.command("list")
@DB_URL
@format_option()
@pass_settings
def group_list(settings, db_url, fmt):
    """Groups with their system role, LDAP name, members and tenant roles."""
    from stoker.api.cloudify.users import UserStore

    directory = UserStore(_groups(settings, db_url).engine).directory()
    rows = [{"name": name, "role": group["role"], "ldap_dn": group["ldap_dn"], "users": group["users"],
             "tenants": group["tenants"]} for name, group in directory.groups.items()]
    show_list(rows, ["name", "role", "ldap_dn", "users", "tenants"], fmt)


@user_group.command("delete")
@click.argument("name")
@DB_URL
@pass_settings
def group_delete(settings, name, db_url):
    """Delete group NAME: its members lose what it gave them."""
    _run(_groups(settings, db_url).delete, name, done=f"Group {name} deleted")


@user_group.command("add-user")
@click.argument("user")
@click.option("-g", "--group-name", "name", required=True)
@DB_URL
@pass_settings
def group_add_user(settings, user, name, db_url):
    """Add USER to a group."""
    _run(_groups(settings, db_url).add_user, user, name, done=f"User {user} added to group {name}")


@user_group.command("remove-user")
@click.argument("user")
@click.option("-g", "--group-name", "name", required=True)
@DB_URL
@pass_settings
def group_remove_user(settings, user, name, db_url):
    """Remove USER from a group."""
    _run(_groups(settings, db_url).remove_user, user, name, done=f"User {user} removed from group {name}")


@user_group.command("add-tenant")
@click.argument("name")
@click.option("-t", "--tenant-name", "tenant", required=True)
@click.option("-r", "--role", type=click.Choice(["viewer", "user", "manager"]), required=True,
              help="The role each member holds in the tenant.")
@DB_URL
@pass_settings
def group_add_tenant(settings, name, tenant, role, db_url):
    """Give group NAME a role in a tenant."""
    _run(_groups(settings, db_url).add_tenant, name, tenant, role, done=f"Group {name} is a {role} in tenant {tenant}")


@user_group.command("remove-tenant")
@click.argument("name")
@click.option("-t", "--tenant-name", "tenant", required=True)
@DB_URL
@pass_settings
def group_remove_tenant(settings, name, tenant, db_url):
    """Take group NAME out of a tenant."""
    _run(_groups(settings, db_url).remove_tenant, name, tenant, done=f"Group {name} removed from tenant {tenant}")
