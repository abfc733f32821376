"""The HTTP client's rules, against small real servers on 127.0.0.1 that misbehave on purpose.

Each server is a raw ``socketserver`` on port 0 in a daemon thread; a behaviour function writes
the bytes of each answer (or hangs, trickles, resets). Deadlines are short and retry delays
injected, so the whole file runs in seconds. The only wall-clock assertions are deadline bounds
(``elapsed < 5 x deadline``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import email.utils
import json
import logging
import socket
import socketserver
import struct
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from memadmin.providers import contract as c
from memadmin.providers import wire
from memadmin.providers.http import HttpProvider

CREDENTIAL = "mad_S3cretCredential-never-shown-9f8e7d"
DEADLINE = 0.5
SCOPE = c.Scope.of("ocmem_v1_partition-one")
ALL = c.ItemFilters()


# -- a tiny raw HTTP server ---------------------------------------------------------------------


@dataclasses.dataclass
class Seen:
    """One request as the server read it."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> dict[str, Any]:
        return json.loads(self.body)

    @property
    def operation(self) -> str:
        try:
            return str(self.json.get("operation"))
        except ValueError:
            return "?"  # cut off before the body


class Conn:
    """What a behaviour gets: the socket and helpers to answer on it."""

    def __init__(self, sock: socket.socket, server: FaultServer) -> None:
        self.sock, self.server = sock, server

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def reply(self, status: int, body: Any = None, *, headers: dict[str, str] | None = None,
              raw: bytes | None = None) -> None:
        payload = raw if raw is not None else (b"" if body is None else wire.dumps(body))
        lines = [f"HTTP/1.1 {status} Status", "Content-Type: application/json",
                 f"Content-Length: {len(payload)}", "Connection: close"]
        lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
        self.send(("\r\n".join(lines) + "\r\n\r\n").encode() + payload)

    def reset(self) -> None:
        """Close with a TCP RST (SO_LINGER 0) instead of a clean FIN."""
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.sock.close()

    def hang(self) -> None:
        self.server.stopping.wait(30)


Behaviour = Callable[[Conn, Seen, int], None]


class FaultServer:
    """One request per connection; ``behaviour(conn, request, n)`` decides the answer to the
    n-th request (0-based, across connections). ``reset_after_headers(n)`` resets the n-th
    connection as soon as the request's headers are in, before its body is read."""

    def __init__(self, behaviour: Behaviour, *, port: int = 0,
                 reset_after_headers: Callable[[int], bool] = lambda n: False) -> None:
        self.behaviour = behaviour
        self.reset_after_headers = reset_after_headers
        self.started = 0
        self.requests: list[Seen] = []
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        outer = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                with outer.lock:
                    n, outer.started = outer.started, outer.started + 1
                seen = outer._read(self.request, headers_only=outer.reset_after_headers(n))
                if seen is None:
                    return
                with outer.lock:
                    outer.requests.append(seen)
                if outer.reset_after_headers(n):
                    Conn(self.request, outer).reset()
                    return
                # The client may go away mid-answer: that is what several tests are about.
                with contextlib.suppress(OSError):
                    outer.behaviour(Conn(self.request, outer), seen, n)

        class Server(socketserver.ThreadingTCPServer):
            daemon_threads = True
            block_on_close = False
            allow_reuse_address = True

        self.server = Server(("127.0.0.1", port), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.02,),
                                       daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/oc-memory"

    @staticmethod
    def _read(sock: socket.socket, *, headers_only: bool = False) -> Seen | None:
        sock.settimeout(10)
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(65536)
            if not chunk:
                return None
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        request_line, *header_lines = head.decode("latin-1").split("\r\n")
        method, path, _ = request_line.split(" ", 2)
        headers = {}
        for line in header_lines:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length", "0"))
        while len(body) < length and not headers_only:
            chunk = sock.recv(65536)
            if not chunk:
                break
            body += chunk
        return Seen(method, path, headers, body)

    def of(self, operation: str) -> list[Seen]:
        with self.lock:
            return [r for r in self.requests if r.operation == operation]

    def stop(self) -> None:
        self.stopping.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def serve() -> Iterator[Callable[..., FaultServer]]:
    servers: list[FaultServer] = []

    def start(behaviour: Behaviour, **kwargs: Any) -> FaultServer:
        server = FaultServer(behaviour, **kwargs)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


