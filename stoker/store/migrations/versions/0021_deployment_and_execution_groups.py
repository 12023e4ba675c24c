"""Deployment groups and execution groups (``cfy deployments groups``, ``cfy executions groups``).

Revision ID: 0021
Revises: 0020
Create Date: 2026-11-28
"""

import sqlalchemy as sa
from alembic import op

revision = "0021"
down_revision = "0020"
branch_labels = None
depends_on = None


def upgrade() -> None:
    _group("deployment_group", 255,
           sa.Column("description", sa.Text),
           sa.Column("default_blueprint_id", sa.String(255)),
           sa.Column("default_inputs", sa.JSON, nullable=False),
           sa.Column("labels", sa.JSON, nullable=False),
           sa.Column("creation_counter", sa.Integer, nullable=False))
    _members("deployment_group", "deployment")
    _group("execution_group", 36,
           sa.Column("deployment_group_id", sa.String(255)),
           sa.Column("workflow_id", sa.String(255), nullable=False),
           sa.Column("concurrency", sa.Integer, nullable=False),
           sa.Column("force", sa.Boolean, nullable=False),
           sa.Column("logs", sa.JSON, nullable=False))
    _members("execution_group", "execution")


def _group(name: str, id_length: int, *columns: sa.Column) -> None:
    """A tenant's named group: its own ``columns`` between the id and who made it when."""
    op.create_table(
        name,
        sa.Column("pk", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("id", sa.String(id_length), nullable=False),
        sa.Column("project_id", sa.String(255), nullable=False),
        *columns,
        sa.Column("created_by", sa.String(255), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
    )
    op.create_index(f"ix_{name}_project_id_id", name, ["project_id", "id"], unique=True)


def _members(group: str, member: str) -> None:
    """``<group>_member``: which ``<member>`` rows a group holds."""
    op.create_table(
        f"{group}_member",
        sa.Column("group_pk", sa.Integer, sa.ForeignKey(f"{group}.pk", ondelete="CASCADE",
                                                        name=f"fk_{group}_member_group_pk_{group}"), primary_key=True),
        sa.Column(f"{member}_pk", sa.Integer, sa.ForeignKey(f"{member}.pk", ondelete="CASCADE",
                                                            name=f"fk_{group}_member_{member}_pk_{member}"),
                  primary_key=True),
    )
    op.create_index(f"ix_{group}_member_{member}_pk", f"{group}_member", [f"{member}_pk"])


def downgrade() -> None:
    for table in ("execution_group_member", "execution_group", "deployment_group_member", "deployment_group"):
        op.drop_table(table)
