"""What a distributed update rolls back to: the stack's inputs before it, kept with its traversal.

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
    op.add_column("dispatch_traversal", sa.Column("previous", sa.JSON(), nullable=True))


def downgrade() -> None:
    op.drop_column("dispatch_traversal", "previous")