def make_provider(url: str, *, request_deadline: float = 10.0) -> HttpProvider:
    settings = c.ProviderSettings(id=str(uuid.uuid4()), workspace_id="ws", name="faulty",
                                  kind="http", url=url, credential=CREDENTIAL,
                                  health_deadline=DEADLINE, request_deadline=request_deadline)
    provider = HttpProvider(settings)
    provider.retry_delays = (0.01, 0.02)
    return provider


@pytest.fixture
def sleeps() -> list[float]:
    """Every wait the client asks for (each still happens, for at most 50 ms)."""
    return []


def client(server: FaultServer, sleeps: list[float] | None = None, **kwargs: Any) -> HttpProvider:
    provider = make_provider(server.url, **kwargs)
    if sleeps is not None:
        def record(seconds: float) -> None:
            sleeps.append(seconds)
            time.sleep(min(seconds, 0.05))
        provider.sleep = record
    return provider


# -- canned answers -----------------------------------------------------------------------------

NOW = "2026-01-05T10:00:00Z"
RECALL = {"text": "the walrus", "sources": [{"id": "i-1", "title": "facts/a.md"}],
          "hits": [{"source": "facts/a.md", "snippet": "the walrus", "score": 0.5}],
          "quarantined": [], "cursor": None}


def item(n: int) -> dict[str, Any]:
    return {"id": f"i-{n}", "partition": SCOPE.partitions[0], "tier": "facts", "key": f"k{n}",
            "source": f"facts/k{n}.md", "content": f"fact {n}", "bytes": 6, "revision": 1,
            "dataSubjectId": None, "quarantine": "clear", "frozen": False, "createdAt": NOW,
            "updatedAt": NOW}


def capabilities(idempotent: bool) -> dict[str, Any]:
    return {"operations": sorted(c.OPERATIONS | {"tool"}), "idempotentWrites": idempotent,
            "version": 1}


def answers(idempotent: bool = True) -> Callable[[Conn, Seen], None]:
    """A well-behaved answer for each operation."""

    def answer(conn: Conn, seen: Seen) -> None:
        op = seen.operation
        body: dict[str, Any] = {
            "capabilities": capabilities(idempotent), "recall": RECALL,
            "retain": {"id": "i-1", "bytes": 6, "revision": 1},
            "update": {"id": "i-1", "bytes": 6, "revision": 2},
            "list": {"items": [item(1)], "nextCursor": None}, "count": {"count": 1},
            "health": {"ok": True, "message": "", "checkedAt": NOW, "latencyMs": 1.0},
            "delete": {"removed": 1, "held": 0}, "forget": {"removed": 1, "held": 0},
            "freeze": {"ok": True}, "quarantine": {"ok": True},
        }[op]
        conn.reply(200, body)

    return answer


def retain(provider: HttpProvider, operation_id: str = "op-1", **kwargs: Any) -> c.RetainResult:
    return provider.retain("facts", "k", "a fact", "replace", operation_id=operation_id,
                           scope=SCOPE, deadline=kwargs.pop("deadline", DEADLINE), **kwargs)


def recall(provider: HttpProvider, deadline: float = DEADLINE) -> c.RecallResult:
    return provider.recall("walrus", scope=SCOPE, deadline=deadline)


class Elapsed:
    def __enter__(self) -> Elapsed:
        self.started = time.monotonic()
        return self

    def __exit__(self, *_: object) -> None:
        self.seconds = time.monotonic() - self.started


# -- the wire envelope --------------------------------------------------------------------------


