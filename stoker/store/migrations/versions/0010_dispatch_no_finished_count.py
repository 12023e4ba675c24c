"""A traversal keeps no count of its finished nodes: nothing read it (its end is found from its
open nodes, ``ix_dispatch_node_open``).

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-24
"""

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("dispatch_traversal") as batch:
        batch.drop_column("finished")


def downgrade() -> None:
    with op.batch_alter_table("dispatch_traversal") as batch:
        batch.add_column(sa.Column("finished", sa.Integer(), nullable=False, server_default="0"))
