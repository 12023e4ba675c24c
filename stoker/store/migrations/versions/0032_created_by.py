"""Who started an execution and who made a deployment modification (Cloudify's ``created_by``): the user of
the request (``cfy executions start``, a scale's modification, ``POST /deployment-modifications``); rows made
before this know none and say ``admin``, as they were shown.

Revision ID: 0032
Revises: 0031
Create Date: 2026-11-28
"""

import sqlalchemy as sa
from alembic import op

revision = "0032"
down_revision = "0031"
branch_labels = None
depends_on = None

TABLES = ("execution", "deployment_modification")


def upgrade() -> None:
    for name in TABLES:
        with op.batch_alter_table(name) as table:
            table.add_column(sa.Column("created_by", sa.String(255), nullable=False, server_default="admin"))


def downgrade() -> None:
    for name in TABLES:
        with op.batch_alter_table(name) as table:
            table.drop_column("created_by")
