"""The key pairs a project made through the compute API (``api_keypair``), as Nova keeps them.

They join the cloud the ``nova.keypair`` constraint checks (``resources/openstack/inventory.py``)
while they exist.
"""

from __future__ import annotations

from sqlalchemy import delete, select
from sqlalchemy.engine import Engine as SAEngine
from sqlalchemy.exc import IntegrityError

from stoker.errors import Conflict, NotFound
from stoker.store.api_tables import KEYPAIRS, iso, utcnow


class KeypairStore:
    def __init__(self, engine: SAEngine):
        self.engine = engine
        self._writer = engine.execution_options(stoker_write=True)

    def create(self, project: str, name: str, public_key: str, fingerprint: str, key_type: str,
               user_id: str | None) -> dict:
        try:
            with self._writer.begin() as conn:
                conn.execute(KEYPAIRS.insert().values(
                    project_id=project, name=name, type=key_type, public_key=public_key,
                    fingerprint=fingerprint, user_id=user_id, created_at=utcnow()))
        except IntegrityError:
            raise Conflict(f"Key pair '{name}' already exists.") from None
        return self.get(project, name)

    def get(self, project: str, name: str) -> dict:
        query = select(KEYPAIRS).where(KEYPAIRS.c.project_id == project, KEYPAIRS.c.name == name)
        with self.engine.connect() as conn:
            row = conn.execute(query).one_or_none()
        if row is None:
            raise NotFound(f"Keypair {name} not found for project {project}")
        return _keypair(row)

    def exists(self, project: str, name: str) -> bool:
        query = select(KEYPAIRS.c.name).where(KEYPAIRS.c.project_id == project, KEYPAIRS.c.name == name)
        with self.engine.connect() as conn:
            return conn.execute(query).first() is not None

    def list(self, project: str) -> list[dict]:
        query = select(KEYPAIRS).where(KEYPAIRS.c.project_id == project).order_by(KEYPAIRS.c.name)
        with self.engine.connect() as conn:
            return [_keypair(row) for row in conn.execute(query)]

    def delete(self, project: str, name: str) -> None:
        with self._writer.begin() as conn:
            gone = conn.execute(delete(KEYPAIRS).where(KEYPAIRS.c.project_id == project,
                                                       KEYPAIRS.c.name == name)).rowcount
        if not gone:
            raise NotFound(f"Keypair {name} not found for project {project}")


def _keypair(row) -> dict:
    return {"name": row.name, "type": row.type, "public_key": row.public_key, "fingerprint": row.fingerprint,
            "user_id": row.user_id, "created_at": iso(row.created_at)}
