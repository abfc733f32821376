"""The remote provider: the contract spoken over the HTTP wire (``providers.wire``) to a server
such as memadmin's own endpoint.

Client rules (DESIGN.md "The HTTP wire", seed 001 "Deadlines and retries"):

- one ``Deadline``, ``min(deadline, settings.request_deadline)``, across every attempt; each attempt
  gets the time left as its connect, write, read and pool timeouts, and the body is read chunk
  by chunk, checking the deadline after each (a body trickling in cannot outlive it);
- bodies are capped at 64 KiB both ways; a longer answer is cut off, never read into memory;
- only transport errors, 408, 429 and 5xx are retried, at most ``len(retry_delays)`` times,
  after ``retry_delays`` or a ``Retry-After`` that fits the time left; never past the deadline;
- a write is retried only when the server's capabilities say ``idempotentWrites``; otherwise a
  reply lost after the request may have been sent is ``Uncertain``. A connection refused
  before anything was sent may be retried for any operation;
- redirects are not followed;
- the credential travels only in the ``Authorization`` header: it is never logged, never part
  of an error message or a repr.

Plain Python and httpx; no Django import (the outbound policy reads its allow-list from
settings when it checks an address).
"""

from __future__ import annotations

import datetime as dt
import email.utils
import http.cookiejar
import json
import logging
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import httpx

from memadmin.lib import outbound
from memadmin.providers import contract as c
from memadmin.providers import wire

logger = logging.getLogger(__name__)

#: How long a server's ``capabilities`` answer is trusted for the retry decision of writes.
CAPABILITIES_TTL = 300.0
#: Page size of ``export`` (the server may answer fewer to fit its body limit).
EXPORT_PAGE = 200
#: Answers that are worth another attempt (408 Request Timeout, 429, 5xx but 501).
RETRYABLE_STATUSES = frozenset({408, 429} | set(range(500, 600))) - {501}

_capabilities_cache: dict[tuple[str, str], tuple[float, frozenset[str]]] = {}
_capabilities_lock = threading.Lock()

_client: httpx.Client | None = None
_client_lock = threading.Lock()


class _NoCookies(http.cookiejar.CookieJar):
    """A cookie jar that keeps nothing. The client is shared by every provider of the process,
    and cookies ignore ports: a cookie one provider set would go to it again and to any other
    provider on the same host. The bearer credential is all a request carries. (Not parsing
    the cookies also saves ~0.1 ms an answer.)"""

    def extract_cookies(self, response: Any, request: Any) -> None:
        return

    def set_cookie(self, cookie: http.cookiejar.Cookie) -> None:
        return


def _shared_client() -> httpx.Client:
    """One connection pool per process (providers are built per request; connections are
    reused across them). Created lazily, so a pre-forking server builds one per worker."""
    global _client
    with _client_lock:
        if _client is None:
            limits = httpx.Limits(max_connections=100, max_keepalive_connections=20,
                                  keepalive_expiry=30.0)
            # Headers and body leave in separate writes: without TCP_NODELAY the body waits
            # for the server's delayed ACK (~40 ms a request on Linux).
            # The outbound policy's transport: checked, resolved-once addresses only.
            transport = outbound.transport(
                limits=limits,
                socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)],
            )
            _client = httpx.Client(
                transport=transport,
                cookies=_NoCookies(),
                follow_redirects=False,
                trust_env=False,  # no proxy or netrc from the environment: the URL is the URL
            )
        return _client


def clear_capabilities_cache() -> None:
    """Forget every cached ``capabilities`` answer (tests, or after a provider is edited)."""
    with _capabilities_lock:
        _capabilities_cache.clear()


# -- attempt outcomes ---------------------------------------------------------------------------


# What an operator reads instead of httpx's class names (the class stays in the log's cause).
_TRANSPORT_WORDS = {
    "ReadError": "connection reset while reading the answer",
    "WriteError": "connection reset while sending the request",
    "RemoteProtocolError": "the provider closed the connection or broke the HTTP protocol",
    "ProxyError": "the proxy refused the connection",
    "CloseError": "the connection failed while closing",
}

