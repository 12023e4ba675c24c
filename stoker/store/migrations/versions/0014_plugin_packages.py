"""Uploaded plugins in the database (``plugin_package``): every worker sharing it can run them.

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-28
"""

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "plugin_package",
        sa.Column("name", sa.String(128), nullable=False),
        sa.Column("version", sa.String(128), nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("archive", sa.LargeBinary(), nullable=False),
        sa.Column("uploaded_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("name", "version", name="pk_plugin_package"),
    )


def downgrade() -> None:
    op.drop_table("plugin_package")
