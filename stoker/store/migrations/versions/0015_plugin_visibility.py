"""A plugin belongs to a tenant and has a visibility (private / tenant / global), as on Cloudify.

Plugins stored before this were shared by every tenant: they stay ``global``.  A name and version is
one plugin per tenant: the tenant joins the primary key.

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-28
"""

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("plugin_package") as table:
        table.add_column(sa.Column("project_id", sa.String(255), nullable=False, server_default="default"))
        table.add_column(sa.Column("visibility", sa.String(16), nullable=False, server_default="global"))
        table.add_column(sa.Column("created_by", sa.String(255), nullable=True))
        table.drop_constraint("pk_plugin_package", type_="primary")
        table.create_primary_key("pk_plugin_package", ["project_id", "name", "version"])


def downgrade() -> None:
    with op.batch_alter_table("plugin_package") as table:
        table.drop_constraint("pk_plugin_package", type_="primary")
        table.create_primary_key("pk_plugin_package", ["name", "version"])
        table.drop_column("created_by")
        table.drop_column("visibility")
        table.drop_column("project_id")
