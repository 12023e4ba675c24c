"""Secrets providers (``cfy secrets providers``), the provider a secret's value is read from, and the audit log
of changes made through Cloudify's API (``cfy auditlog``).

Revision ID: 0031
Revises: 0030
Create Date: 2026-11-28
"""

import sqlalchemy as sa
from alembic import op

revision = "0031"
down_revision = "0030"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "secrets_provider",
        sa.Column("pk", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("project_id", sa.String(255), nullable=False),
        sa.Column("name", sa.String(255), nullable=False),
        sa.Column("type", sa.String(32), nullable=False),
        sa.Column("connection_parameters", sa.Text, nullable=False),
        sa.Column("visibility", sa.String(16), nullable=False),
        sa.Column("created_by", sa.String(255), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
    )
    op.create_index("ix_secrets_provider_project_id_name", "secrets_provider", ["project_id", "name"], unique=True)
    with op.batch_alter_table("secret") as batch:
        batch.add_column(sa.Column("provider_name", sa.String(255)))
        batch.add_column(sa.Column("provider_options", sa.Text))
    op.create_table(
        "audit_log",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("ref_table", sa.String(64), nullable=False),
        sa.Column("ref_identifier", sa.JSON, nullable=False),
        sa.Column("operation", sa.String(16), nullable=False),
        sa.Column("creator_name", sa.String(255)),
        sa.Column("execution_id", sa.String(36)),
        sa.Column("created_at", sa.DateTime(), nullable=False),
    )
    op.create_index("ix_audit_log_created_at", "audit_log", ["created_at"])


def downgrade() -> None:
    op.drop_index("ix_audit_log_created_at", table_name="audit_log")
    op.drop_table("audit_log")
    with op.batch_alter_table("secret") as batch:
        batch.drop_column("provider_options")
        batch.drop_column("provider_name")
    op.drop_index("ix_secrets_provider_project_id_name", table_name="secrets_provider")
    op.drop_table("secrets_provider")
