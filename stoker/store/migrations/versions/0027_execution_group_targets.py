"""An execution group's target deployment groups (``cfy executions groups set-success-group`` /
``set-failure-group``): the deployments whose execution in the group succeeded, or failed, join them.

By primary key, without a foreign key: deleting a deployment group clears the references to it.

Revision ID: 0027
Revises: 0026
Create Date: 2026-11-28
"""

import sqlalchemy as sa
from alembic import op

revision = "0027"
down_revision = "0026"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("execution_group") as table:
        table.add_column(sa.Column("success_group_pk", sa.Integer, nullable=True))
        table.add_column(sa.Column("failed_group_pk", sa.Integer, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("execution_group") as table:
        table.drop_column("failed_group_pk")
        table.drop_column("success_group_pk")
