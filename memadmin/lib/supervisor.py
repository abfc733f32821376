"""Run the web server, one task worker and the scheduler together; stop them together.

``make run`` calls ``python -m memadmin.lib.supervisor``. Stdlib only, so it works before Django
is configured. Each child gets its own process group: a Ctrl-C in the terminal reaches only this
supervisor, which forwards the signal to every child's group (so a child's own children stop too)
and waits for them. When any child exits on its own, the others are stopped and the supervisor
exits non-zero, so a crashed worker is never left running without its web server, or vice versa.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent.parent
MANAGE = BASE_DIR / "manage.py"

GRACE_SECONDS = 10.0
POLL_SECONDS = 0.2


@dataclass
class Child:
    name: str
    argv: list[str]
    process: subprocess.Popen[bytes] | None = None

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def signal_group(self, signum: int) -> None:
        if self.running:
            assert self.process is not None
            killpg(self.process.pid, signum)


def killpg(pgid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)


def say(message: str) -> None:
    print(f"supervisor: {message}", file=sys.stderr, flush=True)


def manage(*args: str) -> list[str]:
    return [sys.executable, str(MANAGE), *args]


def has_command(name: str) -> bool:
    """True when ``manage.py <name>`` exists; other failures (bad settings, no database) raise."""
    result = subprocess.run(  # noqa: S603 -- our own interpreter and manage.py, fixed arguments
        manage("help", name), cwd=BASE_DIR, capture_output=True, text=True, check=False
    )
    if result.returncode == 0:
        return True
    if "Unknown command" in result.stdout + result.stderr:
        return False
    sys.stderr.write(result.stdout + result.stderr)
    raise SystemExit(f"supervisor: `manage.py help {name}` failed (exit {result.returncode})")


#: gunicorn's processes and threads per process for ``make run``.
WEB_WORKERS = 2
WEB_THREADS = 4


def web_server(addr: str) -> list[str]:
    """gunicorn (threads, and Django's psycopg pool of one connection per thread) when
    installed, else runserver. runserver stalls ~42 ms a request on Nagle / delayed ACK and
    opens a database connection per request; kept connections (``CONN_MAX_AGE``) still cost a
    health-check round trip per request, which the pool does not. ``DATABASE_POOL_SIZE`` set
    in the environment (``0``: no pool, ``CONN_MAX_AGE`` then applies) wins."""
    if importlib.util.find_spec("gunicorn") is None:
        say("gunicorn is not installed: serving with runserver (slower)")
        return manage("runserver", addr, "--noreload")
    os.environ.setdefault("CONN_MAX_AGE", "60")
    argv = [sys.executable, "-m", "gunicorn", "memadmin.wsgi", "--bind", addr,
            "--workers", str(WEB_WORKERS), "--threads", str(WEB_THREADS),
            "--worker-class", "gthread",
            "--timeout", "60", "--graceful-timeout", "10", "--access-logfile", "-"]
    if os.environ.get("DATABASE_POOL_SIZE") is None:
        # Only the web server's processes: the task worker and the scheduler keep one
        # connection each, as before.
        argv += ["--env", f"DATABASE_POOL_SIZE={WEB_THREADS}"]
    return argv


def children(addr: str) -> list[Child]:
    found = [
        Child("web", web_server(addr)),
        Child("worker", manage("db_worker", "--no-reload")),
    ]
    if has_command("scheduler"):
        found.append(Child("scheduler", manage("scheduler")))
    else:
        say("manage.py has no `scheduler` command yet; running without it")
    return found


def exit_code(returncode: int) -> int:
    # Popen reports death by signal N as -N; shells report it as 128 + N.
    return 128 - returncode if returncode < 0 else returncode


class Supervisor:
    def __init__(self, procs: list[Child]) -> None:
        self.procs = procs
        self.requested: int | None = None  # the signal that asked us to stop
        self.kill_now = False

    def on_signal(self, signum: int, _frame: object) -> None:
        if self.requested is not None:
            # A second Ctrl-C while stopping: do not make the user wait for the grace period.
            self.kill_now = True
            return
        # SIGHUP (terminal closed) is forwarded as SIGTERM: not every child handles SIGHUP.
        self.requested = signal.SIGTERM if signum == signal.SIGHUP else signum

    def start(self) -> None:
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        for child in self.procs:
            child.process = subprocess.Popen(  # noqa: S603 -- fixed argv built above
                child.argv, cwd=BASE_DIR, env=env, start_new_session=True
            )
            say(f"started {child.name} (pid {child.process.pid}): {' '.join(child.argv[1:])}")

    def run(self) -> int:
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, self.on_signal)
        try:
            self.start()
        except BaseException:
            self.stop(signal.SIGTERM)
            raise

        status = 0
        while self.requested is None:
            dead = next((c for c in self.procs if not c.running), None)
            if dead is not None:
                assert dead.process is not None
                code = exit_code(dead.process.returncode)
                say(f"{dead.name} exited with status {code}; stopping the others")
                status = code or 1  # a service that stops by itself is a failure
                break
            time.sleep(POLL_SECONDS)
        else:
            say(f"received {signal.Signals(self.requested).name}; stopping")

        self.stop(self.requested or signal.SIGTERM)
        return status

    def stop(self, signum: int) -> None:
        for child in self.procs:
            child.signal_group(signum)
        deadline = time.monotonic() + GRACE_SECONDS
        while any(c.running for c in self.procs):
            if self.kill_now or time.monotonic() > deadline:
                for child in self.procs:
                    if child.running:
                        say(f"{child.name} did not stop; killing it")
                    child.signal_group(signal.SIGKILL)
                break
            time.sleep(POLL_SECONDS / 2)
        for child in self.procs:
            if child.process is None:
                continue
            child.process.wait()
            # Whatever the child's group still holds (a crashed child's own children) goes too.
            # The kernel does not hand out a group's id again while the group has members.
            killpg(child.process.pid, signal.SIGKILL)
        say("all stopped")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m memadmin.lib.supervisor",
        description="Run memadmin's web server, task worker and scheduler together.",
    )
    parser.add_argument("--addr", default="127.0.0.1:8000", help="runserver address")
    args = parser.parse_args(argv)
    say(f"web server on http://{args.addr}/ , with one task worker and the scheduler")
    return Supervisor(children(args.addr)).run()


if __name__ == "__main__":
    sys.exit(main())
