"""Shared by the benchmark scripts: Django set-up and a throwaway database of their own."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def setup_django() -> None:
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memadmin.settings")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    # The benchmarks' fake providers are loopback servers: allow-listed, the policy stays on.
    os.environ.setdefault("MEMADMIN_OUTBOUND_ALLOW", "127.0.0.1,::1,localhost")
    import django

    django.setup()


def admin_connection(settings: dict[str, Any]) -> Any:
    import psycopg

    return psycopg.connect(dbname=settings["NAME"], user=settings["USER"] or None,
                           password=settings["PASSWORD"] or None,
                           host=settings["HOST"] or None, port=settings["PORT"] or None,
                           autocommit=True)


def database_url(settings: dict[str, Any]) -> str:
    host = settings["HOST"] or ""
    if host.startswith("/"):
        return f"postgresql://{settings['USER']}@/{settings['NAME']}?host={host}"
    port = f":{settings['PORT']}" if settings["PORT"] else ""
    return f"postgresql://{settings['USER']}@{host}{port}/{settings['NAME']}"


@contextlib.contextmanager
def bench_database(suffix: str, *, keep: bool = False) -> Iterator[dict[str, Any]]:
    """Point Django's default connection at a fresh, migrated database; drop it afterwards."""
    from django.core.management import call_command
    from django.db import connections
    from psycopg import sql

    default = connections["default"].settings_dict
    original = dict(default)
    name = f"{original['NAME']}_bench_{suffix}"
    with admin_connection(original) as admin:
        admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(
            sql.Identifier(name)))
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    default["NAME"] = name
    try:
        call_command("migrate", verbosity=0)
        yield default
    finally:
        connections.close_all()
        default["NAME"] = original["NAME"]
        if not keep:
            with admin_connection(original) as admin:
                admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(
                    sql.Identifier(name)))


def record(benchmark: str, name: str, value: float, unit: str) -> None:
    """Append one figure for ``run_all.py``'s summary table (when ``BENCH_SUMMARY`` names a
    file; a script run on its own just prints)."""
    import json

    path = os.environ.get("BENCH_SUMMARY")
    if not path:
        return
    with open(path, "a", encoding="utf-8") as out:
        out.write(json.dumps({"benchmark": benchmark, "name": name, "value": value,
                              "unit": unit}) + "\n")


CORPUS = ROOT / "tests" / "data" / "injection"


def corpus_tune_rows() -> list[dict[str, Any]]:
    """Every row of the labelled corpus's tune split, malicious then benign, in file order
    (``held`` rows are dropped as they are read)."""
    rows = []
    for name in ("malicious.jsonl", "benign.jsonl"):
        for line in (CORPUS / name).read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                if row["split"] == "tune":
                    rows.append(row)
    return rows


def train_main(doc: str, path: Path, count: Any) -> None:
    """A counting script's command line: write ``count()`` to the committed file at
    ``path``, or with ``--check`` exit 1 if the file differs."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the file differs")
    write_or_check(path, count(), check=parser.parse_args().check)


def write_or_check(path: Path, data: bytes, *, check: bool) -> None:
    """A training script's end: write ``data`` to the committed file at ``path``, or, with
    ``check``, exit 1 if the file differs from it (the tests compare the two as well)."""
    name = path.relative_to(ROOT)
    if check:
        same = path.read_bytes() == data
        print(f"{name} matches a fresh run" if same else f"{name} DIFFERS from a fresh run")
        sys.exit(0 if same else 1)
    path.write_bytes(data)
    print(f"wrote {name} ({len(data):,} bytes)")


@contextlib.contextmanager
def served_project(db: dict[str, Any]) -> Iterator[str]:
    """This project served as ``make run`` serves it (``lib/supervisor.web_server``: gunicorn
    with kept database connections when installed) on a free loopback port over database
    ``db``, for as long as the block runs; yields its base URL once it answers."""
    import socket
    import subprocess
    import time
    import urllib.request

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    from memadmin.lib.supervisor import web_server

    command = web_server(f"127.0.0.1:{port}")
    env = {**os.environ, "DATABASE_URL": database_url(db), "DEBUG": "true",
           "ALLOWED_HOSTS": "127.0.0.1", "LOG_LEVEL": "WARNING",
           "CONN_MAX_AGE": os.environ.get("CONN_MAX_AGE", "60")}
    server = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(200):
            try:
                urllib.request.urlopen(f"{base}/accounts/login/", timeout=1)  # noqa: S310
                break
            except OSError:
                time.sleep(0.05)
        yield base
    finally:
        server.terminate()
        server.wait(timeout=10)
