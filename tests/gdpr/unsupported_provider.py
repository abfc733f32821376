"""A real HTTP server on loopback speaking the provider protocol (docs/provider-protocol.md) for
the subject-request tests: by default a provider that answers ``health`` and ``capabilities``
and ``501 unsupported`` to everything else; switched at runtime into a store of one subject's
items that fails with ``503 unavailable`` a number of times first, or that keeps some items
while reporting them removed (residue).

    server = ProtocolServer.start()          # unsupported
    server.store(items=3)                    # holds 3 items of any subject
    server.store(items=3, fail=2)            # the next 2 calls answer 503 first
    server.store(items=3, keeps=1)           # forget says 3 removed, count still finds 1
    server.stop()

Every request body is recorded (``operations`` lists what was asked, in order).
"""

from __future__ import annotations

import datetime as dt
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

OPERATIONS = ["capabilities", "count", "delete", "export", "forget", "freeze", "get", "health",
              "list", "quarantine", "recall", "retain", "update"]


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib's name
        return  # quiet: the tests read ``operations`` instead

    def do_POST(self) -> None:  # noqa: N802 - stdlib's name
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        status, answer = self.server.owner.answer(body)
        raw = json.dumps(answer).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(raw)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    owner: ProtocolServer


def _error(status: int, code: str, message: str) -> tuple[int, dict[str, Any]]:
    return status, {"error": {"code": code, "message": message, "details": {}}}


class ProtocolServer:
    def __init__(self) -> None:
        self.mode = "unsupported"
        self.items = 0
        self.keeps = 0
        self.fail = 0
        self.bodies: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.owner = self
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True,
                                        name="protocol-fake")

    @classmethod
    def start(cls) -> ProtocolServer:
        server = cls()
        server._thread.start()
        return server

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/oc-memory"

    @property
    def operations(self) -> list[str]:
        with self._lock:
            return [str(b.get("operation")) for b in self.bodies]

    def unsupported(self) -> None:
        with self._lock:
            self.mode, self.fail = "unsupported", 0

    def store(self, *, items: int, fail: int = 0, keeps: int = 0) -> None:
        with self._lock:
            self.mode, self.items, self.fail, self.keeps = "store", items, fail, keeps

    # -- the protocol ------------------------------------------------------------------------

    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        with self._lock:
            self.bodies.append(body)
            operation = body.get("operation")
            if operation == "health":
                return 200, {"ok": True, "message": "",
                             "checkedAt": dt.datetime.now(dt.UTC).isoformat(),
                             "latencyMs": 1.0}
            if operation == "capabilities":
                offered = ["health", "capabilities"] if self.mode == "unsupported" else OPERATIONS
                return 200, {"operations": offered, "idempotentWrites": False, "version": 1}
            if self.mode == "unsupported":
                return _error(501, "unsupported", f"this store does not offer {operation}")
            if self.fail > 0:
                self.fail -= 1
                return _error(503, "unavailable", "the store is restarting")
            if operation == "forget":
                removed = self.items - self.keeps
                self.items = self.keeps
                return 200, {"removed": removed, "held": 0}
            if operation == "count":
                return 200, {"count": self.items}
            if operation in ("list", "export"):
                return 200, {"items": [], "nextCursor": None}
            return _error(501, "unsupported", f"this fake does not offer {operation}")
