"""Reading and writing blueprints, deployments, nodes, node instances, labels and secrets.

Core statements, rows handed out as plain dicts: a deployment of 10,000
node instances is written in one transaction with one executemany, and read
back without building one ORM object per row.  Everything a deployment
creation writes goes in one transaction, so a failure stores nothing.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

from sqlalchemy import Table, case, delete, func, insert, or_, select, update
from sqlalchemy.exc import IntegrityError

from stoker.errors import Conflict, NotFound, StaleWrite
from stoker.store.bulk import execute_many, insert_of
from stoker.store.instance_health import flags
from stoker.store.locks import execution_gone
from stoker.store.records import Records
from stoker.store.models import (ACTIVE_EXECUTION, Blueprint, Deployment, DeploymentLabel, Execution, Node, NodeInstance,
                                 Secret, utcnow)

BLUEPRINTS: Table = Blueprint.__table__  # type: ignore[assignment]
DEPLOYMENTS: Table = Deployment.__table__  # type: ignore[assignment]
NODES: Table = Node.__table__  # type: ignore[assignment]
INSTANCES: Table = NodeInstance.__table__  # type: ignore[assignment]
LABELS: Table = DeploymentLabel.__table__  # type: ignore[assignment]
SECRETS: Table = Secret.__table__  # type: ignore[assignment]
#: an execution's ``resume_data`` key: the records of the scripts worker processes run for it, one per process
WORKER_COMMANDS = "worker_commands"


def seen_from(table: Table, project_id: str) -> tuple:
    """(where, order) of the rows ``project_id`` sees: its own and the global ones of every project, its own
    first (a global one of another project is read, never changed, from here)."""
    return (or_(table.c.project_id == project_id, table.c.visibility == "global"),
            (table.c.project_id == project_id).desc())


def id_of(table: Table) -> str:
    """The column users name a row of ``table`` by: a secret's key, a blueprint's or deployment's id."""
    return "id" if "id" in table.c else "key"


#: what Cloudify calls a row of each table in its messages
_KINDS = {"blueprint": "Blueprint", "deployment": "Deployment", "secret": "Secret"}


def unique_then_global(conn: Any, table: Table, row: dict) -> None:
    """Cloudify's rule for an id: one ``row`` per project, and a global one is the only one of its id anywhere
    (409 ``Conflict`` in its words, for a new row and for one made global)."""
    name, visibility = row[id_of(table)], row.get("visibility", "tenant")
    others = select(table.c.pk).where(table.c[id_of(table)] == name, table.c.project_id != row["project_id"])
    if visibility != "global":
        others = others.where(table.c.visibility == "global")
    if conn.execute(others.limit(1)).first() is None:
        return
    what = _KINDS[table.name]
    if visibility == "global":
        raise Conflict(f"Can't set or create the resource <{what} id=`{name}`>, its visibility can't be global "
                       "because it also exists in other tenants")
    raise Conflict(f"<{what} id=`{name}`> already exists on {row['project_id']} or with global visibility")


def recorded_commands(resume_data: Any) -> list[dict]:
    """The script records an execution keeps (``processes.marked_record``): the one of the process
    that started or resumed it, and one per worker process that ran its steps."""
    if not isinstance(resume_data, dict):
        return []
    started = [resume_data["commands"]] if resume_data.get("commands") else []
    return started + [r for r in resume_data.get(WORKER_COMMANDS) or [] if isinstance(r, dict)]


