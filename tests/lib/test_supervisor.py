"""`make run`'s supervisor: gunicorn serves pages and static files, and one signal stops the
web server, the worker and the scheduler together."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from memadmin.lib import supervisor

ROOT = Path(__file__).resolve().parents[2]


def test_the_web_child_is_gunicorn_with_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DATABASE_POOL_SIZE", raising=False)
    argv = supervisor.web_server("127.0.0.1:8123")
    assert argv[1:4] == ["-m", "gunicorn", "memadmin.wsgi"]
    assert "gthread" in argv and "127.0.0.1:8123" in argv
    # Django's psycopg pool, one connection per thread, for the web processes only.
    assert argv[argv.index("--env") + 1] == f"DATABASE_POOL_SIZE={supervisor.WEB_THREADS}"


def test_a_pool_size_from_the_environment_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DATABASE_POOL_SIZE", "0")
    assert "--env" not in supervisor.web_server("127.0.0.1:8123")


@pytest.mark.django_db(transaction=True)
def test_it_serves_pages_and_static_files_and_stops_everything_on_one_signal(
        live_server) -> None:
    # live_server: the test database exists and is migrated; the supervisor's children use it.
    from django.db import connection

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {**os.environ, "DEBUG": "true",
           "DATABASE_URL": "postgresql://{USER}@{HOST}:{PORT}/{NAME}".format(
               **{k: connection.settings_dict[k] or "" for k in ("USER", "HOST", "PORT",
                                                                   "NAME")})}
    process = subprocess.Popen([sys.executable, "-m", "memadmin.lib.supervisor", "--addr",
                                f"127.0.0.1:{port}"], cwd=ROOT, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        page = None
        while time.monotonic() < deadline:
            try:
                page = httpx.get(f"http://127.0.0.1:{port}/accounts/login/", timeout=5)
                break
            except httpx.TransportError:
                time.sleep(0.3)
        assert page is not None and page.status_code == 200
        css = httpx.get(f"http://127.0.0.1:{port}/static/memadmin.css", timeout=5)
        assert css.status_code == 200 and b"{" in css.content
        process.send_signal(signal.SIGINT)
        output, _ = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    text = output.decode()
    assert f"web server on http://127.0.0.1:{port}/" in text
    assert "Starting gunicorn" in text
    assert "all stopped" in text
