"""Blueprints and deployments: blueprint, deployment, node, node_instance, deployment_label, secret.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-24
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def _pk(table: str) -> list:
    return [sa.Column("pk", sa.Integer(), autoincrement=True, nullable=False),
            sa.PrimaryKeyConstraint("pk", name=f"pk_{table}")]


def _in_deployment(table: str) -> list:
    return [sa.Column("deployment_pk", sa.Integer(), nullable=False),
            sa.ForeignKeyConstraint(["deployment_pk"], ["deployment.pk"], ondelete="CASCADE",
                                    name=f"fk_{table}_deployment_pk_deployment")]


def upgrade() -> None:
    op.create_table(
        "blueprint", *_pk("blueprint"),
        sa.Column("id", sa.String(255), nullable=False),
        sa.Column("project_id", sa.String(255), nullable=False),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("main_file_name", sa.String(255), nullable=False),
        sa.Column("source_dir", sa.Text(), nullable=True),
        sa.Column("plan", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
    )
    op.create_index("ix_blueprint_project_id_id", "blueprint", ["project_id", "id"], unique=True)
    op.create_table(
        "deployment", *_pk("deployment"),
        sa.Column("id", sa.String(255), nullable=False),
        sa.Column("project_id", sa.String(255), nullable=False),
        sa.Column("blueprint_pk", sa.Integer(), nullable=False),
        sa.Column("display_name", sa.String(255), nullable=False),
        sa.Column("inputs", sa.JSON(), nullable=False),
        sa.Column("plan", sa.JSON(), nullable=False),
        sa.Column("runtime_only_evaluation", sa.Boolean(), nullable=False),
        sa.Column("created_by", sa.String(255), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(["blueprint_pk"], ["blueprint.pk"], name="fk_deployment_blueprint_pk_blueprint"),
    )
    op.create_index("ix_deployment_project_id_id", "deployment", ["project_id", "id"], unique=True)
    op.create_index("ix_deployment_blueprint_pk", "deployment", ["blueprint_pk"])
    op.create_table(
        "node", *_pk("node"), *_in_deployment("node"),
        sa.Column("id", sa.String(255), nullable=False),
        sa.Column("type", sa.String(255), nullable=False),
        sa.Column("definition", sa.JSON(), nullable=False),
        sa.Column("number_of_instances", sa.Integer(), nullable=False),
        sa.Column("host_id", sa.String(255), nullable=True),
    )
    op.create_index("ix_node_deployment_pk_id", "node", ["deployment_pk", "id"], unique=True)
    op.create_table(
        "node_instance", *_pk("node_instance"), *_in_deployment("node_instance"),
        sa.Column("id", sa.String(255), nullable=False),
        sa.Column("node_id", sa.String(255), nullable=False),
        sa.Column("index", sa.Integer(), nullable=False),
        sa.Column("state", sa.String(32), nullable=False),
        sa.Column("runtime_properties", sa.JSON(), nullable=False, server_default=sa.text("'{}'")),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("host_id", sa.String(255), nullable=True),
        sa.Column("scaling_groups", sa.JSON(), nullable=False, server_default=sa.text("'[]'")),
        sa.Column("relationships", sa.JSON(), nullable=False, server_default=sa.text("'[]'")),
    )
    op.create_index("ix_node_instance_deployment_pk_id", "node_instance", ["deployment_pk", "id"], unique=True)
    op.create_index("ix_node_instance_deployment_pk_node_id", "node_instance", ["deployment_pk", "node_id"])
    op.create_table(
        "deployment_label", *_pk("deployment_label"), *_in_deployment("deployment_label"),
        sa.Column("key", sa.String(255), nullable=False),
        sa.Column("value", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
    )
    op.create_index("ix_deployment_label_deployment_pk_key_value", "deployment_label",
                    ["deployment_pk", "key", "value"], unique=True)
    op.create_table(
        "secret", *_pk("secret"),
        sa.Column("project_id", sa.String(255), nullable=False),
        sa.Column("key", sa.String(255), nullable=False),
        sa.Column("value", sa.Text(), nullable=False),
        sa.Column("hidden", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
    )
    op.create_index("ix_secret_project_id_key", "secret", ["project_id", "key"], unique=True)


def downgrade() -> None:
    for table in ("secret", "deployment_label", "node_instance", "node", "deployment", "blueprint"):
        op.drop_table(table)
