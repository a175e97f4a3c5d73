"""Open LangGraph's Python savers by name for the repros in this directory (no kit code).

memory          InMemorySaver
sqlite          SqliteSaver on sqlite3 ":memory:"
sqlite-async    AsyncSqliteSaver.from_conn_string(":memory:")
postgres        PostgresSaver on $CHECKPOINT_POSTGRES_URL, in a fresh schema dropped afterwards
postgres-async  AsyncPostgresSaver, the same way

`SAVERS=memory,sqlite python b4_....py` runs a script on other savers than its default ones
(to see a bug absent elsewhere). Each script exits 1 when a saver shows its bug, 0 when
none does, 2 when no saver could run.
"""

import asyncio
import os
import sqlite3
import sys
import uuid
from contextlib import asynccontextmanager

POSTGRES_URL_ENV = "CHECKPOINT_POSTGRES_URL"


def cp(id, values=None, versions=None):
    """A checkpoint as LangGraph's runtime builds one (format 4), with the given values."""
    values = values or {}
    return {
        "v": 4,
        "id": id,
        "ts": "2026-01-01T00:00:00+00:00",
        "channel_values": values,
        "channel_versions": versions or {},
        "versions_seen": {},
        "updated_channels": None,
    }


def config(thread="t", ns="", id=None):
    c = {"thread_id": thread, "checkpoint_ns": ns}
    if id is not None:
        c["checkpoint_id"] = id
    return {"configurable": c}


class Saver:
    """The saver and which side of its API the script calls: `await s.call("put", ...)`
    calls `aput` on an async saver and `put` on a sync one; nothing else is added."""

    def __init__(self, name, saver, is_async):
        self.name, self.saver, self.is_async = name, saver, is_async

    async def call(self, method, *args, **kwargs):
        if self.is_async:
            return await getattr(self.saver, "a" + method)(*args, **kwargs)
        return getattr(self.saver, method)(*args, **kwargs)

    async def list(self, *args, **kwargs):
        if self.is_async:
            return [t async for t in self.saver.alist(*args, **kwargs)]
        return list(self.saver.list(*args, **kwargs))


@asynccontextmanager
async def open_saver(name):
    if name == "memory":
        from langgraph.checkpoint.memory import InMemorySaver

        yield Saver(name, InMemorySaver(), False)
    elif name == "sqlite":
        from langgraph.checkpoint.sqlite import SqliteSaver

        conn = sqlite3.connect(":memory:", check_same_thread=False)
        try:
            yield Saver(name, SqliteSaver(conn), False)
        finally:
            conn.close()
    elif name == "sqlite-async":
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        async with AsyncSqliteSaver.from_conn_string(":memory:") as s:
            yield Saver(name, s, True)
    elif name in ("postgres", "postgres-async"):
        import psycopg
        from psycopg.conninfo import make_conninfo

        url = os.environ[POSTGRES_URL_ENV]
        schema = "repro_" + uuid.uuid4().hex[:12]
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f"CREATE SCHEMA {schema}")
        conninfo = make_conninfo(url, options=f"-c search_path={schema}")
        try:
            if name == "postgres":
                from langgraph.checkpoint.postgres import PostgresSaver

                with PostgresSaver.from_conn_string(conninfo) as s:
                    s.setup()
                    yield Saver(name, s, False)
            else:
                from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

                async with AsyncPostgresSaver.from_conn_string(conninfo) as s:
                    await s.setup()
                    yield Saver(name, s, True)
        finally:
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute(f"DROP SCHEMA {schema} CASCADE")
    else:
        raise SystemExit(f"unknown saver {name!r}")


def run(check, default_savers):
    """Run `check(saver) -> bool (bug present)` on each saver; print and exit as the
    module docstring says."""
    names = [n for n in os.environ.get("SAVERS", ",".join(default_savers)).split(",") if n]

    async def main():
        shown, ran = False, 0
        for name in names:
            if name.startswith("postgres") and not os.environ.get(POSTGRES_URL_ENV):
                print(f"{name}: skipped ({POSTGRES_URL_ENV} is not set)")
                continue
            async with open_saver(name) as s:
                bug = await check(s)
            ran += 1
            shown |= bug
            print(f"{name}: {'BUG PRESENT' if bug else 'bug absent'}")
        return 2 if ran == 0 else 1 if shown else 0

    sys.exit(asyncio.run(main()))