class TestEnvelope:
    def test_a_read_sends_a_fresh_operation_id_a_deadline_and_the_scope(self, serve):
        server = serve(lambda conn, seen, n: answers()(conn, seen))
        provider = make_provider(server.url)

        before = dt.datetime.now(dt.UTC)
        assert recall(provider) == wire.recall_from_wire(RECALL)
        recall(provider)

        first, second = (r.json for r in server.requests)
        assert first["version"] == 1 and first["operation"] == "recall"
        assert first["operationId"].startswith("memadmin:")
        uuid.UUID(first["operationId"].removeprefix("memadmin:"))
        assert first["operationId"] != second["operationId"]
        assert first["scope"] == {"partitions": list(SCOPE.partitions)}
        assert first["input"] == {"text": "walrus"} and first["limit"] == c.RECALL_MAX_HITS
        deadline_at = wire.parse_time(first["deadlineAt"], "deadlineAt")
        assert first["deadlineAt"].endswith("Z")
        assert before < deadline_at <= before + dt.timedelta(seconds=DEADLINE + 1)
        seen = server.requests[0]
        assert seen.method == "POST" and seen.path == "/oc-memory"
        assert seen.headers["authorization"] == f"Bearer {CREDENTIAL}"
        assert seen.headers["content-type"] == "application/json"

    def test_cookies_a_provider_sets_are_never_sent_back(self, serve):
        # The credential is the only thing a request carries: a cookie one provider sets is
        # not replayed to it, nor to another provider on the same host (cookies ignore ports).
        def answer(conn: Conn, seen: Seen, n: int) -> None:
            conn.reply(200, RECALL, headers={"Set-Cookie": "session=abc123; Path=/"})

        first, second = serve(answer), serve(answer)
        recall(make_provider(first.url))
        recall(make_provider(first.url))
        recall(make_provider(second.url))

        assert [r.headers.get("cookie") for r in first.requests + second.requests] == [None] * 3

    def test_a_write_sends_the_callers_operation_id(self, serve):
        server = serve(lambda conn, seen, n: answers()(conn, seen))
        provider = make_provider(server.url)

        result = retain(provider, "op-caller-42", data_subject_id="subj-1")

        assert result == c.RetainResult(id="i-1", bytes=6, revision=1)
        [seen] = server.of("retain")
        assert seen.json["operationId"] == "op-caller-42"
        assert {k: seen.json[k] for k in ("tier", "key", "content", "mode", "dataSubjectId")} == {
            "tier": "facts", "key": "k", "content": "a fact", "mode": "replace",
            "dataSubjectId": "subj-1"}

    def test_capabilities_and_health_carry_no_scope(self, serve):
        server = serve(lambda conn, seen, n: answers(idempotent=False)(conn, seen))
        provider = make_provider(server.url)

        assert provider.capabilities(deadline=DEADLINE) == c.OPERATIONS  # "tool" left out
        assert provider.health(deadline=DEADLINE).ok is True

        assert [r.operation for r in server.requests] == ["capabilities", "health"]
        assert all("scope" not in r.json for r in server.requests)

    def test_capabilities_name_idempotent_writes(self, serve):
        server = serve(lambda conn, seen, n: answers(idempotent=True)(conn, seen))

        assert make_provider(server.url).capabilities(deadline=DEADLINE) == (
            c.OPERATIONS | {c.IDEMPOTENT_WRITES})

    def test_a_request_over_64_kib_is_refused_before_sending(self, serve):
        server = serve(lambda conn, seen, n: answers()(conn, seen))

        with pytest.raises(c.TooLarge):
            make_provider(server.url).retain("pins", "", "x" * wire.MAX_BODY_BYTES, "replace",
                                             operation_id="op", scope=SCOPE, deadline=DEADLINE)

        assert server.requests == []

    def test_export_pages_by_cursor_and_yields_lazily(self, serve):
        def pages(conn: Conn, seen: Seen, n: int) -> None:
            cursor = seen.json.get("cursor")
            if cursor is None:
                conn.reply(200, {"items": [item(1), item(2)], "nextCursor": "page-2"})
            else:
                conn.reply(200, {"items": [item(3)], "nextCursor": None})

        server = serve(pages)
        items = make_provider(server.url).export(ALL, scope=SCOPE, deadline=DEADLINE)

        assert next(items).id == "i-1"
        assert len(server.requests) == 1
        assert [i.id for i in items] == ["i-2", "i-3"]
        first, second = (r.json for r in server.requests)
        assert (first["operation"], first["limit"], first.get("cursor")) == ("export", 200, None)
        assert (second["cursor"], second["limit"]) == ("page-2", 200)

    def test_get_decodes_revisions_the_server_kept(self, serve):
        revision = {"revision": 3, "content": "fact 1", "bytes": 6, "actor": "a",
                    "createdAt": NOW}
        server = serve(lambda conn, seen, n: conn.reply(
            200, {"item": item(1), "revisions": [revision], "omittedRevisions": 2}))

        detail = make_provider(server.url).get_item("i-1", scope=SCOPE, deadline=DEADLINE)

        assert detail.item.id == "i-1"
        assert [r.revision for r in detail.revisions] == [3]
        assert server.requests[0].json["id"] == "i-1"

    def test_error_envelopes_become_contract_errors(self, serve, subtests):
        cases = [(400, "invalid_request", c.InvalidRequest), (404, "not_found", c.NotFound),
                 (409, "conflict", c.Conflict), (409, "frozen", c.Frozen),
                 (413, "too_large", c.TooLarge), (401, "unauthorized", c.AuthFailed)]
        for status, code, error in cases:
            with subtests.test(code=code):
                server = serve(lambda conn, seen, n, s=status, k=code: conn.reply(
                    s, {"error": {"code": k, "message": "said the server",
                                  "details": {"kind": "freeze"}}}))
                with pytest.raises(error) as raised:
                    make_provider(server.url).list_items(ALL, scope=SCOPE, deadline=DEADLINE)
                assert raised.value.message == "said the server"
                assert len(server.requests) == 1  # 4xx is never retried


