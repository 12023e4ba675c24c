"""Typed secrets (Cloudify 7's ``cfy secrets create --schema``): the JSON Schema a secret's value is checked
against; such a value is kept as its JSON text.

Revision ID: 0034
Revises: 0033
Create Date: 2026-11-28
"""

import sqlalchemy as sa
from alembic import op

revision = "0034"
down_revision = "0033"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("secret") as batch:
        batch.add_column(sa.Column("schema", sa.JSON()))


def downgrade() -> None:
    with op.batch_alter_table("secret") as batch:
        batch.drop_column("schema")
