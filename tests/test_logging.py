"""The server log says each thing once: a refused request is one line (no traceback), and every
task line of the worker appears once."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator

import pytest
from django.core.management import call_command

pytestmark = pytest.mark.django_db


@pytest.fixture
def server_log(settings) -> Iterator[io.StringIO]:
    """What the configured handlers (root's and any named logger's) write, as one text."""
    settings.DEBUG = True  # Django's own console handler only writes under DEBUG
    out = io.StringIO()
    swapped: list[tuple[logging.StreamHandler, object]] = []
    loggers = [logging.getLogger()] + [logging.getLogger(name)
                                       for name in logging.root.manager.loggerDict]
    for logger in loggers:
        for handler in getattr(logger, "handlers", []):
            # Exactly StreamHandler: pytest's own capture handlers are subclasses.
            if type(handler) is logging.StreamHandler and all(
                    handler is not h for h, _ in swapped):
                swapped.append((handler, handler.setStream(out)))
    yield out
    for handler, stream in swapped:
        handler.setStream(stream)


def test_it_logs_a_forbidden_request_once_without_a_traceback(client_for, server_log) -> None:
    assert client_for("vic").get("/w/acme/audit/").status_code == 403

    lines = [line for line in server_log.getvalue().splitlines() if "Forbidden" in line]
    assert len(lines) == 1, server_log.getvalue()
    assert "/w/acme/audit/" in lines[0]
    assert "Traceback" not in server_log.getvalue()


def test_it_still_logs_a_server_error_with_its_traceback(server_log) -> None:
    logging.getLogger("django.request").error("Internal Server Error: /x", exc_info=(
        RuntimeError, RuntimeError("boom"), None), extra={"status_code": 500})

    assert server_log.getvalue().count("Internal Server Error: /x") == 1
    assert "RuntimeError: boom" in server_log.getvalue()


@pytest.mark.django_db(transaction=True)  # the worker closes its connection between tasks
def test_it_logs_each_task_line_once(server_log) -> None:
    from memadmin.jobs.tasks import worker_heartbeat

    result = worker_heartbeat.enqueue()
    call_command("db_worker", batch=True, startup_delay=False, reload=False)

    lines = [line for line in server_log.getvalue().splitlines() if f"id={result.id}" in line]
    assert len(lines) == 2, server_log.getvalue()  # started, then finished: once each
    assert "SUCCESSFUL" in lines[1]
