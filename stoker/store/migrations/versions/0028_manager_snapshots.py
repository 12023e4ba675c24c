"""Manager snapshots (``cfy snapshots``): whole-server backups kept in the database.

Revision ID: 0028
Revises: 0027
Create Date: 2026-11-28
"""

import sqlalchemy as sa
from alembic import op

revision = "0028"
down_revision = "0027"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "manager_snapshot",
        sa.Column("id", sa.String(255), primary_key=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("error", sa.Text, nullable=False),
        sa.Column("created_by", sa.String(255), nullable=False),
        sa.Column("archive", sa.LargeBinary),
        sa.Column("execution_id", sa.String(36)),
        sa.Column("restore_execution_id", sa.String(36)),
        sa.Column("restored_at", sa.DateTime()),
        sa.Column("restoring", sa.String(255)),
    )


def downgrade() -> None:
    op.drop_table("manager_snapshot")