# -- deadlines ----------------------------------------------------------------------------------


class TestDeadlines:
    def test_a_server_that_never_answers_times_out_within_the_deadline(self, serve):
        server = serve(lambda conn, seen, n: conn.hang())

        with Elapsed() as elapsed, pytest.raises(c.Timeout):
            recall(make_provider(server.url))

        assert elapsed.seconds < 5 * DEADLINE

    def test_the_settings_deadline_caps_a_longer_one(self, serve):
        server = serve(lambda conn, seen, n: conn.hang())
        provider = make_provider(server.url, request_deadline=DEADLINE)

        with Elapsed() as elapsed, pytest.raises(c.Timeout):
            recall(provider, deadline=30)

        assert elapsed.seconds < 5 * DEADLINE

    def test_a_body_trickling_in_cannot_outlive_the_deadline(self, serve):
        def trickle(conn: Conn, seen: Seen, n: int) -> None:
            conn.send(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                      b"Content-Length: 10000\r\n\r\n")
            while not conn.server.stopping.is_set():
                conn.send(b" ")
                time.sleep(0.05)

        server = serve(trickle)

        with Elapsed() as elapsed, pytest.raises(c.Timeout):
            recall(make_provider(server.url))

        assert elapsed.seconds < 5 * DEADLINE

    def test_no_time_left_sends_nothing(self, serve):
        server = serve(lambda conn, seen, n: answers()(conn, seen))

        with pytest.raises(c.Timeout):
            recall(make_provider(server.url), deadline=0)

        assert server.requests == []


# -- retries ------------------------------------------------------------------------------------


