"""Deployment modifications (``cfy deployments modifications``): a scale's change of a deployment's instances.

Revision ID: 0025
Revises: 0024
Create Date: 2026-11-28
"""

import sqlalchemy as sa
from alembic import op

revision = "0025"
down_revision = "0024"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "deployment_modification",
        sa.Column("pk", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("project_id", sa.String(255), nullable=False),
        sa.Column("deployment_pk", sa.Integer, sa.ForeignKey("deployment.pk", ondelete="CASCADE"), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("modified_nodes", sa.JSON, nullable=False),
        sa.Column("node_instances", sa.JSON, nullable=False),
        sa.Column("context", sa.JSON, nullable=False),
        sa.Column("changes", sa.JSON, nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("ended_at", sa.DateTime()),
    )
    op.create_index("ix_deployment_modification_deployment_pk", "deployment_modification", ["deployment_pk"])
    op.create_index("ix_deployment_modification_project_id_id", "deployment_modification", ["project_id", "id"],
                    unique=True)


def downgrade() -> None:
    op.drop_index("ix_deployment_modification_project_id_id", table_name="deployment_modification")
    op.drop_index("ix_deployment_modification_deployment_pk", table_name="deployment_modification")
    op.drop_table("deployment_modification")
