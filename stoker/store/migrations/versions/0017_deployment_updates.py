"""Deployment updates (``cfy deployments update``): what each was asked and the steps it computed.

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-28
"""

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "deployment_update",
        sa.Column("id", sa.String(320), primary_key=True),
        sa.Column("project_id", sa.String(255), nullable=False),
        sa.Column("deployment_id", sa.String(255), nullable=False),
        sa.Column("old_blueprint_id", sa.String(255), nullable=False),
        sa.Column("new_blueprint_id", sa.String(255), nullable=False),
        sa.Column("old_inputs", sa.JSON, nullable=False),
        sa.Column("new_inputs", sa.JSON, nullable=False),
        sa.Column("steps", sa.JSON, nullable=False),
        sa.Column("modified_entity_ids", sa.JSON, nullable=False),
        sa.Column("deployment_plan", sa.JSON, nullable=False),
        sa.Column("parameters", sa.JSON, nullable=False),
        sa.Column("runtime_only_evaluation", sa.Boolean, nullable=False),
        sa.Column("execution_id", sa.String(36), nullable=False),
        sa.Column("state", sa.String(32), nullable=False),
        sa.Column("created_by", sa.String(255), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
    )
    op.create_index("ix_deployment_update_project_id", "deployment_update", ["project_id"])


def downgrade() -> None:
    op.drop_index("ix_deployment_update_project_id", table_name="deployment_update")
    op.drop_table("deployment_update")