class BlueprintRecords(Records):
    """The blueprint half of the store, over the same database as ``Store``."""

    def __init__(self, store: Any):
        super().__init__(store)
        self.engine = store.engine

    # -- blueprints -----------------------------------------------------------------------------
    def add_blueprint(self, project_id: str, blueprint_id: str, **fields: Any) -> dict:
        row = {"project_id": project_id, "id": blueprint_id, "created_at": utcnow(), **fields}
        try:
            with self._write() as conn:
                unique_then_global(conn, BLUEPRINTS, row)
                conn.execute(insert(BLUEPRINTS).values(**row))
        except IntegrityError:
            raise Conflict(f"Blueprint {blueprint_id} already exists") from None
        return self.get_blueprint(project_id, blueprint_id)

    @staticmethod
    def _blueprints() -> Any:
        """Every column but the archive and the icon (read on their own: ``blueprint_archive``, ``blueprint_icon``)."""
        return select(*[c for c in BLUEPRINTS.c if c.name not in ("archive", "icon")])

    def get_blueprint(self, project_id: str, blueprint_id: str) -> dict:
        """The project's blueprint of that id, else a global one (deployments are made from it)."""
        where, own_first = seen_from(BLUEPRINTS, project_id)
        with self._read() as conn:
            rows = self._rows(conn.execute(self._blueprints().where(where, BLUEPRINTS.c.id == blueprint_id)
                                           .order_by(own_first).limit(1)))
        if not rows:
            raise NotFound(f"Blueprint {blueprint_id} not found")
        return rows[0]

    def blueprint_archive(self, blueprint_pk: int) -> bytes | None:
        """The blueprint's files as uploaded (a tar.gz), or None for a blueprint stored without them."""
        with self._read() as conn:
            return conn.execute(select(BLUEPRINTS.c.archive).where(BLUEPRINTS.c.pk == blueprint_pk)).scalar()

    def blueprint_icon(self, blueprint_pk: int) -> bytes | None:
        with self._read() as conn:
            return conn.execute(select(BLUEPRINTS.c.icon).where(BLUEPRINTS.c.pk == blueprint_pk)).scalar()

    def set_blueprint_icon(self, blueprint_pk: int, icon: bytes | None) -> None:
        with self._write() as conn:
            conn.execute(update(BLUEPRINTS).where(BLUEPRINTS.c.pk == blueprint_pk).values(icon=icon))

    def list_blueprints(self, project_id: str, seen: bool = False) -> list[dict]:
        """The project's blueprints; ``seen``: with the global ones of other projects."""
        where = seen_from(BLUEPRINTS, project_id)[0] if seen else BLUEPRINTS.c.project_id == project_id
        with self._read() as conn:
            return self._rows(conn.execute(self._blueprints().where(where)
                                           .order_by(BLUEPRINTS.c.created_at, BLUEPRINTS.c.id)))

    def delete_blueprint(self, blueprint: dict) -> None:
        """Refused while a deployment uses the blueprint (another tenant's too, of a global one)."""
        blueprint_id = blueprint["id"]
        with self._write() as conn:
            users = conn.execute(select(DEPLOYMENTS.c.id).where(DEPLOYMENTS.c.blueprint_pk == blueprint["pk"])
                                 .order_by(DEPLOYMENTS.c.id)).scalars().all()
            if users:
                raise Conflict(f"Blueprint {blueprint_id} is used by deployments: {', '.join(users)}")
            conn.execute(delete(BLUEPRINTS).where(BLUEPRINTS.c.pk == blueprint["pk"]))

    def set_visibility(self, table: Table, row: dict, visibility: str) -> None:
        """``row`` of ``table`` (a blueprint, a deployment, a secret) made ``visibility``; global: refused
        (409) while another project holds one of its id."""
        with self._write() as conn:
            unique_then_global(conn, table, {**row, "visibility": visibility})
            conn.execute(update(table).where(table.c.pk == row["pk"]).values(visibility=visibility))

    def global_elsewhere(self, table: Table, project_id: str, wanted: str | None = None) -> list[tuple[str, str]]:
        """(project, id) of the global rows of ``table`` other projects hold (of id ``wanted`` only)."""
        name = table.c[id_of(table)]
        query = select(table.c.project_id, name).where(table.c.visibility == "global", table.c.project_id != project_id)
        if wanted is not None:
            query = query.where(name == wanted)
        with self._read() as conn:
            return [tuple(row) for row in conn.execute(query.order_by(table.c.project_id, name))]

    def set_owner(self, table: Table, row: dict, creator: str) -> None:
        with self._write() as conn:
            conn.execute(update(table).where(table.c.pk == row["pk"]).values(created_by=creator))

    def set_blueprint_plan(self, blueprint_pk: int, plan: dict) -> None:
        with self._write() as conn:
            conn.execute(update(BLUEPRINTS).where(BLUEPRINTS.c.pk == blueprint_pk).values(plan=plan))

    # -- deployments ----------------------------------------------------------------------------
    def add_deployment(self, project_id: str, deployment_id: str, fields: dict, nodes: list[dict],
                       instances: list[dict], labels: Iterable[tuple[str, str]]) -> dict:
        """The deployment with its nodes, instances and labels, all or nothing."""
        now = utcnow()
        try:
            with self._write() as conn:
                unique_then_global(conn, DEPLOYMENTS, {"project_id": project_id, "id": deployment_id, **fields})
                pk = conn.execute(insert(DEPLOYMENTS).values(project_id=project_id, id=deployment_id,
                                                             created_at=now, **fields)
                                  .returning(DEPLOYMENTS.c.pk)).scalar_one()
                if nodes:
                    conn.execute(insert(NODES), [{"deployment_pk": pk, **n} for n in nodes])
                if instances:
                    rows = [{"deployment_pk": pk, "version": 1, **i} for i in instances]
                    execute_many(conn, insert_of(INSTANCES, tuple(rows[0])), rows, INSTANCES.c.get)
                rows = [{"deployment_pk": pk, "key": k, "value": v, "created_at": now} for k, v in labels]
                if rows:
                    conn.execute(insert(LABELS), rows)
        except IntegrityError:
            if self.deployment_exists(project_id, deployment_id):
                raise Conflict(f"Deployment {deployment_id} already exists") from None
            raise
        return self.get_deployment(project_id, deployment_id)

    def deployment_exists(self, project_id: str, deployment_id: str) -> bool:
        try:
            self.get_deployment(project_id, deployment_id)
        except NotFound:
            return False
        return True

    def _deployments(self) -> Any:
        return select(DEPLOYMENTS, BLUEPRINTS.c.id.label("blueprint_id"),
                      BLUEPRINTS.c.visibility.label("blueprint_visibility")).join(
            BLUEPRINTS, BLUEPRINTS.c.pk == DEPLOYMENTS.c.blueprint_pk)

    def get_deployment(self, project_id: str, deployment_id: str) -> dict:
        with self._read() as conn:
            rows = self._rows(conn.execute(self._deployments().where(
                DEPLOYMENTS.c.project_id == project_id, DEPLOYMENTS.c.id == deployment_id)))
        if not rows:
            raise NotFound(f"Deployment {deployment_id} not found")
        return rows[0]

    def list_deployments(self, project_id: str, blueprint_id: str | None = None) -> list[dict]:
        query = self._deployments().where(DEPLOYMENTS.c.project_id == project_id)
        if blueprint_id is not None:
            query = query.where(BLUEPRINTS.c.id == blueprint_id)
        with self._read() as conn:
            return self._rows(conn.execute(query.order_by(DEPLOYMENTS.c.created_at, DEPLOYMENTS.c.id)))

    def delete_deployment(self, project_id: str, deployment_id: str) -> None:
        """Delete a deployment and what it holds; refused while an execution runs on it."""
        deployment = self.get_deployment(project_id, deployment_id)
        executions: Table = Execution.__table__  # type: ignore[assignment]
        with self._write() as conn:
            for running in self._rows(conn.execute(select(executions).where(
                    executions.c.deployment_pk == deployment["pk"], executions.c.status.in_(ACTIVE_EXECUTION)))):
                if not execution_gone(running):
                    raise Conflict(f"Deployment {deployment_id} is running execution {running['id']} "
                                   f"({running['workflow_id']}); cancel it or wait for it to end before deleting")
            for table in (LABELS, INSTANCES, NODES):
                conn.execute(delete(table).where(table.c.deployment_pk == deployment["pk"]))
            conn.execute(delete(DEPLOYMENTS).where(DEPLOYMENTS.c.pk == deployment["pk"]))

    def execution_commands(self, deployment_pk: int) -> list[dict]:
        """The script records (``processes.marked_record``) of the deployment's executions that did not end well."""
        executions: Table = Execution.__table__  # type: ignore[assignment]
        with self._read() as conn:
            rows = conn.execute(select(executions.c.resume_data).where(
                executions.c.deployment_pk == deployment_pk, executions.c.status != "terminated")).scalars()
            return [record for data in rows for record in recorded_commands(data)]

    # -- nodes and node instances ---------------------------------------------------------------
    def nodes(self, deployment_pk: int) -> list[dict]:
        with self._read() as conn:
            return self._rows(conn.execute(select(NODES).where(NODES.c.deployment_pk == deployment_pk)
                                           .order_by(NODES.c.pk)))

    def node_instances(self, deployment_pk: int, node_id: str | None = None) -> list[dict]:
        """In creation order."""
        query = select(INSTANCES).where(INSTANCES.c.deployment_pk == deployment_pk)
        if node_id is not None:
            query = query.where(INSTANCES.c.node_id == node_id)
        with self._read() as conn:
            return self._rows(conn.execute(query.order_by(INSTANCES.c.pk)))

    def made_node_instances(self, deployment_pk: int, columns: tuple[str, ...], make: Callable[..., Any]) -> list:
        """``make(*values)`` of each instance's ``columns``, in creation order: no dict kept per row (an
        execution of 100,000 instances reads them all)."""
        query = (select(*(INSTANCES.c[name] for name in columns)).where(INSTANCES.c.deployment_pk == deployment_pk)
                 .order_by(INSTANCES.c.pk))
        with self._read() as conn:
            return [make(*row) for row in conn.execute(query)]

    def find_node_instances(self, project_id: str, instance_id: str) -> list[dict]:
        """Instances with this id in any deployment of the project (with ``deployment_id``)."""
        query = (select(INSTANCES, DEPLOYMENTS.c.id.label("deployment_id"))
                 .join(DEPLOYMENTS, DEPLOYMENTS.c.pk == INSTANCES.c.deployment_pk)
                 .where(DEPLOYMENTS.c.project_id == project_id, INSTANCES.c.id == instance_id))
        with self._read() as conn:
            return self._rows(conn.execute(query))

    def update_node_instance(self, deployment_pk: int, instance_id: str, expected_version: int | None = None,
                             **fields: Any) -> int:
        """Write ``state`` / ``runtime_properties`` / ``system_properties`` (with the flags read from them);
        returns the new version.

        With ``expected_version`` the write happens only if nobody wrote since
        that version was read (a higher one passes, as on Cloudify: ``cfy node-instances update-runtime``
        sends the version it read plus one); otherwise ``StaleWrite``.
        """
        unknown = set(fields) - {"state", "runtime_properties", "system_properties"}
        if unknown:
            raise TypeError(f"node instances have no writable field(s) {', '.join(sorted(unknown))}")
        if "system_properties" in fields:
            fields = {**fields, **flags(fields["system_properties"])}
        where = [INSTANCES.c.deployment_pk == deployment_pk, INSTANCES.c.id == instance_id]
        if expected_version is not None:
            where.append(INSTANCES.c.version <= expected_version)
        with self._write() as conn:
            version = conn.execute(update(INSTANCES).where(*where)
                                   .values(**fields, version=INSTANCES.c.version + 1)
                                   .returning(INSTANCES.c.version)).scalar()
            if version is not None:
                return version
            current = conn.execute(select(INSTANCES.c.version).where(*where[:2])).scalar()
        if current is None:
            raise NotFound(f"Node instance {instance_id} not found")
        raise StaleWrite(f"Node instance {instance_id} was changed by someone else "
                         f"(version {current}, expected {expected_version})")

    # -- labels ---------------------------------------------------------------------------------
    def labels(self, deployment_pk: int) -> list[dict]:
        with self._read() as conn:
            return self._rows(conn.execute(select(LABELS.c.key, LABELS.c.value, LABELS.c.created_at)
                                           .where(LABELS.c.deployment_pk == deployment_pk)
                                           .order_by(LABELS.c.key, LABELS.c.value)))

    def labelled(self, project_id: str, key: str) -> list[tuple[str, str]]:
        """(deployment id, value) of every label ``key`` of the tenant's deployments, in one query."""
        with self._read() as conn:
            return [tuple(row) for row in conn.execute(
                select(DEPLOYMENTS.c.id, LABELS.c.value).join(LABELS, LABELS.c.deployment_pk == DEPLOYMENTS.c.pk)
                .where(DEPLOYMENTS.c.project_id == project_id, LABELS.c.key == key)
                .order_by(DEPLOYMENTS.c.id, LABELS.c.value))]

    def not_all_started(self, project_id: str) -> set[str]:
        """The tenant's deployments having a node instance that is not ``started`` (Cloudify's inactive)."""
        with self._read() as conn:
            return set(conn.execute(select(DEPLOYMENTS.c.id).where(
                DEPLOYMENTS.c.project_id == project_id,
                select(INSTANCES.c.pk).where(INSTANCES.c.deployment_pk == DEPLOYMENTS.c.pk,
                                             INSTANCES.c.state != "started").exists())).scalars())

    def health_counts(self, project_id: str, deployment_pk: int | None = None) -> dict[str, dict[str, int]]:
        """Cloudify's ``drifted_instances`` / ``unavailable_instances``: per deployment of the tenant, or per node
        of one deployment (``deployment_pk``), its instances with a configuration drift and those whose status
        check did not pass."""
        unavailable = func.sum(case((INSTANCES.c.is_status_check_ok, 0), else_=1))
        drifted = func.sum(case((INSTANCES.c.has_configuration_drift, 1), else_=0))
        if deployment_pk is None:
            query = (select(DEPLOYMENTS.c.id, drifted, unavailable)
                     .join(INSTANCES, INSTANCES.c.deployment_pk == DEPLOYMENTS.c.pk)
                     .where(DEPLOYMENTS.c.project_id == project_id).group_by(DEPLOYMENTS.c.id))
        else:
            query = (select(INSTANCES.c.node_id, drifted, unavailable).where(INSTANCES.c.deployment_pk == deployment_pk)
                     .group_by(INSTANCES.c.node_id))
        with self._read() as conn:
            return {key: {"drifted_instances": int(d or 0), "unavailable_instances": int(u or 0)}
                    for key, d, u in conn.execute(query)}

    def add_labels(self, deployment_pk: int, labels: Iterable[tuple[str, str]]) -> None:
        existing = {(row["key"], row["value"]) for row in self.labels(deployment_pk)}
        rows = [{"deployment_pk": deployment_pk, "key": k, "value": v, "created_at": utcnow()}
                for k, v in dict.fromkeys(labels) if (k, v) not in existing]
        if rows:
            with self._write() as conn:
                conn.execute(insert(LABELS), rows)

    def delete_labels(self, deployment_pk: int, key: str, value: str | None = None) -> int:
        where = [LABELS.c.deployment_pk == deployment_pk, LABELS.c.key == key]
        if value is not None:
            where.append(LABELS.c.value == value)
        with self._write() as conn:
            return conn.execute(delete(LABELS).where(*where)).rowcount

    # -- secrets (values arrive and leave encrypted) --------------------------------------------
    def put_secret(self, project_id: str, key: str, value: str, hidden: bool, replace: bool,
                   visibility: str = "tenant", created_by: str = "admin", **provided: Any) -> None:
        """``provided``: the secret's ``provider_name`` and ``provider_options``, if it has them."""
        now = utcnow()
        try:
            with self._write() as conn:
                self._insert_secret(conn, {"project_id": project_id, "key": key, "value": value, "hidden": hidden,
                                           "visibility": visibility, "created_by": created_by,
                                           "created_at": now, "updated_at": now, **provided})
                return
        except IntegrityError:
            if not replace:
                raise Conflict(f"Secret {key} already exists") from None
        self.update_secret(project_id, key, value=value, hidden=hidden, **provided)

    @staticmethod
    def _insert_secret(conn: Any, row: dict) -> None:
        unique_then_global(conn, SECRETS, row)
        conn.execute(insert(SECRETS).values(**row))

    def import_secrets(self, rows: list[dict], override: bool) -> list[dict]:
        """Each row (``project_id``, ``key``, an encrypted ``value``...) stored in one transaction, so a failure
        stores none; one whose project already holds its key is replaced with ``override``, else left.
        Returns the rows whose key was already there."""
        colliding = []
        with self._write() as conn:
            for row in rows:
                where = (SECRETS.c.project_id == row["project_id"], SECRETS.c.key == row["key"])
                if conn.execute(select(SECRETS.c.pk).where(*where)).first() is None:
                    self._insert_secret(conn, row)
                    continue
                colliding.append(row)
                if override:
                    unique_then_global(conn, SECRETS, row)
                    conn.execute(update(SECRETS).where(*where).values(
                        **{k: v for k, v in row.items() if k not in ("project_id", "key", "created_at")}))
        return colliding

    def update_secret(self, project_id: str, key: str, **fields: Any) -> None:
        with self._write() as conn:
            done = conn.execute(update(SECRETS).where(SECRETS.c.project_id == project_id, SECRETS.c.key == key)
                                .values(**fields, updated_at=utcnow())).rowcount
        if not done:
            raise NotFound(f"Secret {key} not found")

    def get_secret(self, project_id: str, key: str) -> dict | None:
        """The project's secret of that key, else a global one (``get_secret`` reads it too)."""
        where, own_first = seen_from(SECRETS, project_id)
        with self._read() as conn:
            rows = self._rows(conn.execute(select(SECRETS).where(where, SECRETS.c.key == key)
                                           .order_by(own_first).limit(1)))
        return rows[0] if rows else None

    def list_secrets(self, project_id: str) -> list[dict]:
        """The project's secrets and the global ones of other projects."""
        with self._read() as conn:
            return self._rows(conn.execute(select(SECRETS).where(seen_from(SECRETS, project_id)[0])
                                           .order_by(SECRETS.c.key, SECRETS.c.project_id)))

    def delete_secret(self, project_id: str, key: str) -> None:
        with self._write() as conn:
            done = conn.execute(delete(SECRETS).where(SECRETS.c.project_id == project_id,
                                                      SECRETS.c.key == key)).rowcount
        if not done:
            raise NotFound(f"Secret {key} not found")
