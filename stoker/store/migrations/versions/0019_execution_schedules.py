"""Execution schedules (``cfy deployments schedule``): workflows a deployment runs at the times a rule gives.

Revision ID: 0019
Revises: 0016
Create Date: 2026-11-28
"""

import sqlalchemy as sa
from alembic import op

revision = "0019"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "execution_schedule",
        sa.Column("pk", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("id", sa.String(255), nullable=False),
        sa.Column("project_id", sa.String(255), nullable=False),
        sa.Column("deployment_pk", sa.Integer, sa.ForeignKey("deployment.pk", ondelete="CASCADE"), nullable=False),
        sa.Column("workflow_id", sa.String(255), nullable=False),
        sa.Column("parameters", sa.JSON),
        sa.Column("execution_arguments", sa.JSON, nullable=False),
        sa.Column("since", sa.DateTime()),
        sa.Column("until", sa.DateTime()),
        sa.Column("rule", sa.JSON, nullable=False),
        sa.Column("slip", sa.Integer, nullable=False),
        sa.Column("stop_on_fail", sa.Boolean, nullable=False),
        sa.Column("enabled", sa.Boolean, nullable=False),
        sa.Column("next_occurrence", sa.DateTime()),
        sa.Column("upcoming", sa.JSON, nullable=False),
        sa.Column("latest_execution_id", sa.String(36)),
        sa.Column("created_by", sa.String(255), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
    )
    op.create_index("ix_execution_schedule_next_occurrence", "execution_schedule", ["next_occurrence"])
    op.create_index("ix_execution_schedule_deployment_id", "execution_schedule", ["deployment_pk", "id"], unique=True)


def downgrade() -> None:
    op.drop_index("ix_execution_schedule_deployment_id", table_name="execution_schedule")
    op.drop_index("ix_execution_schedule_next_occurrence", table_name="execution_schedule")
    op.drop_table("execution_schedule")
