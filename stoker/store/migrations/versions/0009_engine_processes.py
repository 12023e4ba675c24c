"""Server processes register and beat, so that the stacks of one that died are taken over at once;
a software config's ``config`` holds any JSON (a structured config's or a component's map), as in Heat.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-24
"""

import json

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

CONFIGS = sa.table("api_software_config", sa.column("id", sa.String), sa.column("config", sa.Text))


def upgrade() -> None:
    op.create_table(
        "engine_process",
        sa.Column("id", sa.String(255), nullable=False),
        sa.Column("started_at", sa.DateTime(), nullable=False),
        sa.Column("heartbeat_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_engine_process"),
    )
    if op.get_bind().dialect.name == "postgresql":
        op.execute("ALTER TABLE api_software_config ALTER COLUMN config TYPE JSON USING to_json(config)")
        return
    _recode(json.dumps)  # each text becomes the JSON of that text
    with op.batch_alter_table("api_software_config") as batch:
        batch.alter_column("config", existing_type=sa.Text(), type_=sa.JSON())


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("ALTER TABLE api_software_config ALTER COLUMN config TYPE TEXT USING config #>> '{}'")
    else:
        with op.batch_alter_table("api_software_config") as batch:
            batch.alter_column("config", existing_type=sa.JSON(), type_=sa.Text())
        _recode(lambda text: _as_text(json.loads(text)))
    op.drop_table("engine_process")


def _recode(change) -> None:
    bind = op.get_bind()
    stored = bind.execute(sa.select(CONFIGS.c.id, CONFIGS.c.config).where(CONFIGS.c.config.is_not(None))).all()
    for row in stored:
        bind.execute(CONFIGS.update().where(CONFIGS.c.id == row.id).values(config=change(row.config)))


def _as_text(value):
    return value if value is None or isinstance(value, str) else json.dumps(value)
