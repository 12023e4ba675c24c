"""A blueprint's icon (``cfy blueprints set-icon``): the PNG image, kept with the blueprint as Cloudify keeps it
with the blueprint's files.

Revision ID: 0035
Revises: 0034
Create Date: 2026-11-28
"""

import sqlalchemy as sa
from alembic import op

revision = "0035"
down_revision = "0034"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("blueprint") as batch:
        batch.add_column(sa.Column("icon", sa.LargeBinary(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("blueprint") as batch:
        batch.drop_column("icon")
