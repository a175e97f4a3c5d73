"""Where the savers a bridge serves come from: a :class:`Storage` gives a fresh storage per
case, opens saver instances on it and removes it; LangGraph's own savers have short names.

A ``module:factory`` names either a :class:`Storage` (a subclass or an instance), which
gets the kit's reopen and durability cases, or any callable returning a saver, a context
manager or an async context manager (as LangGraph's ``from_conn_string`` do), which is
called once per case and cannot be reopened.

Either may declare what its savers lack (CONTRACT §5 "Declared limits") with an attribute
``conformance_lacks``: a list of the kit's feature names (:data:`FEATURES`), sent in the
handshake's ``lacks``; a saver (its class or the instance) may declare its own the same way,
sent in ``open``'s ``lacks``.
"""

from __future__ import annotations

import importlib
import os
import shutil
import tempfile
import uuid
from typing import Any, Callable

POSTGRES_URL_ENV = "CHECKPOINT_POSTGRES_URL"

# The features a saver may declare it lacks (CONTRACT §5 "Declared limits"): the kit's
# `conformance_core::Feature` names, as the handshake's `lacks` carries them.
FEATURES = (
    "task_path_on_reads",
    "string_versions",
    "namespaces",
    "wide_numbers",
    "updated_channels",
    "task_path_on_writes",
)

# The attribute of a factory, a Storage or a saver that declares what it lacks.
LACKS_ATTR = "conformance_lacks"


def declared_lacks(obj: Any, what: str) -> list[str]:
    """The feature names ``obj`` declares it lacks (its ``conformance_lacks``: a name or an
    iterable of names; absent or None: none), in the order given, each once.

    Raises ValueError (one line) for a value that is no list of names or a name that is
    no feature."""
    value = getattr(obj, LACKS_ATTR, None)
    if value is None:
        return []
    names = [value] if isinstance(value, str) else value
    try:
        names = list(names)
    except TypeError:
        raise ValueError(
            f"{what}: {LACKS_ATTR} is {type(value).__name__}, not a list of feature names "
            f"(valid features are: {', '.join(FEATURES)})"
        ) from None
    out: list[str] = []
    for name in names:
        if name not in FEATURES:
            raise ValueError(
                f"{what}: {LACKS_ATTR} declares that it lacks {name!r}, which is no feature of the kit; "
                f"valid features are: {', '.join(FEATURES)} (CONTRACT §5 Declared limits)"
            )
        if name not in out:
            out.append(name)
    return out


class Storage:
    """A family of saver instances. Every method may be a plain or an ``async`` method.

    - ``create()`` makes a fresh, empty storage for one case and returns its location (a
      string another process can open, or None when the storage cannot be reopened).
    - ``open(location)`` returns a saver on that storage: a BaseCheckpointSaver, a context
      manager or an async context manager yielding one.
    - ``destroy(location)`` removes the storage after the case.
    - ``setup()`` / ``teardown()`` run once per run (the kit's lifespan).

    Set ``reopenable = True`` when ``open`` can be called again on a location (a second
    instance on the same storage, or another process after a kill).

    Set ``conformance_lacks`` to the features (:data:`FEATURES`) every saver it opens
    lacks, e.g. ``("namespaces",)`` for a saver that stores the root namespace only: the
    cases that use them are not run, with the declaration as the reason.
    """

    reopenable = False
    conformance_lacks: Any = ()

    def setup(self) -> Any:
        return None

    def teardown(self) -> Any:
        return None

    def create(self) -> Any:
        return None

    def open(self, location: str | None) -> Any:
        raise NotImplementedError

    def destroy(self, location: str | None) -> Any:
        return None


class FactoryStorage(Storage):
    """A plain factory: every ``open`` calls it; nothing to reopen or remove."""

    def __init__(self, factory: Callable[[], Any]) -> None:
        self.factory = factory
        # The factory's own declaration (a function attribute, or a class's attribute).
        self.conformance_lacks = getattr(factory, LACKS_ATTR, None) or ()

    def open(self, location: str | None) -> Any:
        return self.factory()


class MemoryStorage(Storage):
    """``memory``: LangGraph's InMemorySaver, one per case."""

    def open(self, location: str | None) -> Any:
        from langgraph.checkpoint.memory import InMemorySaver

        return InMemorySaver()


class SqliteStorage(Storage):
    """``sqlite``: SqliteSaver.from_conn_string on a fresh file per case (in the run's work
    directory), removed after the case."""

    reopenable = True

    def __init__(self, workdir: str | None) -> None:
        self.workdir = workdir

    def create(self) -> str:
        d = tempfile.mkdtemp(prefix="sqlite-", dir=self.workdir)
        return os.path.join(d, "checkpoints.sqlite")

    def open(self, location: str | None) -> Any:
        from langgraph.checkpoint.sqlite import SqliteSaver

        return SqliteSaver.from_conn_string(location)

    def destroy(self, location: str | None) -> None:
        if location:
            shutil.rmtree(os.path.dirname(location), ignore_errors=True)


class AsyncSqliteStorage(SqliteStorage):
    """``sqlite-async``: AsyncSqliteSaver.from_conn_string on a fresh file per case."""

    def open(self, location: str | None) -> Any:
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        return AsyncSqliteSaver.from_conn_string(location)


def _postgres_url() -> str:
    url = os.environ.get(POSTGRES_URL_ENV, "")
    if not url:
        raise RuntimeError(f"{POSTGRES_URL_ENV} is not set: the postgres savers need a server URL")
    return url


RUN_TOKEN_ENV = "CHECKPOINT_BRIDGE_RUN"


