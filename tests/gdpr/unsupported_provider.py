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
import threading
from typing import Any

from tests.providers.fake_provider import FakeProvider

OPERATIONS = ["capabilities", "count", "delete", "export", "forget", "freeze", "get", "health",
              "list", "quarantine", "recall", "retain", "update"]


def _item(item_id: str) -> dict[str, Any]:
    now = dt.datetime.now(dt.UTC).isoformat()
    return {"id": item_id, "partition": "p", "tier": "facts", "key": item_id,
            "source": f"facts/{item_id}", "content": "x", "bytes": 1, "revision": 1,
            "dataSubjectId": None, "quarantine": "clear", "frozen": False,
            "createdAt": now, "updatedAt": now}


def _error(status: int, code: str, message: str) -> tuple[int, dict[str, Any]]:
    return status, {"error": {"code": code, "message": message, "details": {}}}


class ProtocolServer:
    """The protocol's side on a scripted ``FakeProvider`` (the loopback server every fault
    test uses)."""

    def __init__(self) -> None:
        self.mode = "unsupported"
        self.items = 0
        self.keeps = 0
        self.fail = 0
        self.bodies: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server: FakeProvider | None = None

    @classmethod
    def start(cls) -> ProtocolServer:
        server = cls()
        server._server = FakeProvider.start()
        server._server.scripted(server.answer)
        return server

    def stop(self) -> None:
        release = getattr(self, "release", None)
        if release is not None:
            release.set()
        if self._server is not None:
            self._server.stop()

    @property
    def url(self) -> str:
        assert self._server is not None
        return self._server.url

    @property
    def operations(self) -> list[str]:
        with self._lock:
            return [str(b.get("operation")) for b in self.bodies]

    def gated(self, barrier: threading.Barrier | None, *, items: int) -> None:
        """``count`` answers ``items`` only once every server sharing ``barrier`` has been
        asked (proof that they were asked at once); ``barrier=None``: it never answers (until
        ``stop``)."""
        with self._lock:
            self.mode, self.items, self.barrier = "gated", items, barrier
            self.release = threading.Event()

    def endless(self) -> None:
        """``count`` answers null (cannot count) and ``list`` pages on for ever, 2 items a
        page."""
        with self._lock:
            self.mode, self.pages = "endless", 0

    def unsupported(self) -> None:
        with self._lock:
            self.mode, self.fail = "unsupported", 0

    def store(self, *, items: int, fail: int = 0, keeps: int = 0) -> None:
        with self._lock:
            self.mode, self.items, self.fail, self.keeps = "store", items, fail, keeps

    # -- the protocol ------------------------------------------------------------------------

    def answer(self, body: Any) -> tuple[int, dict[str, Any]]:
        body = body if isinstance(body, dict) else {}
        if self.mode == "gated" and body.get("operation") == "count":
            with self._lock:
                self.bodies.append(body)
            if self.barrier is None:
                self.release.wait(30)
                return _error(503, "unavailable", "released")
            try:
                self.barrier.wait(timeout=20)
            except threading.BrokenBarrierError:
                return _error(503, "unavailable", "the others were never asked")
            return 200, {"count": self.items}
        if self.mode == "endless" and body.get("operation") in ("count", "list"):
            with self._lock:
                self.bodies.append(body)
                if body["operation"] == "count":
                    return 200, {"count": None}
                self.pages += 1
                return 200, {"items": [_item(f"p{self.pages}-{n}") for n in range(2)],
                             "nextCursor": f"c{self.pages}"}
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
