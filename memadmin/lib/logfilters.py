"""Logging filters for the server log (framework glue, no app imports)."""

from __future__ import annotations

import logging


class NoTracebackBelow500(logging.Filter):
    """Keep a 4xx response to one line: Django logs a refused request (403, 400) with the
    exception's traceback, which says nothing an operator needs. 5xx keep theirs."""

    def filter(self, record: logging.LogRecord) -> bool:
        status = getattr(record, "status_code", None)
        if isinstance(status, int) and status < 500:
            record.exc_info = None
            record.exc_text = None
        return True
