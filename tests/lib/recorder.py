"""A real loopback HTTP server that records every request it receives (headers and body)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

#: How often a loopback server's loop looks for ``shutdown()``: the standard 0.5 s made every
#: ``stop()`` wait up to half a second, which added up over the suite's servers.
POLL_INTERVAL = 0.02


class QuietHandler(BaseHTTPRequestHandler):
    """A request handler that writes no access-log line to stderr for each request (the
    tests read what their servers record, not the log)."""

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base's name
        """Nothing: see the class."""


def serve_in_thread(server: ThreadingHTTPServer) -> threading.Thread:
    """Serve ``server`` on a daemon thread until ``server.shutdown()`` (which then returns
    within ``POLL_INTERVAL``)."""
    thread = threading.Thread(target=server.serve_forever, args=(POLL_INTERVAL,), daemon=True)
    thread.start()
    return thread


class Recorder:
    """``Recorder()`` serves on 127.0.0.1 (or ``host``) at a free port until ``stop()``.

    ``answer(handler) -> (status, headers, body)`` decides the reply; the default is a healthy
    wire ``health`` answer."""

    def __init__(self, answer: Callable[[BaseHTTPRequestHandler], tuple[int, dict[str, str],
                                                                          bytes]] | None = None,
                 host: str = "127.0.0.1") -> None:
        self.requests: list[dict[str, Any]] = []
        recorder = self
        reply = answer or (lambda _h: (200, {"Content-Type": "application/json"},
                                       json.dumps({"version": 1, "ok": True,
                                                   "message": ""}).encode()))

        class Handler(QuietHandler):
            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                recorder.requests.append({"method": self.command, "path": self.path,
                                          "headers": dict(self.headers.items()),
                                          "body": body})
                status, headers, content = reply(self)
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(content)))
                self.end_headers()
                self.wfile.write(content)

            do_GET = do_POST = _serve  # noqa: N815

        self.server = ThreadingHTTPServer((host, 0), Handler)
        self.server.daemon_threads = True
        self.thread = serve_in_thread(self.server)

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    def url(self, host: str = "127.0.0.1", path: str = "/oc-memory") -> str:
        return f"http://{host}:{self.port}{path}"

    def authorizations(self) -> list[str]:
        return [r["headers"].get("Authorization", "") for r in self.requests]

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
