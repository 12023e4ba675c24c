"""Plugins updates (``cfy plugins update``): which plugin versions each moved a blueprint's deployments to.

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-28
"""

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "plugins_update",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("project_id", sa.String(255), nullable=False),
        sa.Column("blueprint_id", sa.String(255), nullable=False),
        sa.Column("state", sa.String(32), nullable=False),
        sa.Column("forced", sa.Boolean, nullable=False),
        sa.Column("created_by", sa.String(255), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("execution_id", sa.String(36), nullable=False),
        sa.Column("deployments_to_update", sa.JSON, nullable=False),
        sa.Column("changes", sa.JSON, nullable=False),
    )
    op.create_index("ix_plugins_update_project_id", "plugins_update", ["project_id"])


def downgrade() -> None:
    op.drop_index("ix_plugins_update_project_id", table_name="plugins_update")
    op.drop_table("plugins_update")
