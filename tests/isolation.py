"""Each test process gets storage of its own: loaded before Django's settings (``-p
tests.isolation`` in pyproject's addopts), because pytest-django reads the settings before any
conftest.py and the settings read the environment once.

``make test`` runs the suite in parallel with pytest-xdist: one controller process and
PYTEST_WORKERS worker processes (``PYTEST_XDIST_WORKER`` is ``gw0``, ``gw1``...; unset in a
serial run). What a test process could otherwise share with another, and what it gets instead
(tests/README.md lists the same):

- ``MEMADMIN_VAR_DIR`` (exports, uploads, audit anchors, Markdown stores under ``files/`` and
  ``stores/``): a fresh temporary directory per process, removed at the end of the run. Tests
  never write into the checkout's ``var/``, and a worker never sees another's anchors.
  ``MEMADMIN_STORES_DIR`` follows it. The processes tests start (``manage.py db_worker``, the
  supervisor) inherit both through the environment.
- The embedded PostgreSQL (used when ``DATABASE_URL`` is unset) lives in the checkout's
  ``var/pgdata`` and stays one server: each private var dir links ``pgdata`` to it.
- ``MEM0_DIR`` (Mem0 writes its ``config.json`` there, by default in ``~/.mem0``): inside the
  private var dir.
- The test database: pytest-django already suffixes it per worker (``test_<name>_gw0``).
  Databases and roles tests create beside it are named with ``worker_suffix()``.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

BASE_DIR = Path(__file__).resolve().parent.parent

#: ``gw0``, ``gw1``... under pytest-xdist, ``""`` in a serial run (and in the controller).
WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")


def worker_suffix() -> str:
    """``_gw0`` in xdist worker 0, ``""`` in a serial run: for names that are global on the
    PostgreSQL server (databases, roles), so two workers never share one."""
    return f"_{WORKER}" if WORKER else ""


PREFIX = "memadmin-test-var-"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _sweep_stale() -> None:
    """Remove the var dirs of test processes that died before their session ended (an
    interrupted run): each name carries its process id."""
    for path in Path(tempfile.gettempdir()).glob(f"{PREFIX}*"):
        pid = path.name.removeprefix(PREFIX).split("-")[1]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(path, ignore_errors=True)


def _private_var_dir() -> Path:
    shared = Path(os.environ.get("MEMADMIN_VAR_DIR") or BASE_DIR / "var")
    _sweep_stale()
    private = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{WORKER or 'main'}-{os.getpid()}-"))
    if not os.environ.get("DATABASE_URL"):
        # The settings start the embedded server in VAR_DIR/pgdata: keep it the one server.
        (shared / "pgdata").parent.mkdir(parents=True, exist_ok=True)
        (private / "pgdata").symlink_to((shared / "pgdata").resolve(), target_is_directory=True)
    return private


VAR_DIR = _private_var_dir()
os.environ["MEMADMIN_VAR_DIR"] = str(VAR_DIR)
os.environ["MEMADMIN_STORES_DIR"] = str(VAR_DIR / "stores")
os.environ["MEM0_DIR"] = str(VAR_DIR / "mem0")


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish() -> None:
    """After the session fixtures' teardown. Not in pytest_unconfigure: an xdist worker may be
    stopped by the controller before it gets there. The link to the embedded server's pgdata
    is removed, never followed."""
    shutil.rmtree(VAR_DIR, ignore_errors=True)
