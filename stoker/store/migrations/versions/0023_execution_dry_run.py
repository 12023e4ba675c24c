"""Executions started as dry runs (``cfy executions start --dry-run``: Cloudify's ``is_dry_run``).

Revision ID: 0023
Revises: 0022
Create Date: 2026-11-28
"""

import sqlalchemy as sa
from alembic import op

revision = "0023"
down_revision = "0022"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("execution") as batch:
        batch.add_column(sa.Column("is_dry_run", sa.Boolean(), nullable=False, server_default=sa.false()))


def downgrade() -> None:
    with op.batch_alter_table("execution") as batch:
        batch.drop_column("is_dry_run")