class TestRetries:
    def test_503_twice_then_200_succeeds_on_the_third_request(self, serve, sleeps):
        def flaky(conn: Conn, seen: Seen, n: int) -> None:
            if n < 2:
                conn.reply(503, {"error": {"code": "unavailable", "message": "busy",
                                           "details": {}}})
            else:
                answers()(conn, seen)

        server = serve(flaky)

        assert recall(client(server, sleeps)).text == "the walrus"

        assert len(server.requests) == 3
        assert sleeps == [0.01, 0.02]
        assert len({r.body for r in server.requests}) == 1  # same operation id, same body

    def test_it_gives_up_after_two_retries(self, serve, sleeps):
        server = serve(lambda conn, seen, n: conn.reply(502, raw=b"bad gateway"))

        with pytest.raises(c.Unavailable) as raised:
            recall(client(server, sleeps))

        assert "502 from upstream" in str(raised.value)
        assert len(server.requests) == 3

    def test_408_is_retried(self, serve):
        server = serve(lambda conn, seen, n: conn.reply(408, raw=b"") if n == 0
                       else answers()(conn, seen))

        assert recall(make_provider(server.url)).text == "the walrus"
        assert len(server.requests) == 2

    def test_a_4xx_or_501_is_not_retried(self, serve, subtests):
        for status in (400, 403, 404, 409, 501):
            with subtests.test(status=status):
                server = serve(lambda conn, seen, n, s=status: conn.reply(s, raw=b"no"))
                with pytest.raises(c.ProviderError):
                    recall(make_provider(server.url))
                assert len(server.requests) == 1

    def test_retry_after_0_is_honoured(self, serve, sleeps):
        server = serve(lambda conn, seen, n: conn.reply(
            429, {"error": {"code": "rate_limited", "message": "slow down", "details": {}}},
            headers={"Retry-After": "0"}) if n == 0 else answers()(conn, seen))

        assert recall(client(server, sleeps)).text == "the walrus"

        assert len(server.requests) == 2
        assert sleeps == [0.0]  # Retry-After, not the default delay

    def test_retry_after_as_an_http_date_is_honoured(self, serve, sleeps):
        soon = email.utils.format_datetime(dt.datetime.now(dt.UTC), usegmt=True)
        server = serve(lambda conn, seen, n: conn.reply(
            503, raw=b"", headers={"Retry-After": soon}) if n == 0 else answers()(conn, seen))

        assert recall(client(server, sleeps)).text == "the walrus"

        assert len(server.requests) == 2
        assert len(sleeps) == 1 and sleeps[0] <= 1.0

    @pytest.mark.parametrize("retry_after", [
        "3600", email.utils.format_datetime(dt.datetime.now(dt.UTC) + dt.timedelta(hours=1),
                                            usegmt=True)],
        ids=["seconds", "http-date"])  # an id with the time differs between xdist workers
    def test_a_retry_after_that_does_not_fit_raises_at_once(self, serve, sleeps, retry_after):
        server = serve(lambda conn, seen, n: conn.reply(
            429, {"error": {"code": "rate_limited", "message": "slow down", "details": {}}},
            headers={"Retry-After": retry_after}))

        with Elapsed() as elapsed, pytest.raises(c.RateLimited):
            recall(client(server, sleeps))

        assert sleeps == []
        assert len(server.requests) == 1
        assert elapsed.seconds < 5 * DEADLINE

    def test_it_never_waits_past_the_deadline(self, serve, sleeps):
        server = serve(lambda conn, seen, n: conn.reply(503, raw=b""))
        provider = client(server, sleeps)
        provider.retry_delays = (0.01, 60.0)

        with pytest.raises(c.Unavailable):
            recall(provider)

        assert sleeps == [0.01]
        assert len(server.requests) == 2

    def test_a_reset_read_is_retried(self, serve):
        server = serve(lambda conn, seen, n: conn.reset() if n == 0 else answers()(conn, seen))

        assert recall(make_provider(server.url)).text == "the walrus"
        assert len(server.of("recall")) == 2

    def test_a_read_reset_mid_request_is_retried(self, serve):
        server = serve(lambda conn, seen, n: answers()(conn, seen),
                       reset_after_headers=lambda n: n == 0)

        assert recall(make_provider(server.url)).text == "the walrus"
        assert len(server.requests) == 2 and server.requests[1].operation == "recall"

    def test_a_connection_refused_is_retried_for_any_operation(self, serve):
        # Nothing listens on the port at first; a server appears there after the first try.
        port = free_port()
        started: list[FaultServer] = []

        def late_start(seconds: float) -> None:
            if not started:
                started.append(FaultServer(lambda conn, seen, n: answers(False)(conn, seen),
                                           port=port))
            time.sleep(seconds)

        provider = make_provider(f"http://127.0.0.1:{port}/oc-memory")
        provider.sleep = late_start
        try:
            assert retain(provider) == c.RetainResult(id="i-1", bytes=6, revision=1)
            assert len(started[0].of("retain")) == 1
            assert started[0].of("capabilities") == []  # refused: nothing was sent
        finally:
            for server in started:
                server.stop()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


# -- writes: retried only when the server deduplicates them -------------------------------------


