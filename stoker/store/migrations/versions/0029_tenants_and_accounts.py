"""Cloudify's tenants and user accounts of their own (``cfy tenants``, ``cfy users``).

A tenant exists without users (``cfy tenants create``, then ``add-user``) and
a user without a tenant (``cfy users create`` without ``-t``), and a user can
be deactivated: ``api_tenant`` and ``api_account`` hold them, ``api_user``
keeps only memberships (the password moves to the account).

Revision ID: 0029
Revises: 0028
Create Date: 2026-11-28
"""

import sqlalchemy as sa
from alembic import op

revision = "0029"
down_revision = "0028"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "api_tenant",
        sa.Column("name", sa.String(255), primary_key=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
    )
    op.create_table(
        "api_account",
        sa.Column("name", sa.String(255), primary_key=True),
        sa.Column("password_hash", sa.String(255), nullable=False),
        sa.Column("active", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
    )
    op.execute("INSERT INTO api_tenant (name, created_at) SELECT tenant, MIN(created_at) FROM api_user "
               "GROUP BY tenant")
    op.execute("INSERT INTO api_account (name, password_hash, active, created_at) SELECT name, MIN(password_hash), "
               "TRUE, MIN(created_at) FROM api_user GROUP BY name")
    with op.batch_alter_table("api_user") as batch:
        batch.drop_column("password_hash")


def downgrade() -> None:
    with op.batch_alter_table("api_user") as batch:
        batch.add_column(sa.Column("password_hash", sa.String(255), nullable=False, server_default=""))
    op.execute("UPDATE api_user SET password_hash = (SELECT password_hash FROM api_account "
               "WHERE api_account.name = api_user.name)")
    op.drop_table("api_account")
    op.drop_table("api_tenant")
