"""Distributed updates, adopts and executions: what the action was given (an update's inputs
before it, an adopt's resources), kept with its traversal; a traversal of an execution's steps
(no stack).

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-24
"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("dispatch_traversal") as batch:
        batch.add_column(sa.Column("given", sa.JSON(), nullable=True))
        batch.add_column(sa.Column("execution_pk", sa.Integer(), nullable=True))
        batch.create_foreign_key("fk_dispatch_traversal_execution", "execution", ["execution_pk"], ["pk"],
                                 ondelete="CASCADE")
        batch.alter_column("stack_id", existing_type=sa.String(36), nullable=True)


def downgrade() -> None:
    with op.batch_alter_table("dispatch_traversal") as batch:
        batch.alter_column("stack_id", existing_type=sa.String(36), nullable=False)
        batch.drop_constraint("fk_dispatch_traversal_execution", type_="foreignkey")
        batch.drop_column("execution_pk")
        batch.drop_column("given")
