"""Cloudify's visibility (private / tenant / global) on blueprints, deployments and secrets, and who made a
blueprint or a secret (a private one is its creator's and the tenant managers').

Rows stored before this are ``tenant``, as they were seen; their creator ``admin``, as they were shown.

Revision ID: 0024
Revises: 0023
Create Date: 2026-11-28
"""

import sqlalchemy as sa
from alembic import op

revision = "0024"
down_revision = "0023"
branch_labels = None
depends_on = None

#: (table, whether it gains ``created_by``): a deployment has one already
_TABLES = (("blueprint", True), ("deployment", False), ("secret", True))


def upgrade() -> None:
    for name, creator in _TABLES:
        with op.batch_alter_table(name) as table:
            table.add_column(sa.Column("visibility", sa.String(16), nullable=False, server_default="tenant"))
            if creator:
                table.add_column(sa.Column("created_by", sa.String(255), nullable=False, server_default="admin"))


def downgrade() -> None:
    for name, creator in _TABLES:
        with op.batch_alter_table(name) as table:
            if creator:
                table.drop_column("created_by")
            table.drop_column("visibility")
