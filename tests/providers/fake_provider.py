"""A real HTTP server on loopback that plays a remote provider (or a webhook receiver) whose
behaviour a test switches at runtime.

One asyncio event loop in one daemon thread serves every connection, so the server adds exactly
one thread to the process however many requests hang on it; a connection the client gives up on
is closed on the server side too (reading sees EOF). Every request is recorded once its body has
arrived, before the behaviour decides what (if anything) to answer.

    server = FakeProvider.start()
    server.hang()             # accept, read the request, never answer (until stopped)
    server.ok_slow(0.5)       # answer healthy after half a second
    server.refuse()           # close the port: connection refused (``ok()`` reopens it)
    server.stop()             # the tests' teardown; joins the thread

``FakeProviders`` starts several and stops them all; a test module wraps it in a fixture:

    @pytest.fixture
    def servers() -> Iterator[FakeProviders]:
        with FakeProviders() as started:
            yield started
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import datetime as dt
import json
import threading
import time
from collections.abc import Callable
from typing import Any

TRICKLE_EVERY = 0.05  # seconds between two bytes of a trickling body
TRICKLE_LENGTH = 10_000  # bytes a trickling body announces: under 64 KiB, 500 s at this pace
MAX_HEADER_BYTES = 64 * 1024


@dataclasses.dataclass(frozen=True)
class Request:
    method: str
    path: str
    headers: dict[str, str]  # lower-case names
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)

    @property
    def bearer(self) -> str | None:
        value = self.headers.get("authorization", "")
        return value.removeprefix("Bearer ") if value.startswith("Bearer ") else None


@dataclasses.dataclass(frozen=True)
class Behaviour:
    name: str
    seconds: float = 0.0
    status: int = 200
    message: str = ""


def _health_body(ok: bool, message: str = "", latency_ms: float = 1.0) -> bytes:
    return json.dumps({"ok": ok, "message": message,
                       "checkedAt": dt.datetime.now(dt.UTC).isoformat(),
                       "latencyMs": latency_ms}).encode()


def _response(status: int, body: bytes, content_type: str = "application/json",
              length: int | None = None) -> bytes:
    head = (f"HTTP/1.1 {status} {'OK' if status == 200 else 'Status'}\r\n"
            f"Content-Type: {content_type}\r\n"
            f"Content-Length: {len(body) if length is None else length}\r\n"
            "Connection: close\r\n\r\n")
    return head.encode("ascii") + body


class FakeProvider:
    """One fake server. Create it with ``FakeProvider.start()``; always ``stop()`` it."""

    def __init__(self, host: str = "127.0.0.1", path: str = "/oc-memory") -> None:
        self.host, self.path = host, path
        self.port = 0
        self.behaviour = Behaviour("ok")
        self._requests: list[Request] = []
        self._lock = threading.Lock()
        self._loop = asyncio.new_event_loop()
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task[None]] = set()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True,
                                        name="fake-provider")
        self._stopped = False
        self._script: Callable[[Any], tuple[int, Any]] | None = None

    # -- lifecycle ---------------------------------------------------------------------------

    @classmethod
    def start(cls, behaviour: str = "ok", **options: Any) -> FakeProvider:
        warm_http_client()
        server = cls(**options)
        server._thread.start()
        server._call(server._listen())
        if behaviour != "ok":
            getattr(server, behaviour)()
        return server

    def stop(self) -> None:
        """Close the port and every open connection, and end the thread. Idempotent."""
        if self._stopped:
            return
        self._stopped = True
        self._call(self._shutdown())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)
        self._loop.close()

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}{self.path}"

    @property
    def running(self) -> bool:
        return self._server is not None

    # -- what the tests see ------------------------------------------------------------------

    @property
    def requests(self) -> list[Request]:
        with self._lock:
            return list(self._requests)

    @property
    def request_count(self) -> int:
        with self._lock:
            return len(self._requests)

    def wait_for_requests(self, count: int, timeout: float = 5.0) -> bool:
        """Whether ``count`` requests have arrived within ``timeout`` seconds."""
        return wait_until(lambda: self.request_count >= count, timeout)

    # -- behaviours --------------------------------------------------------------------------

    def ok(self) -> None:
        """Answer 200 with a healthy ``health`` reply (reopens a refused port)."""
        self._set(Behaviour("ok"))

    def ok_slow(self, seconds: float) -> None:
        """Answer healthy after ``seconds``."""
        self._set(Behaviour("ok_slow", seconds=seconds))

    def hang(self) -> None:
        """Read the request and never answer, until the client gives up or the server stops."""
        self._set(Behaviour("hang"))

    def status(self, code: int) -> None:
        """Answer ``code`` with an error envelope."""
        self._set(Behaviour("status", status=code))

    def garbage(self) -> None:
        """Answer 200 with a body that is not JSON."""
        self._set(Behaviour("garbage"))

    def trickle(self) -> None:
        """Send the headers of a long body, then one byte of it every 50 ms."""
        self._set(Behaviour("trickle"))

    def down_ok_false(self, message: str = "maintenance in progress") -> None:
        """Answer 200 with ``{"ok": false, "message": message}``."""
        self._set(Behaviour("down_ok_false", message=message))

    def scripted(self, answer: Callable[[Any], tuple[int, Any]]) -> None:
        """Answer each request with ``answer(request JSON)`` -> (status, JSON body): a store
        that speaks the protocol as far as a test needs (an unparsable body gets None)."""
        self._script = answer
        self._set(Behaviour("scripted"))

    def refuse(self) -> None:
        """Close the listening port and drop every connection: connection refused."""
        self.behaviour = Behaviour("refuse")
        self._call(self._shutdown())

    def _set(self, behaviour: Behaviour) -> None:
        self.behaviour = behaviour
        if self._server is None and not self._stopped:
            self._call(self._listen())

    # -- the event loop's side ---------------------------------------------------------------

    def _call(self, coroutine: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(timeout=10)

    async def _listen(self) -> None:
        # Reopening after ``refuse`` binds the same port again, so configs keep their URL.
        self._server = await asyncio.start_server(self._serve, self.host, self.port,
                                                  reuse_address=True)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _shutdown(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None
        tasks = list(self._connections)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        try:
            request = await self._read(reader)
            if request is None:
                return
            with self._lock:
                self._requests.append(request)
            await self._answer(self.behaviour, reader, writer, request)
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError,
                asyncio.CancelledError):
            return  # the client went away, or the server is stopping: nothing to answer
        finally:
            self._connections.discard(task)
            if not writer.transport.is_closing():
                writer.transport.abort()

    @staticmethod
    async def _read(reader: asyncio.StreamReader) -> Request | None:
        head = await reader.readuntil(b"\r\n\r\n")
        if len(head) > MAX_HEADER_BYTES:
            return None
        lines = head.decode("latin-1").split("\r\n")
        method, path, _ = lines[0].split(" ", 2)
        headers = {}
        for line in lines[1:]:
            if ":" in line:
                name, value = line.split(":", 1)
                headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length", "0") or 0)
        body = await reader.readexactly(length) if length else b""
        return Request(method, path, headers, body)

    async def _answer(self, behaviour: Behaviour, reader: asyncio.StreamReader,
                      writer: asyncio.StreamWriter, request: Request) -> None:
        name = behaviour.name
        if name == "scripted" and self._script is not None:
            try:
                body = request.json()
            except ValueError:
                body = None
            status, answer = self._script(body)
            writer.write(_response(status, json.dumps(answer).encode()))
            await writer.drain()
            return
        if name == "hang":
            while await reader.read(4096):  # until the client closes its side
                pass
            return
        if name == "ok_slow":
            await asyncio.sleep(behaviour.seconds)
            writer.write(_response(200, _health_body(True, latency_ms=behaviour.seconds * 1000)))
        elif name == "ok":
            writer.write(_response(200, _health_body(True)))
        elif name == "status":
            code = "unavailable" if behaviour.status >= 500 else "invalid_request"
            body = json.dumps({"error": {"code": code, "message": "fake failure",
                                         "details": {}}}).encode()
            writer.write(_response(behaviour.status, body))
        elif name == "garbage":
            writer.write(_response(200, b"<html>this is not json</html>", "text/html"))
        elif name == "down_ok_false":
            writer.write(_response(200, _health_body(False, behaviour.message)))
        elif name == "trickle":
            writer.write(_response(200, b"", length=TRICKLE_LENGTH))
            for _ in range(TRICKLE_LENGTH):
                await writer.drain()
                await asyncio.sleep(TRICKLE_EVERY)
                if reader.at_eof():
                    return
                writer.write(b" ")
        await writer.drain()


class FakeProviders:
    """Several fake servers that all stop together (``with FakeProviders() as servers``)."""

    def __init__(self) -> None:
        self.servers: list[FakeProvider] = []

    def start(self, behaviour: str = "ok", **options: Any) -> FakeProvider:
        server = FakeProvider.start(behaviour, **options)
        self.servers.append(server)
        return server

    def stop(self) -> None:
        for server in self.servers:
            server.stop()

    def __enter__(self) -> FakeProviders:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def warm_http_client() -> None:
    """Build the HTTP client's shared connection pool now. ``providers.http`` builds it lazily
    inside the first call's timed window (~0.2 s here, mostly the TLS context), which would
    count against the first health check of the process and make it look slow."""
    from memadmin.providers.http import _shared_client

    _shared_client()


def wait_until(predicate: Callable[[], bool], timeout: float = 5.0,
               every: float = 0.01) -> bool:
    """Poll ``predicate`` until it holds or ``timeout`` passes (for other threads' effects)."""
    end = time.monotonic() + timeout
    while True:
        if predicate():
            return True
        if time.monotonic() >= end:
            return False
        time.sleep(every)
