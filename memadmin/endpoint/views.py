"""The wire endpoint (default ``/oc-memory``): JSON over POST, bearer tokens only.

CSRF-exempt and blind to session cookies: the only credential is the Authorization header.
"""

from __future__ import annotations

import json
import logging

from django.db import DatabaseError
from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt

from memadmin.endpoint.auth import Caller, authenticate, touch_after_failure
from memadmin.endpoint.operations import bounded, request_deadline, serve
from memadmin.endpoint.partitions import prefetchable
from memadmin.providers import contract as c
from memadmin.providers import wire

logger = logging.getLogger(__name__)

#: How deeply a request body may nest objects and arrays (decoding and checking stay bounded).
MAX_DEPTH = 64


def _json(status: int, payload: dict[str, object]) -> HttpResponse:
    body = wire.dumps(payload)
    if len(body) > wire.MAX_BODY_BYTES:
        return _error(c.TooLarge("the answer would exceed 64 KiB; ask for less"))
    response = HttpResponse(body, status=status, content_type="application/json")
    response["Cache-Control"] = "no-store"
    return response


def _error(error: c.ProviderError, *, agent: bool = False) -> HttpResponse:
    payload = error.to_wire()
    if agent and isinstance(error, c.Frozen):
        # Agents learn only that the target is frozen, never who froze it or why.
        payload = {"error": {"code": error.code, "message": "frozen", "details": {}}}
    return _json(error.http_status, payload)


def _read_body(request: HttpRequest) -> object:
    if request.content_type != "application/json":
        raise c.InvalidRequest("Content-Type must be application/json")
    declared = request.headers.get("Content-Length")
    if declared and declared.isascii() and declared.isdigit() and \
            int(declared) > wire.MAX_BODY_BYTES:
        raise c.TooLarge("the request body is over 64 KiB")
    raw = request.read(wire.MAX_BODY_BYTES + 1)
    if len(raw) > wire.MAX_BODY_BYTES:
        raise c.TooLarge("the request body is over 64 KiB")
    try:
        body = json.loads(raw.decode("utf-8"), parse_constant=_not_json,
                          object_pairs_hook=_no_duplicates)
    except (UnicodeDecodeError, ValueError, RecursionError):
        # ValueError besides JSONDecodeError: an integer of more than 4,300 digits.
        raise c.InvalidRequest("the body is not valid UTF-8 JSON") from None
    except _DuplicateKey as exc:
        raise c.InvalidRequest(f"the key {exc.args[0][:40]!r} appears twice in one object"
                               ) from None
    if _too_deep(body):
        raise c.InvalidRequest(f"the body nests deeper than {MAX_DEPTH} levels")
    return body


class _DuplicateKey(Exception):
    """A JSON object named the same key twice (the key is the argument)."""


def _no_duplicates(pairs: list[tuple[str, object]]) -> dict[str, object]:
    # Two readers of one body must not disagree (a proxy checking the first "partition", this
    # server acting on the last): a key given twice is refused, not silently overwritten.
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            raise _DuplicateKey(key)
        seen.add(key)
    return dict(pairs)


def _not_json(constant: str) -> object:
    # NaN, Infinity and -Infinity are Python's extensions, not JSON.
    raise json.JSONDecodeError(f"{constant} is not JSON", constant, 0)


def _too_deep(value: object) -> bool:
    """Whether objects and arrays nest deeper than MAX_DEPTH (checked without recursion)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth > MAX_DEPTH:
                return True
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
    return False


@csrf_exempt
def endpoint(request: HttpRequest) -> HttpResponse:
    if request.method != "POST":
        response = _error(c.InvalidRequest("use POST"))
        response.status_code = 405
        response["Allow"] = "POST"
        return response
    callers: list[Caller] = []
    try:
        # The body first, for its deadline: authentication and everything after it run within
        # the time the caller gave. A body that cannot be read is refused only after
        # authentication, as before (a stranger learns nothing about the body rules).
        try:
            body: object = _read_body(request)
            unreadable: c.ProviderError | None = None
        except c.ProviderError as error:
            body, unreadable = None, error
        deadline = request_deadline(body)

        # The namespaces the body names are looked up with the credential (one statement);
        # they are used only once the body has passed every check.
        prefetch = prefetchable(body)

        def answer_request() -> dict[str, object]:
            caller = authenticate(request.headers.get("Authorization"), prefetch=prefetch)
            callers.append(caller)
            if unreadable is not None:
                raise unreadable
            return serve(body, caller, deadline)

        # One transaction for the whole request (authentication, the partition lookup, the
        # handler and its audit event), every statement bounded by the time left.
        answer = bounded(deadline, answer_request)
    except c.ProviderError as error:
        agent = bool(callers) and callers[0].is_agent
        if callers:
            touch_after_failure(callers[0])
        return _error(error, agent=agent)
    except DatabaseError:
        logger.exception("endpoint: database error")
        return _error(c.Unavailable("the store is unavailable; try again"))
    except Exception:
        logger.exception("endpoint: unexpected error")
        return _json(500, {"error": {"code": "internal", "message": "internal error",
                                     "details": {}}})
    return _json(200, answer)