class TestWrites:
    def test_a_dropped_write_to_a_non_idempotent_server_is_uncertain(self, serve, sleeps):
        def drop_writes(conn: Conn, seen: Seen, n: int) -> None:
            if seen.operation == "retain":
                return  # read the whole request, then close without a word
            answers(idempotent=False)(conn, seen)

        server = serve(drop_writes)

        with pytest.raises(c.Uncertain):
            retain(client(server, sleeps))

        assert len(server.of("retain")) == 1
        assert sleeps == []

    def test_a_reset_write_to_a_non_idempotent_server_is_uncertain(self, serve):
        server = serve(lambda conn, seen, n: conn.reset() if seen.operation == "update"
                       else answers(idempotent=False)(conn, seen))

        with pytest.raises(c.Uncertain):
            make_provider(server.url).update_item("i-1", "x", "replace", expected_revision=1,
                                                  operation_id="op", scope=SCOPE,
                                                  deadline=DEADLINE)

        assert len(server.of("update")) == 1

    def test_a_write_reset_mid_request_on_a_non_idempotent_server_is_uncertain(self, serve):
        server = serve(lambda conn, seen, n: answers(idempotent=False)(conn, seen),
                       reset_after_headers=lambda n: n == 0)

        with pytest.raises(c.Uncertain):
            retain(make_provider(server.url))

        # The write once (whatever part of its body had arrived), then the capabilities asked.
        assert [r.operation for r in server.requests][1:] == ["capabilities"]
        assert server.requests[0].operation in ("retain", "?")

    def test_a_write_that_times_out_on_a_non_idempotent_server_is_uncertain(self, serve):
        server = serve(lambda conn, seen, n: conn.hang() if seen.operation == "forget"
                       else answers(idempotent=False)(conn, seen))

        with Elapsed() as elapsed, pytest.raises(c.Uncertain):
            make_provider(server.url).forget(item_id="i-1", operation_id="op", scope=SCOPE,
                                             deadline=DEADLINE)

        assert len(server.of("forget")) == 1
        assert elapsed.seconds < 5 * DEADLINE

    def test_a_write_with_no_time_left_to_ask_does_not_claim_the_server_lacks_dedup(self,
                                                                                   serve):
        # The write hangs until the deadline: no time is left to ask for the capabilities, so
        # the client cannot know, and must not say, that the server does not deduplicate.
        server = serve(lambda conn, seen, n: conn.hang() if seen.operation == "forget"
                       else answers(idempotent=True)(conn, seen))

        with pytest.raises(c.Uncertain) as raised:
            make_provider(server.url).forget(item_id="i-1", operation_id="op", scope=SCOPE,
                                             deadline=DEADLINE)

        assert "does not deduplicate" not in raised.value.message
        assert "no time left to ask" in raised.value.message
        assert server.of("capabilities") == []

    def test_a_503_to_a_write_on_a_non_idempotent_server_is_raised_not_retried(self, serve):
        server = serve(lambda conn, seen, n: conn.reply(503, raw=b"")
                       if seen.operation == "delete" else answers(idempotent=False)(conn, seen))

        with pytest.raises(c.Unavailable):
            make_provider(server.url).delete_items(ids=["i-1"], operation_id="op", scope=SCOPE,
                                                   deadline=DEADLINE)

        assert len(server.of("delete")) == 1

    def test_a_dropped_write_to_an_idempotent_server_is_retried(self, serve):
        def drop_first_write(conn: Conn, seen: Seen, n: int) -> None:
            # The first attempt of each of the two writes is dropped (the 1st and 3rd seen).
            if seen.operation == "retain" and len(server.of("retain")) in (1, 3):
                return
            answers(idempotent=True)(conn, seen)

        server = serve(drop_first_write)
        provider = make_provider(server.url)

        assert retain(provider, "op-1") == c.RetainResult(id="i-1", bytes=6, revision=1)
        writes = server.of("retain")
        assert len(writes) == 2
        assert writes[0].body == writes[1].body  # same operationId, same deadlineAt, same body

        retain(provider, "op-2")  # dropped once more: the capabilities answer is cached
        assert len(server.of("retain")) == 4
        assert len(server.of("capabilities")) == 1

    def test_a_freeze_is_a_write(self, serve):
        server = serve(lambda conn, seen, n: None if seen.operation == "freeze"
                       else answers(idempotent=False)(conn, seen))

        with pytest.raises(c.Uncertain):
            make_provider(server.url).freeze(c.FreezeTarget(level="item", item_id="i-1"),
                                             kind="freeze", reason="r", scope=SCOPE,
                                             deadline=DEADLINE)

        [freeze] = server.of("freeze")
        assert freeze.json["action"] == "place" and freeze.json["target"]["itemId"] == "i-1"


