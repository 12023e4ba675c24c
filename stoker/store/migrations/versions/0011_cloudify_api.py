"""Cloudify's REST API: users with passwords and roles per tenant, tokens issued to a user, and a
blueprint's files kept with it (so an edit of the folder after upload changes nothing that runs).

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-27
"""

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "api_user",
        sa.Column("name", sa.String(255), nullable=False),
        sa.Column("tenant", sa.String(255), nullable=False),
        sa.Column("role", sa.String(32), nullable=False),
        sa.Column("password_hash", sa.String(255), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("name", "tenant", name="pk_api_user"),
    )
    with op.batch_alter_table("api_token") as batch:
        batch.add_column(sa.Column("user_name", sa.String(255)))
    with op.batch_alter_table("blueprint") as batch:
        batch.add_column(sa.Column("archive", sa.LargeBinary()))
        batch.add_column(sa.Column("archive_sha256", sa.String(64)))


def downgrade() -> None:
    with op.batch_alter_table("blueprint") as batch:
        batch.drop_column("archive_sha256")
        batch.drop_column("archive")
    with op.batch_alter_table("api_token") as batch:
        batch.drop_column("user_name")
    op.drop_table("api_user")