def _schema_prefix() -> str:
    """``cp_bridge_<run token>_``: every child of one run names its schemas with the token
    the host gives it, so the run's teardown finds those of a child killed while stuck."""
    token = "".join(c for c in os.environ.get(RUN_TOKEN_ENV, "") if c in "0123456789abcdef")[:16]
    return f"cp_bridge_{token}_" if token else "cp_bridge_"


def _new_schema() -> str:
    return f"{_schema_prefix()}{uuid.uuid4().hex[:16]}"


def _conninfo(schema: str) -> str:
    from psycopg.conninfo import make_conninfo

    return make_conninfo(_postgres_url(), options=f"-c search_path={schema}")


class PostgresStorage(Storage):
    """``postgres``: PostgresSaver.from_conn_string with a schema of its own per case (the
    connection's search_path), set up with ``setup()`` once and dropped after the case.
    The location is the schema name; the URL comes from CHECKPOINT_POSTGRES_URL."""

    reopenable = True

    def setup(self) -> None:
        import psycopg

        with psycopg.connect(_postgres_url(), autocommit=True) as conn:
            conn.execute("SELECT 1")

    def teardown(self) -> None:
        """Drops every schema of this run that is still there: a case's own ``destroy``
        removes its schema, but not when its child was killed while stuck in it."""
        import psycopg

        prefix = _schema_prefix()
        if prefix == "cp_bridge_":
            return  # no run token: another run's schemas cannot be told apart
        with psycopg.connect(_postgres_url(), autocommit=True) as conn:
            rows = conn.execute(
                "SELECT nspname FROM pg_namespace WHERE left(nspname, %s) = %s", (len(prefix), prefix)
            ).fetchall()
            for (name,) in rows:
                conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')

    def create(self) -> str:
        import psycopg
        from langgraph.checkpoint.postgres import PostgresSaver

        schema = _new_schema()
        with psycopg.connect(_postgres_url(), autocommit=True) as conn:
            conn.execute(f'CREATE SCHEMA "{schema}"')
        with PostgresSaver.from_conn_string(_conninfo(schema)) as saver:
            saver.setup()
        return schema

    def open(self, location: str | None) -> Any:
        from langgraph.checkpoint.postgres import PostgresSaver

        return PostgresSaver.from_conn_string(_conninfo(str(location)))

    def destroy(self, location: str | None) -> None:
        import psycopg

        if location:
            with psycopg.connect(_postgres_url(), autocommit=True) as conn:
                conn.execute(f'DROP SCHEMA IF EXISTS "{location}" CASCADE')


class AsyncPostgresStorage(PostgresStorage):
    """``postgres-async``: AsyncPostgresSaver.from_conn_string, a schema per case."""

    async def create(self) -> str:  # type: ignore[override]
        import psycopg
        from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

        schema = _new_schema()
        async with await psycopg.AsyncConnection.connect(_postgres_url(), autocommit=True) as conn:
            await conn.execute(f'CREATE SCHEMA "{schema}"')
        async with AsyncPostgresSaver.from_conn_string(_conninfo(schema)) as saver:
            await saver.setup()
        return schema

    def open(self, location: str | None) -> Any:
        from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

        return AsyncPostgresSaver.from_conn_string(_conninfo(str(location)))


SHORT_NAMES: dict[str, Callable[[str | None], Storage]] = {
    "memory": lambda workdir: MemoryStorage(),
    "sqlite": SqliteStorage,
    "sqlite-async": AsyncSqliteStorage,
    "postgres": lambda workdir: PostgresStorage(),
    "postgres-async": lambda workdir: AsyncPostgresStorage(),
}


class SaverNotFound(ValueError):
    """``spec`` names nothing the child can serve: an unknown short name, a malformed spec,
    a module that does not exist, a missing attribute, or one that is neither a Storage nor
    callable. The host reports it as a usage error (``InvalidConfig`` in ``hello``); a module
    that exists but raised while importing is not this, but the saver's own failure."""


def resolve(spec: str, workdir: str | None) -> Storage:
    """The storage named by ``spec``: a short name or ``module:attribute``.

    Raises :class:`SaverNotFound` when ``spec`` names nothing to serve, and ValueError with a
    one-line reason for a module that raised on import or a ``conformance_lacks`` naming no
    feature."""
    storage = _resolve(spec, workdir)
    declared_lacks(storage, f"saver {spec!r}")
    return storage


def _resolve(spec: str, workdir: str | None) -> Storage:
    if spec in SHORT_NAMES:
        return SHORT_NAMES[spec](workdir)
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise SaverNotFound(f"unknown saver {spec!r}: give one of {', '.join(SHORT_NAMES)} or module:factory")
    try:
        module = importlib.import_module(module_name)
    except ImportError as e:
        missing = getattr(e, "name", None)
        # The module named, or a package on its path, does not exist: the spec names nothing.
        # Any other import error is raised by the module's own code.
        if isinstance(e, ModuleNotFoundError) and missing and (module_name + ".").startswith(missing + "."):
            raise SaverNotFound(
                f"saver {spec!r}: no module {module_name} ({e}); the bridge's interpreter imports it: "
                "put its directory on PYTHONPATH, or install it in the environment given with --python"
            ) from None
        raise ValueError(f"saver {spec!r}: cannot import {module_name}: {e}") from None
    obj: Any = module
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise SaverNotFound(f"saver {spec!r}: {module_name} has no attribute {attr}") from None
    if isinstance(obj, type) and issubclass(obj, Storage):
        return obj()
    if isinstance(obj, Storage):
        return obj
    if callable(obj):
        return FactoryStorage(obj)
    raise SaverNotFound(f"saver {spec!r}: {attr} is neither a Storage nor callable")
