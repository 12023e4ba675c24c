"""The REST API's own tables: issued tokens, tenants, users, user groups, software configs and deployments, key pairs.

They live in the same database as the engine's state and are declared on
the models' metadata, so a new database gets them with everything else
(``stoker.store.db``); migration 0003 adds them to older ones.  Of the
engine, only the software resource types use them (``stoker.store.software``).
"""

from __future__ import annotations

from datetime import datetime, timezone

from sqlalchemy import JSON, Boolean, Column, DateTime, Index, PrimaryKeyConstraint, String, Table, Text

from stoker.store.models import metadata


def utcnow() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


TOKENS = Table(
    "api_token", metadata,
    Column("id", String(36), primary_key=True),
    #: sha256 of the token, hex; the token itself is never stored
    Column("token_hash", String(64), nullable=False, unique=True),
    Column("project_id", String(255), nullable=False),
    Column("description", Text, nullable=False, default=""),
    Column("created_at", DateTime, nullable=False, default=utcnow),
    Column("expires_at", DateTime),
    Column("revoked_at", DateTime),
    #: the user a token was issued to (Cloudify's ``cfy tokens get``); none for a project's token
    Column("user_name", String(255)),
)

#: Cloudify's users: one row per tenant a user belongs to, with the user's role there
USERS = Table(
    "api_user", metadata,
    Column("name", String(255), nullable=False),
    Column("tenant", String(255), nullable=False),
    Column("role", String(32), nullable=False),
    Column("created_at", DateTime, nullable=False, default=utcnow),
    PrimaryKeyConstraint("name", "tenant", name="pk_api_user"),
)

#: Cloudify's tenants, with or without users (``default_tenant`` is the project ``default``)
TENANTS = Table(
    "api_tenant", metadata,
    Column("name", String(255), primary_key=True),
    Column("created_at", DateTime, nullable=False, default=utcnow),
)

#: Cloudify's users themselves, in no tenant or in several (``api_user``)
ACCOUNTS = Table(
    "api_account", metadata,
    Column("name", String(255), primary_key=True),
    #: ``scrypt$n$r$p$salt$hash`` (stoker/api/cloudify/passwords.py); the password is never stored
    Column("password_hash", String(255), nullable=False),
    #: a deactivated user keeps its rows but cannot log in
    Column("active", Boolean, nullable=False, default=True),
    Column("created_at", DateTime, nullable=False, default=utcnow),
)

#: Cloudify's user groups: a system role (``sys_admin`` makes its members operators, ``default`` nothing more)
#: and the LDAP group it stands for, kept and shown only (Stoker reads no directory)
GROUPS = Table(
    "api_group", metadata,
    Column("name", String(255), primary_key=True),
    Column("role", String(32), nullable=False),
    Column("ldap_dn", String(1024)),
    Column("created_at", DateTime, nullable=False, default=utcnow),
)

#: a group's role in a tenant, which each of its members holds there
GROUP_TENANTS = Table(
    "api_group_tenant", metadata,
    Column("group_name", String(255), nullable=False),
    Column("tenant", String(255), nullable=False),
    Column("role", String(32), nullable=False),
    Column("created_at", DateTime, nullable=False, default=utcnow),
    PrimaryKeyConstraint("group_name", "tenant", name="pk_api_group_tenant"),
)

#: a group's members (users, ``api_account``)
GROUP_USERS = Table(
    "api_group_user", metadata,
    Column("group_name", String(255), nullable=False),
    Column("user_name", String(255), nullable=False),
    Column("created_at", DateTime, nullable=False, default=utcnow),
    PrimaryKeyConstraint("group_name", "user_name", name="pk_api_group_user"),
    Index("ix_api_group_user_user_name", "user_name"),
)

SOFTWARE_CONFIGS = Table(
    "api_software_config", metadata,
    Column("id", String(36), primary_key=True),
    Column("project_id", String(255), nullable=False, index=True),
    Column("name", String(255)),
    Column("group", String(255), nullable=False, default="Heat::Ungrouped"),
    Column("config", JSON),  # any JSON, as in Heat: a script's text, a structured config's map
    Column("inputs", JSON),
    Column("outputs", JSON),
    Column("options", JSON),
    Column("created_at", DateTime, nullable=False, default=utcnow),
)

SOFTWARE_DEPLOYMENTS = Table(
    "api_software_deployment", metadata,
    Column("id", String(36), primary_key=True),
    Column("project_id", String(255), nullable=False),
    Column("config_id", String(36), nullable=False),
    Column("server_id", String(255), nullable=False),
    Column("action", String(32), nullable=False, default="INIT"),
    Column("status", String(32), nullable=False, default="COMPLETE"),
    Column("status_reason", Text, nullable=False, default=""),
    Column("input_values", JSON),
    Column("output_values", JSON),
    Column("stack_user_project_id", String(255)),
    Column("created_at", DateTime, nullable=False, default=utcnow),
    Column("updated_at", DateTime),
    Index("ix_api_software_deployment_project_server", "project_id", "server_id"),
)

#: the key pairs made through the compute API (``stoker/api/routes/compute.py``), per project
KEYPAIRS = Table(
    "api_keypair", metadata,
    Column("project_id", String(255), nullable=False),
    Column("name", String(255), nullable=False),
    Column("type", String(16), nullable=False, default="ssh"),
    Column("public_key", Text, nullable=False),
    Column("fingerprint", String(255), nullable=False),
    Column("user_id", String(255)),
    Column("created_at", DateTime, nullable=False, default=utcnow),
    PrimaryKeyConstraint("project_id", "name", name="pk_api_keypair"),
)


def iso(value: datetime | None) -> str | None:
    return value.strftime("%Y-%m-%dT%H:%M:%SZ") if value else None
