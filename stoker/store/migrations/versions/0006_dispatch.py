"""Tables of distributed actions (``stoker worker``): traversals and their resource counters.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-24
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "dispatch_traversal",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("stack_id", sa.String(36), sa.ForeignKey("stack.id", ondelete="CASCADE",
                                                            name="fk_dispatch_traversal_stack_id_stack"),
                  nullable=False),
        sa.Column("action", sa.String(32), nullable=False),
        sa.Column("status", sa.String(32), nullable=False),
        sa.Column("total", sa.Integer(), nullable=False),
        sa.Column("finished", sa.Integer(), nullable=False),
        sa.Column("stopping", sa.Text(), nullable=True),
        sa.Column("interrupt", sa.Boolean(), nullable=False),
        sa.Column("deadline", sa.DateTime(), nullable=True),
        sa.Column("disable_rollback", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_dispatch_traversal"),
    )
    op.create_index("ix_dispatch_traversal_stack_id", "dispatch_traversal", ["stack_id"])
    op.create_table(
        "dispatch_node",
        sa.Column("traversal_id", sa.String(36),
                  sa.ForeignKey("dispatch_traversal.id", ondelete="CASCADE",
                                name="fk_dispatch_node_traversal_id_dispatch_traversal"), nullable=False),
        sa.Column("resource_id", sa.Integer(), nullable=False),
        sa.Column("waiting", sa.Integer(), nullable=False),
        sa.Column("dependents", sa.JSON(), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("step", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("traversal_id", "resource_id", name="pk_dispatch_node"),
    )


def downgrade() -> None:
    op.drop_table("dispatch_node")
    op.drop_index("ix_dispatch_traversal_stack_id", table_name="dispatch_traversal")
    op.drop_table("dispatch_traversal")
