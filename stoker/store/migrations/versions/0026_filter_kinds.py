"""Saved blueprint filters (``cfy blueprints filters``) beside the deployment ones: a filter's ``kind``.

Revision ID: 0026
Revises: 0025
Create Date: 2026-11-28
"""

import sqlalchemy as sa
from alembic import op

revision = "0026"
down_revision = "0025"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("deployments_filter") as table:
        table.add_column(sa.Column("kind", sa.String(16), nullable=False, server_default="deployments"))
        table.drop_index("ix_deployments_filter_project_id_id")
        table.create_index("ix_deployments_filter_project_id_kind_id", ["project_id", "kind", "id"], unique=True)


def downgrade() -> None:
    with op.batch_alter_table("deployments_filter") as table:
        table.drop_index("ix_deployments_filter_project_id_kind_id")
        table.create_index("ix_deployments_filter_project_id_id", ["project_id", "id"], unique=True)
        table.drop_column("kind")
