"""A saver that allows one process per storage, as DuckDB does ("Conflicting lock is
held"): LangGraph's SqliteSaver on a fresh file per case, holding an exclusive lock on a
lock file beside it while an instance is open, so that a second open, in this process or
another, fails. The bridge test `python_one_process_storage_passes_the_crash_test` puts this
directory on PYTHONPATH and serves `locked_saver:LockedSqlite`."""

from __future__ import annotations

import contextlib
import fcntl
import os
from typing import Any, Iterator

from checkpoint_bridge.storage import SqliteStorage


class LockedSqlite(SqliteStorage):
    def __init__(self, workdir: str | None = None) -> None:
        super().__init__(workdir)

    def open(self, location: str | None) -> Any:
        inner = super().open(location)

        @contextlib.contextmanager
        def locked() -> Iterator[Any]:
            fd = os.open(f"{location}.lock", os.O_CREAT | os.O_RDWR)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                raise RuntimeError(f"Conflicting lock is held on {location}") from None
            try:
                with inner as saver:
                    yield saver
            finally:
                os.close(fd)

        return locked()
