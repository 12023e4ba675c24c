"""Initial schema: templates, stacks, resources, events.

Revision ID: 0001
Revises:
Create Date: 2025-01-01
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

LIVE = sa.text("deleted_at IS NULL")


def upgrade() -> None:
    op.create_table(
        "raw_template",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("content", sa.JSON(), nullable=False),
        sa.Column("files", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_raw_template"),
    )
    op.create_table(
        "stack",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("name", sa.String(255), nullable=False),
        sa.Column("project_id", sa.String(255), nullable=False),
        sa.Column("parent_id", sa.String(36), nullable=True),
        sa.Column("owner_resource", sa.String(255), nullable=True),
        sa.Column("action", sa.String(32), nullable=False),
        sa.Column("status", sa.String(32), nullable=False),
        sa.Column("status_reason", sa.Text(), nullable=False),
        sa.Column("template_id", sa.Integer(), nullable=False),
        sa.Column("previous_template_id", sa.Integer(), nullable=True),
        sa.Column("environment", sa.JSON(), nullable=False),
        sa.Column("files", sa.JSON(), nullable=False),
        sa.Column("parameters", sa.JSON(), nullable=False),
        sa.Column("tags", sa.JSON(), nullable=False),
        sa.Column("timeout_mins", sa.Integer(), nullable=True),
        sa.Column("disable_rollback", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=True),
        sa.Column("deleted_at", sa.DateTime(), nullable=True),
        sa.Column("current_traversal", sa.String(36), nullable=True),
        sa.Column("lock_owner", sa.String(255), nullable=True),
        sa.Column("lock_action", sa.String(32), nullable=True),
        sa.Column("lock_time", sa.DateTime(), nullable=True),
        sa.Column("cancel_requested", sa.Boolean(), nullable=False, server_default=sa.false()),
        sa.PrimaryKeyConstraint("id", name="pk_stack"),
        sa.ForeignKeyConstraint(["parent_id"], ["stack.id"], name="fk_stack_parent_id_stack"),
        sa.ForeignKeyConstraint(["template_id"], ["raw_template.id"], name="fk_stack_template_id_raw_template"),
        sa.ForeignKeyConstraint(
            ["previous_template_id"], ["raw_template.id"], name="fk_stack_previous_template_id_raw_template"
        ),
    )
    op.create_index("ix_stack_parent_id", "stack", ["parent_id"])
    op.create_index(
        "ix_stack_project_id_name_live",
        "stack",
        ["project_id", "name"],
        unique=True,
        sqlite_where=LIVE,
        postgresql_where=LIVE,
    )
    op.create_table(
        "resource",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("stack_id", sa.String(36), nullable=False),
        sa.Column("name", sa.String(255), nullable=False),
        sa.Column("type", sa.String(255), nullable=False),
        sa.Column("action", sa.String(32), nullable=False),
        sa.Column("status", sa.String(32), nullable=False),
        sa.Column("status_reason", sa.Text(), nullable=False),
        sa.Column("physical_resource_id", sa.String(255), nullable=True),
        sa.Column("properties_data", sa.JSON(), nullable=False, server_default=sa.text("'{}'")),
        sa.Column("attributes_data", sa.JSON(), nullable=False, server_default=sa.text("'{}'")),
        sa.Column("rsrc_metadata", sa.JSON(), nullable=False, server_default=sa.text("'{}'")),
        sa.Column("data", sa.JSON(), nullable=False, server_default=sa.text("'{}'")),
        sa.Column("replaced_by", sa.Integer(), nullable=True),
        sa.Column("replaces", sa.Integer(), nullable=True),
        sa.Column("needed_by", sa.JSON(), nullable=False, server_default=sa.text("'[]'")),
        sa.Column("requires", sa.JSON(), nullable=False, server_default=sa.text("'[]'")),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.Column("engine_id", sa.String(255), nullable=True),
        sa.Column("atomic_key", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_resource"),
        sa.ForeignKeyConstraint(
            ["stack_id"], ["stack.id"], name="fk_resource_stack_id_stack", ondelete="CASCADE"
        ),
    )
    op.create_index("ix_resource_stack_id", "resource", ["stack_id"])
    op.create_index("ix_resource_stack_id_name", "resource", ["stack_id", "name"])
    op.create_table(
        "event",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("uuid", sa.String(36), nullable=False),
        sa.Column("stack_id", sa.String(36), nullable=False),
        sa.Column("resource_name", sa.String(255), nullable=True),
        sa.Column("physical_resource_id", sa.String(255), nullable=True),
        sa.Column("resource_type", sa.String(255), nullable=True),
        sa.Column("action", sa.String(32), nullable=False),
        sa.Column("status", sa.String(32), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("properties", sa.JSON(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_event"),
        sa.ForeignKeyConstraint(["stack_id"], ["stack.id"], name="fk_event_stack_id_stack", ondelete="CASCADE"),
        sa.UniqueConstraint("uuid", name="uq_event_uuid"),
    )
    op.create_index("ix_event_stack_id", "event", ["stack_id"])


def downgrade() -> None:
    op.drop_table("event")
    op.drop_table("resource")
    op.drop_table("stack")
    op.drop_table("raw_template")
