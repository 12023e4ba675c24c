"""Stack snapshots (``stack_snapshot``): a stack's definition and resource data at one moment.

Revision ID: 0012
Revises: 0010
Create Date: 2026-11-27
"""

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "stack_snapshot",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("stack_id", sa.String(36), nullable=False),
        sa.Column("project_id", sa.String(255), nullable=False),
        sa.Column("name", sa.String(255), nullable=True),
        sa.Column("action", sa.String(32), nullable=False),
        sa.Column("status", sa.String(32), nullable=False),
        sa.Column("status_reason", sa.Text(), nullable=False),
        sa.Column("data", sa.JSON(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
    )
    op.create_index("ix_stack_snapshot_stack_id", "stack_snapshot", ["stack_id"])


def downgrade() -> None:
    op.drop_index("ix_stack_snapshot_stack_id", "stack_snapshot")
    op.drop_table("stack_snapshot")