# -- what comes back ----------------------------------------------------------------------------


class TestAnswers:
    def test_a_50_mb_body_is_cut_off_not_read(self, serve):
        sent = [0]

        def huge(conn: Conn, seen: Seen, n: int) -> None:
            conn.sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 16384)
            conn.send(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                      b"Transfer-Encoding: chunked\r\n\r\n")
            chunk = b"[" * 16384
            for _ in range(50 * 1024 * 1024 // len(chunk)):
                conn.send(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                sent[0] += len(chunk)
            conn.send(b"0\r\n\r\n")

        server = serve(huge)

        with Elapsed() as elapsed, pytest.raises(c.Unavailable) as raised:
            recall(make_provider(server.url))

        assert "response over 64 KiB" in str(raised.value)
        assert elapsed.seconds < 5 * DEADLINE
        assert len(server.requests) == 1  # not retried
        time.sleep(0.2)
        # The server's writes failed long before the end: what it got out is what the socket
        # buffers held (about 100 KiB here), not 50 MB.
        assert sent[0] < 8 * 1024 * 1024

    def test_a_declared_length_over_64_kib_is_refused_unread(self, serve):
        server = serve(lambda conn, seen, n: conn.send(
            b"HTTP/1.1 200 OK\r\nContent-Length: 52428800\r\n\r\n" + b" " * 1000))

        with pytest.raises(c.Unavailable) as raised:
            recall(make_provider(server.url))

        assert "response over 64 KiB" in str(raised.value)

    def test_invalid_json_is_an_invalid_response(self, serve):
        server = serve(lambda conn, seen, n: conn.reply(200, raw=b"{not json"))

        with pytest.raises(c.Unavailable) as raised:
            recall(make_provider(server.url))

        assert "invalid response" in str(raised.value)
        assert len(server.requests) == 1

    def test_a_wrong_shape_is_an_invalid_response(self, serve, subtests):
        bodies: list[Any] = [[1, 2], {"sources": []}, {"text": 5, "sources": []},
                             {"text": "", "sources": [{"id": "x" * 2000}]}]
        for body in bodies:
            with subtests.test(body=body):
                server = serve(lambda conn, seen, n, b=body: conn.reply(200, b))
                with pytest.raises(c.Unavailable) as raised:
                    recall(make_provider(server.url))
                assert "invalid response" in str(raised.value)

    def test_a_redirect_is_not_followed(self, serve):
        target = serve(lambda conn, seen, n: answers()(conn, seen))
        server = serve(lambda conn, seen, n: conn.reply(302, raw=b"",
                                                       headers={"Location": target.url}))

        with pytest.raises(c.Unavailable) as raised:
            recall(make_provider(server.url))

        assert "redirect" in str(raised.value) and "not followed" in str(raised.value)
        assert target.requests == []
        assert len(server.requests) == 1

    def test_a_non_json_error_becomes_an_upstream_error(self, serve):
        server = serve(lambda conn, seen, n: conn.reply(418, raw=b"<html>teapot</html>"))

        with pytest.raises(c.Unavailable) as raised:
            recall(make_provider(server.url))

        assert "418" in str(raised.value)


# -- health -------------------------------------------------------------------------------------


class TestHealth:
    def health(self, url: str) -> c.HealthStatus:
        with Elapsed() as elapsed:
            status = make_provider(url).health(deadline=DEADLINE)
        assert elapsed.seconds < 5 * DEADLINE
        assert isinstance(status, c.HealthStatus)
        assert status.latency_ms >= 0 and status.checked_at.utcoffset() == dt.timedelta(0)
        return status

    def test_a_hang_is_a_health_check_timeout(self, serve):
        server = serve(lambda conn, seen, n: conn.hang())

        status = self.health(server.url)

        assert (status.ok, status.message) == (False, "health check timeout")
        assert len(server.requests) == 1  # health is never retried

    def test_nothing_listening_is_connection_refused(self):
        status = self.health(f"http://127.0.0.1:{free_port()}/oc-memory")

        assert (status.ok, status.message) == (False, "connection refused")

    def test_a_503_is_reported_as_such(self, serve):
        server = serve(lambda conn, seen, n: conn.reply(503, raw=b"down"))

        assert self.health(server.url).message == "503 from upstream"
        assert len(server.requests) == 1

    def test_garbage_is_an_invalid_response(self, serve, subtests):
        for raw in (b"\x00\xffgarbage", b"[]", b'{"ok": "yes"}'):
            with subtests.test(raw=raw):
                server = serve(lambda conn, seen, n, r=raw: conn.reply(200, raw=r))
                status = self.health(server.url)
                assert (status.ok, status.message) == (False, "invalid response")

    def test_a_server_reporting_itself_unhealthy_is_quoted(self, serve):
        server = serve(lambda conn, seen, n: conn.reply(
            200, {"ok": False, "message": "database unavailable", "checkedAt": NOW,
                  "latencyMs": 3}))

        assert self.health(server.url).message == "database unavailable"

    def test_a_healthy_server(self, serve):
        server = serve(lambda conn, seen, n: answers()(conn, seen))

        status = self.health(server.url)

        assert (status.ok, status.message) == (True, "")
        assert server.requests[0].json["operation"] == "health"

    def test_a_reset_names_the_transport_error(self, serve):
        server = serve(lambda conn, seen, n: conn.reset())

        message = self.health(server.url).message

        assert message in ("health check failed: ReadError",
                           "health check failed: RemoteProtocolError")

    def test_any_other_failure_names_the_exception(self, serve):
        server = serve(lambda conn, seen, n: conn.reply(
            401, {"error": {"code": "unauthorized", "message": "no", "details": {}}}))

        assert self.health(server.url).message == "health check failed: AuthFailed"


# -- the credential stays secret ----------------------------------------------------------------


def test_the_credential_never_appears_in_errors_reprs_or_logs(serve, caplog):
    caplog.set_level(logging.DEBUG)
    port = free_port()
    behaviours: list[Behaviour] = [
        lambda conn, seen, n: conn.hang(),
        lambda conn, seen, n: conn.reset(),
        lambda conn, seen, n: conn.reply(503, raw=b"down"),
        lambda conn, seen, n: conn.reply(200, raw=b"{garbage"),
        lambda conn, seen, n: conn.reply(302, raw=b"", headers={"Location": "http://x/"}),
        lambda conn, seen, n: conn.reply(401, {"error": {"code": "unauthorized",
                                                         "message": "unknown token",
                                                         "details": {}}}),
        lambda conn, seen, n: None if seen.operation == "retain"
        else answers(idempotent=False)(conn, seen),
    ]
    urls = [serve(b).url for b in behaviours] + [f"http://127.0.0.1:{port}/oc-memory"]
    texts: list[str] = []
    raised: list[type[c.ProviderError]] = []
    for url in urls:
        provider = make_provider(url)
        texts += [repr(provider), repr(provider.settings), str(provider.settings)]
        for call in (lambda p=provider: recall(p), lambda p=provider: retain(p)):
            try:
                texts.append(repr(call()))
            except c.ProviderError as error:
                texts += [str(error), repr(error), repr(error.args), json.dumps(error.to_wire())]
                if error.__cause__ is not None:
                    texts += [str(error.__cause__), repr(error.__cause__)]
                raised.append(type(error))
        status = provider.health(deadline=DEADLINE)
        texts += [repr(status), status.message]

    assert {c.Timeout, c.Unavailable, c.AuthFailed, c.Uncertain} <= set(raised)
    assert CREDENTIAL not in "\n".join(texts)
    assert CREDENTIAL not in caplog.text
    assert all(CREDENTIAL not in record.getMessage() for record in caplog.records)


def test_a_credential_that_cannot_be_a_header_is_refused_unshown(serve, caplog, subtests):
    caplog.set_level(logging.DEBUG)
    server = serve(lambda conn, seen, n: answers()(conn, seen))
    for secret in ("s\u00e9cret-credential-1", "line\nbreak-credential-2"):
        with subtests.test(secret=secret):
            settings = dataclasses.replace(make_provider(server.url).settings, credential=secret)
            provider = HttpProvider(settings)

            with pytest.raises(c.Unavailable) as raised:
                recall(provider)

            assert secret not in f"{raised.value} {raised.value!r} {raised.value.__context__!r}"
            assert provider.health(deadline=DEADLINE).message == (
                "health check failed: Unavailable")
    assert server.requests == []
    assert "credential-" not in caplog.text
