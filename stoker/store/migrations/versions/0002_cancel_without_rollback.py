"""Remember whether a cancel asked for a rollback (Heat's cancel_without_rollback).

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("stack") as batch:
        batch.add_column(sa.Column("cancel_rollback", sa.Boolean(), nullable=False, server_default=sa.true()))


def downgrade() -> None:
    with op.batch_alter_table("stack") as batch:
        batch.drop_column("cancel_rollback")
