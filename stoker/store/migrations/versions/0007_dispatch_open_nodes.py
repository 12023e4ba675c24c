"""An index of the dispatch nodes not done yet: a traversal ends when none is left.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-24
"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_dispatch_node_open", "dispatch_node", ["traversal_id"],
                    postgresql_where=sa.text("state <> 'DONE'"), sqlite_where=sa.text("state <> 'DONE'"))


def downgrade() -> None:
    op.drop_index("ix_dispatch_node_open", table_name="dispatch_node")
