"""A community saver through the bridge: langgraph-checkpoint-mysql's PyMySQLSaver, a
database of its own per case on the MySQL/MariaDB server named by CHECKPOINT_MYSQL_URL
(``mysql://user:password@127.0.0.1:port``). See docs/langgraph-savers.md, "A community
saver".

    cargo xtask conformance --backend python --python VENV \
        --saver mysql_storage:MySQLStorage            # with this directory on PYTHONPATH
"""

from __future__ import annotations

import os
import uuid
from typing import Any

import pymysql
from checkpoint_bridge import Storage
from langgraph.checkpoint.mysql.pymysql import PyMySQLSaver

URL_ENV = "CHECKPOINT_MYSQL_URL"


def _url() -> str:
    url = os.environ.get(URL_ENV, "")
    if not url:
        raise RuntimeError(f"{URL_ENV} is not set (mysql://user:password@127.0.0.1:port)")
    return url.rstrip("/")


def _admin(sql: str) -> None:
    params = PyMySQLSaver.parse_conn_string(_url())
    params.pop("database", None)
    conn = pymysql.connect(**params, autocommit=True)
    try:
        with conn.cursor() as cur:
            cur.execute(sql)
    finally:
        conn.close()


class MySQLStorage(Storage):
    """A fresh database per case (its name is the location); reopenable, so the kit also
    runs its reopen, two-instance and crash cases."""

    reopenable = True

    def create(self) -> str:
        name = f"cp_bridge_{uuid.uuid4().hex[:16]}"
        _admin(f"CREATE DATABASE `{name}`")
        with PyMySQLSaver.from_conn_string(f"{_url()}/{name}") as saver:
            saver.setup()
        return name

    def open(self, location: str | None) -> Any:
        return PyMySQLSaver.from_conn_string(f"{_url()}/{location}")

    def destroy(self, location: str | None) -> None:
        if location:
            _admin(f"DROP DATABASE IF EXISTS `{location}`")
