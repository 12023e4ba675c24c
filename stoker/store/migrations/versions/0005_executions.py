"""Executions of workflows on deployments, and their events and logs.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-24
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "execution",
        sa.Column("pk", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("project_id", sa.String(255), nullable=False),
        sa.Column("deployment_pk", sa.Integer(), nullable=False),
        sa.Column("workflow_id", sa.String(255), nullable=False),
        sa.Column("status", sa.String(32), nullable=False),
        sa.Column("parameters", sa.JSON(), nullable=False),
        sa.Column("error", sa.Text(), nullable=False),
        sa.Column("owner", sa.String(255), nullable=True),
        sa.Column("heartbeat_at", sa.DateTime(), nullable=True),
        sa.Column("cancel_request", sa.String(16), nullable=True),
        sa.Column("resume_data", sa.JSON(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("started_at", sa.DateTime(), nullable=True),
        sa.Column("ended_at", sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint("pk", name="pk_execution"),
        sa.ForeignKeyConstraint(["deployment_pk"], ["deployment.pk"], ondelete="CASCADE",
                                name="fk_execution_deployment_pk_deployment"),
    )
    op.create_index("ix_execution_project_id_id", "execution", ["project_id", "id"], unique=True)
    op.create_index("ix_execution_deployment_pk", "execution", ["deployment_pk"])
    op.create_table(
        "execution_event",
        sa.Column("pk", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("execution_pk", sa.Integer(), nullable=False),
        sa.Column("timestamp", sa.DateTime(), nullable=False),
        sa.Column("type", sa.String(16), nullable=False),
        sa.Column("event_type", sa.String(64), nullable=True),
        sa.Column("level", sa.String(16), nullable=True),
        sa.Column("node_id", sa.String(255), nullable=True),
        sa.Column("node_instance_id", sa.String(255), nullable=True),
        sa.Column("operation", sa.String(255), nullable=True),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column("context", sa.JSON(), nullable=True),
        sa.PrimaryKeyConstraint("pk", name="pk_execution_event"),
        sa.ForeignKeyConstraint(["execution_pk"], ["execution.pk"], ondelete="CASCADE",
                                name="fk_execution_event_execution_pk_execution"),
    )
    op.create_index("ix_execution_event_execution_pk", "execution_event", ["execution_pk"])


def downgrade() -> None:
    op.drop_table("execution_event")
    op.drop_table("execution")
