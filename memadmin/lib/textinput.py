"""The input boundary: query strings and form bodies that are not valid text are refused, and
the one normaliser of typed text (``visible_strip``, ``VisibleCharField``)."""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote_to_bytes

from django import forms
from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest

FORM_URLENCODED = "application/x-www-form-urlencoded"


def _query_bytes(request: HttpRequest) -> bytes:
    """The query string as the client sent it (WSGI hands it over as ISO-8859-1 text)."""
    raw = request.META.get("QUERY_STRING", "")
    if isinstance(raw, bytes):
        return raw
    try:
        return raw.encode("iso-8859-1")
    except UnicodeEncodeError:  # a server that decoded it already: it is text
        return raw.encode("utf-8", "surrogatepass")


def _is_text(raw: bytes, encoding: str) -> bool:
    """Whether percent-decoded ``raw`` decodes strictly (UTF-8: no stray bytes, no encoded
    surrogates, no overlong forms). Decoding the whole string at once is the same test as
    decoding each name and value: the separators are ASCII, and no multi-byte sequence
    contains an ASCII byte."""
    if raw.isascii() and b"%" not in raw:
        return True
    try:
        unquote_to_bytes(raw).decode(encoding)
    except UnicodeDecodeError:
        return False
    return True


class InvalidUtf8Middleware:
    """Answer a short plain-text 400 when the query string, or an
    ``application/x-www-form-urlencoded`` body, is not valid text once percent-decoded (UTF-8,
    or the charset the request declares). Django decodes both with replacement, so a lone
    surrogate or a stray byte would otherwise reach a form as U+FFFD and be stored; DESIGN.md
    refuses such input at the boundary. htmx requests get the same answer.

    Multipart bodies are not read here (uploads stream to their handlers, never into memory),
    a urlencoded body over ``DATA_UPLOAD_MAX_MEMORY_SIZE`` is left to Django's own refusal, and
    the agent endpoint is skipped entirely: it checks its JSON bodies itself."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        endpoint = "/" + settings.MEMADMIN_ENDPOINT_PATH
        self.skipped = {endpoint, endpoint + "/"}

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path_info not in self.skipped:
            problem = self._problem(request)
            if problem is not None:
                return HttpResponseBadRequest(f"Bad request: {problem}. Nothing was done.\n",
                                              content_type="text/plain; charset=utf-8")
        return self.get_response(request)

    @staticmethod
    def _problem(request: HttpRequest) -> str | None:
        encoding = request.encoding or settings.DEFAULT_CHARSET
        if not _is_text(_query_bytes(request), encoding):
            return f"the query string is not valid {encoding} text"
        if request.method == "POST" and request.content_type == FORM_URLENCODED:
            try:
                body = request.body
            except RequestDataTooBig:
                return None  # refused with a 400 where the form is read, as ever
            if not _is_text(body, encoding):
                return f"the form data is not valid {encoding} text"
        return None


#: Characters that render as nothing but are not Unicode whitespace (``str.strip`` keeps them):
#: the fillers and the blank Braille pattern. Format characters (category Cf: zero-width space,
#: joiners, word joiner, BOM, bidi marks, soft hyphen) are found by category.
_BLANKS = frozenset("\u115f\u1160\u3164\uffa0\u2800")


def _invisible(char: str) -> bool:
    return char.isspace() or char in _BLANKS or unicodedata.category(char) == "Cf"


def visible_strip(text: str) -> str:
    """``text`` without the whitespace and invisible characters at either end, so a reason, a
    name or a note made only of zero-width characters is as empty as one of spaces. Inside the
    text nothing changes (a joiner inside an emoji sequence or a word stays)."""
    start, end = 0, len(text)
    while start < end and _invisible(text[start]):
        start += 1
    while end > start and _invisible(text[end - 1]):
        end -= 1
    return text[start:end]


class VisibleCharField(forms.CharField):
    """A CharField whose stripping also removes invisible characters (``visible_strip``): a
    required field left "blank" with zero-width spaces is refused like one left with spaces."""

    def to_python(self, value: Any) -> str | None:
        text = super().to_python(value)
        return visible_strip(text) if self.strip and isinstance(text, str) else text
