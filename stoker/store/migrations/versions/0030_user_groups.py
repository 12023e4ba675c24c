"""Cloudify's user groups (``cfy user-groups``, ``cfy tenants add-user-group``).

A group has a system role and an optional LDAP name (``api_group``), a role in
each tenant it is added to (``api_group_tenant``) and its members
(``api_group_user``); a member holds the highest of its own and its groups'
roles in a tenant.

Revision ID: 0030
Revises: 0029
Create Date: 2026-11-28
"""

import sqlalchemy as sa
from alembic import op

revision = "0030"
down_revision = "0029"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "api_group",
        sa.Column("name", sa.String(255), primary_key=True),
        sa.Column("role", sa.String(32), nullable=False),
        sa.Column("ldap_dn", sa.String(1024)),
        sa.Column("created_at", sa.DateTime(), nullable=False),
    )
    op.create_table(
        "api_group_tenant",
        sa.Column("group_name", sa.String(255), nullable=False),
        sa.Column("tenant", sa.String(255), nullable=False),
        sa.Column("role", sa.String(32), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("group_name", "tenant", name="pk_api_group_tenant"),
    )
    op.create_table(
        "api_group_user",
        sa.Column("group_name", sa.String(255), nullable=False),
        sa.Column("user_name", sa.String(255), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("group_name", "user_name", name="pk_api_group_user"),
    )
    op.create_index("ix_api_group_user_user_name", "api_group_user", ["user_name"])


def downgrade() -> None:
    op.drop_index("ix_api_group_user_user_name", table_name="api_group_user")
    op.drop_table("api_group_user")
    op.drop_table("api_group_tenant")
    op.drop_table("api_group")
