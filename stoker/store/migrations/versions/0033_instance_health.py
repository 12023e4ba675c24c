"""Node instance health, as Cloudify 7 keeps it: ``system_properties`` (the last ``check_status`` and
``check_drift`` results) and the two flags read from them, which the deployments' and nodes'
``unavailable_instances`` / ``drifted_instances`` count.

Revision ID: 0033
Revises: 0032
Create Date: 2026-11-28
"""

import sqlalchemy as sa
from alembic import op

revision = "0033"
down_revision = "0032"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("node_instance") as batch:
        batch.add_column(sa.Column("system_properties", sa.JSON(), nullable=False, server_default=sa.text("'{}'")))
        batch.add_column(sa.Column("has_configuration_drift", sa.Boolean(), nullable=False,
                                   server_default=sa.false()))
        batch.add_column(sa.Column("is_status_check_ok", sa.Boolean(), nullable=False, server_default=sa.false()))
    # as Cloudify's own upgrade: instances that were there before are taken to be healthy
    op.execute("UPDATE node_instance SET is_status_check_ok = true")


def downgrade() -> None:
    with op.batch_alter_table("node_instance") as batch:
        batch.drop_column("is_status_check_ok")
        batch.drop_column("has_configuration_drift")
        batch.drop_column("system_properties")
