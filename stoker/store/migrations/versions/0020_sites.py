"""Sites (``cfy sites``) and the site each deployment is set at.

Revision ID: 0020
Revises: 0019
Create Date: 2026-11-28
"""

import sqlalchemy as sa
from alembic import op

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "site",
        sa.Column("pk", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("project_id", sa.String(255), nullable=False),
        sa.Column("name", sa.String(255), nullable=False),
        sa.Column("latitude", sa.Float),
        sa.Column("longitude", sa.Float),
        sa.Column("visibility", sa.String(16), nullable=False),
        sa.Column("created_by", sa.String(255), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
    )
    op.create_index("ix_site_project_id_name", "site", ["project_id", "name"], unique=True)
    op.create_table(
        "deployment_site",
        sa.Column("deployment_pk", sa.Integer, sa.ForeignKey("deployment.pk", ondelete="CASCADE"), primary_key=True),
        sa.Column("site_pk", sa.Integer, sa.ForeignKey("site.pk", ondelete="CASCADE"), nullable=False),
    )
    op.create_index("ix_deployment_site_site_pk", "deployment_site", ["site_pk"])


def downgrade() -> None:
    op.drop_index("ix_deployment_site_site_pk", table_name="deployment_site")
    op.drop_table("deployment_site")
    op.drop_index("ix_site_project_id_name", table_name="site")
    op.drop_table("site")