class _NotSent(Exception):
    """The connection failed before any byte of the request left: safe to retry any operation.
    ``cause`` names the transport exception (for health messages)."""

    def __init__(self, error: c.ProviderError, *, refused: bool = False, cause: str = "") -> None:
        super().__init__(error.message)
        self.error, self.refused, self.cause = error, refused, cause or type(error).__name__


class _Lost(Exception):
    """The request may have reached the server, but no complete answer came back."""

    def __init__(self, error: c.ProviderError, *, cause: str = "") -> None:
        super().__init__(error.message)
        self.error, self.cause = error, cause or type(error).__name__


class _Answer:
    """A complete answer: status, the headers that matter, and a body of at most 64 KiB."""

    __slots__ = ("status", "retry_after", "body")

    def __init__(self, status: int, retry_after: str | None, body: bytes) -> None:
        self.status, self.retry_after, self.body = status, retry_after, body


def _refused(exc: BaseException) -> bool:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, ConnectionRefusedError):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


def _retry_after(value: str | None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return max(0.0, (when - dt.datetime.now(dt.UTC)).total_seconds())


def _search_text(text: Any) -> Any:
    """Search text as the wire can carry it, with the meaning the store gives it: lone
    surrogates (not UTF-8) become "?", NUL becomes a space (the store treats control characters
    as spaces), cut to the 1 KiB the store reads. Anything not a string is sent as it is."""
    if not isinstance(text, str):
        return text
    text = text.encode("utf-8", errors="replace").decode("utf-8").replace("\x00", " ")
    return c.utf8_cut(text, c.MAX_QUERY_BYTES)


def _filters(filters: Any) -> dict[str, Any]:
    encoded = wire.filters_to_wire(filters)
    if "q" in encoded:
        encoded["q"] = _search_text(encoded["q"])
    return encoded


def _invalid_response(error: Exception) -> c.Unavailable:
    detail = error.message if isinstance(error, c.ProviderError) else type(error).__name__
    return c.Unavailable(f"invalid response: {detail}"[:500])


def _json_answer(body: bytes) -> Any:
    """A 200 answer's JSON (NaN and Infinity are not JSON: refused like any other garbage)."""
    try:
        return json.loads(body.decode("utf-8"), parse_constant=_not_json)
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise c.Unavailable("invalid response: not JSON") from None


def _not_json(constant: str) -> Any:
    raise ValueError(f"{constant} is not JSON")


def _decode[T](decoder: Callable[[Any], T], data: Any) -> T:
    try:
        return decoder(data)
    except (c.ProviderError, TypeError, ValueError, KeyError, AttributeError) as exc:
        raise _invalid_response(exc) from None


class HttpProvider(c.Provider):
    """A memory backend reached over the HTTP wire."""

    kind = "http"
    #: Waits before the first and second retry; tests override them on the instance.
    retry_delays: tuple[float, ...] = (0.25, 1.0)
    #: How to wait between attempts; tests override it on the instance.
    sleep: Callable[[float], None] = staticmethod(time.sleep)

    def __repr__(self) -> str:
        return f"<HttpProvider {self.settings.id} {self.settings.url!r}>"

    # -- plumbing ---------------------------------------------------------------------------

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json",
                   "Accept-Encoding": "identity", "User-Agent": "memadmin"}
        credential = self.settings.credential
        if credential:
            # Checked here: httpx would raise an encoding error carrying the header's value.
            if not (credential.isascii() and credential.isprintable()):
                raise c.Unavailable("the provider credential must be printable ASCII")
            headers["Authorization"] = f"Bearer {credential}"
        return headers

    def _envelope(self, operation: str, fields: dict[str, Any], *, scope: c.Scope | None,
                  operation_id: str | None, seconds: float) -> bytes:
        body: dict[str, Any] = {
            "version": wire.VERSION, "operation": operation,
            "operationId": operation_id if operation_id is not None
            else f"memadmin:{uuid.uuid4()}",
            "deadlineAt": wire.iso(dt.datetime.now(dt.UTC) + dt.timedelta(seconds=seconds)),
        }
        if scope is not None:
            if not isinstance(scope, c.Scope):
                raise c.InvalidRequest("scope must be a Scope")
            body["scope"] = {"partitions": list(scope.partitions)}
        body.update(fields)
        try:
            raw = wire.dumps(body)
        except UnicodeEncodeError:
            raise c.InvalidRequest("the request contains a lone surrogate (not UTF-8)") from None
        except (TypeError, ValueError):
            raise c.InvalidRequest("the request contains a value JSON cannot carry") from None
        if len(raw) > wire.MAX_BODY_BYTES:
            raise c.TooLarge(f"the request would be {len(raw)} bytes; the wire allows 64 KiB",
                             {"bytes": len(raw), "limit": wire.MAX_BODY_BYTES})
        return raw

    def _attempt(self, raw: bytes, end: float) -> _Answer:
        """One POST, bounded by ``end`` (a ``time.monotonic()`` time) from connect to the last
        byte."""
        left = end - time.monotonic()
        if left <= 0:
            raise _NotSent(c.Timeout("no time left for another attempt"), refused=False)
        timeout = httpx.Timeout(connect=left, read=left, write=left, pool=left)
        try:
            with _shared_client().stream("POST", self.settings.url, content=raw,
                                         headers=self._headers(), timeout=timeout) as response:
                status = response.status_code
                if 300 <= status < 400:
                    raise c.Unavailable(f"{status} redirect from upstream not followed")
                declared = response.headers.get("Content-Length", "")
                if declared.isdigit() and int(declared) > wire.MAX_BODY_BYTES:
                    raise c.Unavailable("invalid response: response over 64 KiB")
                chunks: list[bytes] = []
                size = 0
                for chunk in response.iter_bytes():
                    size += len(chunk)
                    if size > wire.MAX_BODY_BYTES:
                        raise c.Unavailable("invalid response: response over 64 KiB")
                    chunks.append(chunk)
                    if time.monotonic() > end:
                        raise _Lost(c.Timeout("the answer did not arrive within the deadline"))
                return _Answer(status, response.headers.get("Retry-After"), b"".join(chunks))
        # Every httpx exception is replaced (``from None``), never wrapped: nothing of the
        # request, headers included, rides along in a chained exception.
        except outbound.OutboundRefused as exc:
            raise c.Unavailable(exc.message) from None
        except (httpx.ConnectTimeout, httpx.PoolTimeout):
            raise _NotSent(c.Timeout("no connection within the deadline")) from None
        except httpx.ConnectError as exc:
            refused = _refused(exc)
            message = "connection refused" if refused else "could not connect to the provider"
            raise _NotSent(c.Unavailable(message), refused=refused,
                           cause=type(exc).__name__) from None
        except httpx.TimeoutException:
            raise _Lost(c.Timeout("no answer within the deadline")) from None
        except (httpx.UnsupportedProtocol, httpx.LocalProtocolError, httpx.InvalidURL):
            raise c.Unavailable("the provider URL cannot be used") from None
        except (httpx.TransportError, httpx.StreamError) as exc:
            name = type(exc).__name__
            words = _TRANSPORT_WORDS.get(name, "the connection failed")
            raise _Lost(c.Unavailable(words), cause=name) from None

    def _idempotent(self, end: float) -> bool | None:
        """Whether the server deduplicates writes (cached per provider for five minutes);
        None when that could not be learnt (no time left to ask, or the question failed)."""
        key = (self.settings.id, self.settings.url)
        now = time.monotonic()
        with _capabilities_lock:
            cached = _capabilities_cache.get(key)
        if cached is not None and cached[0] > now:
            return c.IDEMPOTENT_WRITES in cached[1]
        try:
            capabilities = self._capabilities(end, retries=False)
        except c.ProviderError:
            return None
        return c.IDEMPOTENT_WRITES in capabilities

    def _remember_capabilities(self, capabilities: frozenset[str]) -> None:
        with _capabilities_lock:
            _capabilities_cache[(self.settings.id, self.settings.url)] = (
                time.monotonic() + CAPABILITIES_TTL, capabilities)

    def _exchange(self, operation: str, raw: bytes, end: float, *, retries: bool = True) -> Any:
        """POST ``raw`` until an answer, the deadline or the retry budget; the decoded JSON of
        a 200 answer, else the contract error."""
        write = operation in c.WRITE_OPERATIONS
        attempt = 0
        while True:
            retry_after: float | None = None
            try:
                answer = self._attempt(raw, end)
            except _NotSent as failed:
                error = failed.error
                retryable = failed.refused or isinstance(error, c.Unavailable)
            except _Lost as failed:
                error = failed.error
                if write:
                    idempotent = self._idempotent(end)
                    if not idempotent:
                        why = ("the provider does not deduplicate writes" if idempotent is False
                               else "whether the provider deduplicates writes is not known: "
                                    "there was no time left to ask")
                        raise c.Uncertain(f"the {operation} may or may not have been applied: "
                                          f"{error.message} ({why})") from None
                retryable = True
            else:
                if answer.status == 200:
                    return _json_answer(answer.body)
                error = self._error(answer)
                retryable = answer.status in RETRYABLE_STATUSES and (
                    not write or bool(self._idempotent(end)))
                retry_after = _retry_after(answer.retry_after)
            if not retries or not retryable or attempt >= len(self.retry_delays):
                raise error
            delay = retry_after if retry_after is not None else self.retry_delays[attempt]
            if time.monotonic() + delay >= end:
                raise error
            logger.info("provider %s: %s attempt %d failed (%s); retrying in %.2f s",
                        self.settings.id, operation, attempt + 1, type(error).__name__, delay)
            self.sleep(delay)
            attempt += 1

    @staticmethod
    def _error(answer: _Answer) -> c.ProviderError:
        if 200 <= answer.status < 300:
            return c.Unavailable(f"invalid response: unexpected {answer.status}")
        try:
            data = json.loads(answer.body.decode("utf-8")) if answer.body else None
        except (UnicodeDecodeError, ValueError, RecursionError):
            data = None
        return wire.error_from_wire(answer.status, data)

    def _call(self, operation: str, fields: dict[str, Any], *, scope: c.Scope | None,
              deadline: float, operation_id: str | None = None) -> Any:
        bound = c.Deadline.of(deadline).within(self.settings.request_deadline)
        seconds = bound.check("the request could be sent")
        raw = self._envelope(operation, fields, scope=scope, operation_id=operation_id,
                             seconds=seconds)
        return self._exchange(operation, raw, bound.end)

    # -- health and capabilities ------------------------------------------------------------

    def health(self, *, deadline: float) -> c.HealthStatus:
        started = time.monotonic()
        try:
            message = self._health(deadline, started)
        except Exception as exc:  # noqa: BLE001 - health never raises; the message is the triage
            message = f"health check failed: {type(exc).__name__}"
        latency = (time.monotonic() - started) * 1000
        return c.HealthStatus(ok=message is None, message=message or "",
                              checked_at=dt.datetime.now(dt.UTC), latency_ms=round(latency, 2))

    def _health(self, deadline: float, started: float) -> str | None:
        """None when healthy, else the triage message."""
        if deadline <= 0:
            return "health check timeout"
        end = started + deadline
        raw = self._envelope("health", {}, scope=None, operation_id=None, seconds=deadline)
        try:
            answer = self._attempt(raw, end)
        except (_NotSent, _Lost) as failed:
            if isinstance(failed.error, c.Timeout):
                return "health check timeout"
            if isinstance(failed, _NotSent) and failed.refused:
                return "connection refused"
            return f"health check failed: {failed.cause}"
        except c.Unavailable as error:
            if "redirect" in error.message:
                return "redirect not followed"
            if "over 64 KiB" in error.message:
                return "invalid response"
            if error.message.startswith("refused by the outbound policy"):
                return error.message[:300]
            raise
        if answer.status >= 500:
            return f"{answer.status} from upstream"
        if answer.status != 200:
            raise self._error(answer)
        try:
            ok, message = wire.health_from_wire(_json_answer(answer.body))
        except c.ProviderError:
            return "invalid response"
        if ok:
            return None
        return (message.strip() or "unhealthy")[:300]

    def capabilities(self, *, deadline: float) -> frozenset[str]:
        bound = c.Deadline.of(deadline).within(self.settings.request_deadline)
        bound.check("the request could be sent")
        return self._capabilities(bound.end)

    def _capabilities(self, end: float, *, retries: bool = True) -> frozenset[str]:
        raw = self._envelope("capabilities", {}, scope=None, operation_id=None,
                             seconds=max(0.0, end - time.monotonic()))
        capabilities = _decode(wire.capabilities_from_wire,
                               self._exchange("capabilities", raw, end, retries=retries))
        self._remember_capabilities(capabilities)
        return capabilities

    # -- writes -----------------------------------------------------------------------------

    def retain(
        self, tier: str, key: str, content: str, mode: str, *, data_subject_id: str | None = None,
        operation_id: str, actor: str = "system", scope: c.Scope, deadline: float,
        expires_at: Any = c.KEEP,
    ) -> c.RetainResult:
        fields: dict[str, Any] = {"tier": tier, "key": key, "content": content, "mode": mode}
        if data_subject_id is not None:
            fields["dataSubjectId"] = data_subject_id
        wire.expiry_to_wire(expires_at, fields)
        data = self._call("retain", fields, scope=scope, deadline=deadline,
                          operation_id=operation_id)
        return _decode(wire.write_result_from_wire, data)

    def update_item(
        self, item_id: str, content: str, mode: str, *, expected_revision: int,
        operation_id: str, actor: str = "system", scope: c.Scope, deadline: float,
        expires_at: Any = c.KEEP,
    ) -> c.RetainResult:
        # JSON Schema's "integer" takes 1.0: refuse a float here, as the other kinds do.
        if not isinstance(expected_revision, int) or isinstance(expected_revision, bool):
            raise c.InvalidRequest("expected_revision must be a whole number")
        fields = wire.expiry_to_wire(expires_at, {"id": item_id, "content": content,
                                                  "mode": mode,
                                                  "expectedRevision": expected_revision})
        data = self._call("update", fields, scope=scope, deadline=deadline,
                          operation_id=operation_id)
        return _decode(wire.write_result_from_wire, data)

    def delete_items(
        self, *, ids: Sequence[str] | None = None, filters: c.ItemFilters | None = None,
        exclude_ids: Sequence[str] = (), limit: int | None = None, operation_id: str,
        actor: str = "system", scope: c.Scope, deadline: float,
    ) -> c.DeleteResult:
        fields: dict[str, Any] = {}
        if ids is not None:
            if isinstance(ids, str | bytes):
                raise c.InvalidRequest("ids must be a list of ids")
            fields["ids"] = list(ids)
        if filters is not None:
            fields["filters"] = _filters(filters)
        if isinstance(exclude_ids, str | bytes):
            raise c.InvalidRequest("exclude_ids must be a list of ids")
        if exclude_ids:
            fields["excludeIds"] = list(exclude_ids)
        if limit is not None:
            fields["limit"] = limit
        data = self._call("delete", fields, scope=scope, deadline=deadline,
                          operation_id=operation_id)
        return _decode(wire.delete_result_from_wire, data)

    def forget(
        self, *, item_id: str | None = None, data_subject_id: str | None = None,
        override_hold: bool = False, operation_id: str, actor: str = "system", scope: c.Scope,
        deadline: float,
    ) -> c.ForgetResult:
        fields: dict[str, Any] = {"overrideHold": override_hold}
        if item_id is not None:
            fields["id"] = item_id
        if data_subject_id is not None:
            fields["dataSubjectId"] = data_subject_id
        data = self._call("forget", fields, scope=scope, deadline=deadline,
                          operation_id=operation_id)
        return _decode(wire.forget_result_from_wire, data)

    def freeze(
        self, target: c.FreezeTarget, *, kind: str, reason: str, actor: str = "system",
        scope: c.Scope, deadline: float,
    ) -> None:
        self._freeze_call(target, {"kind": kind, "reason": reason, "action": "place"},
                          scope=scope, deadline=deadline)

    def lift_freeze(
        self, target: c.FreezeTarget, *, kind: str, actor: str = "system", scope: c.Scope,
        deadline: float,
    ) -> None:
        self._freeze_call(target, {"kind": kind, "action": "lift"}, scope=scope,
                          deadline=deadline)

    def _freeze_call(self, target: c.FreezeTarget, fields: dict[str, Any], *, scope: c.Scope,
                     deadline: float) -> None:
        if not isinstance(target, c.FreezeTarget):
            raise c.InvalidRequest("target must be a FreezeTarget")
        data = self._call("freeze", {"target": wire.target_to_wire(target), **fields},
                          scope=scope, deadline=deadline)
        _decode(wire.acknowledged, data)

    def set_quarantine(self, item_id: str, state: str, *, scope: c.Scope,
                       deadline: float) -> None:
        data = self._call("quarantine", {"id": item_id, "state": state}, scope=scope,
                          deadline=deadline)
        _decode(wire.acknowledged, data)

    # -- reads ------------------------------------------------------------------------------

    def recall(
        self, text: str | None, *, limit: int = c.RECALL_MAX_HITS, max_bytes: int | None = None,
        scope: c.Scope, deadline: float,
    ) -> c.RecallResult:
        fields: dict[str, Any] = {"input": {"text": _search_text(text)}, "limit": limit}
        if max_bytes is not None:
            fields["maxBytes"] = max_bytes
        result = _decode(wire.recall_from_wire,
                         self._call("recall", fields, scope=scope, deadline=deadline))
        if isinstance(max_bytes, int) and len(result.text.encode("utf-8")) > max_bytes:
            raise c.Unavailable(f"invalid response: recalled text over {max_bytes} bytes")
        return result

    def list_items(
        self, filters: c.ItemFilters, *, cursor: str | None = None, limit: int = 50,
        scope: c.Scope, deadline: float,
    ) -> c.ItemPage:
        return self._page("list", filters, cursor, limit, scope=scope, deadline=deadline)

    def _page(self, operation: str, filters: c.ItemFilters, cursor: str | None, limit: int, *,
              scope: c.Scope, deadline: float) -> c.ItemPage:
        fields: dict[str, Any] = {"filters": _filters(filters), "limit": limit}
        if cursor is not None:
            fields["cursor"] = cursor
        return _decode(wire.page_from_wire,
                       self._call(operation, fields, scope=scope, deadline=deadline))

    def count(self, filters: c.ItemFilters, *, scope: c.Scope, deadline: float) -> int | None:
        data = self._call("count", {"filters": _filters(filters)}, scope=scope,
                          deadline=deadline)
        return _decode(wire.count_from_wire, data)

    def get_item(self, item_id: str, *, scope: c.Scope, deadline: float) -> c.ItemDetail:
        data = self._call("get", {"id": item_id}, scope=scope, deadline=deadline)
        detail, omitted = _decode(wire.detail_from_wire, data)
        if omitted:
            logger.debug("provider %s: get left out %d older revisions", self.settings.id,
                         omitted)
        return detail

    def export(self, filters: c.ItemFilters, *, scope: c.Scope,
               deadline: float) -> Iterator[c.Item]:
        encoded = _filters(filters)  # refuse bad filters now, not at the first next()
        if not isinstance(scope, c.Scope):
            raise c.InvalidRequest("scope must be a Scope")
        return self._export(encoded, scope, deadline)

    def _export(self, encoded: dict[str, Any], scope: c.Scope,
                deadline: float) -> Iterator[c.Item]:
        cursor: str | None = None
        while True:
            fields: dict[str, Any] = {"filters": encoded, "limit": EXPORT_PAGE}
            if cursor is not None:
                fields["cursor"] = cursor
            page = _decode(wire.page_from_wire,
                           self._call("export", fields, scope=scope, deadline=deadline))
            yield from page.items
            if page.next_cursor is None:
                return
            if page.next_cursor == cursor or not page.items:
                raise c.Unavailable("invalid response: the export cursor does not advance")
            cursor = page.next_cursor
