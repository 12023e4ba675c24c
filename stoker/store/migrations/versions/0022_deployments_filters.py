"""Saved deployment filters (``cfy deployments filters``).

Revision ID: 0022
Revises: 0021
Create Date: 2026-11-28
"""

import sqlalchemy as sa
from alembic import op

revision = "0022"
down_revision = "0021"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "deployments_filter",
        sa.Column("pk", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("project_id", sa.String(255), nullable=False),
        sa.Column("id", sa.String(255), nullable=False),
        sa.Column("filter_rules", sa.JSON, nullable=False),
        sa.Column("visibility", sa.String(16), nullable=False),
        sa.Column("created_by", sa.String(255), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
    )
    op.create_index("ix_deployments_filter_project_id_id", "deployments_filter", ["project_id", "id"], unique=True)


def downgrade() -> None:
    op.drop_index("ix_deployments_filter_project_id_id", table_name="deployments_filter")
    op.drop_table("deployments_filter")
