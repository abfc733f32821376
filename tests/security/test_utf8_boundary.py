"""Query strings and form bodies that are not valid text are refused at the boundary with a short
plain-text 400 (``InvalidUtf8Middleware``), before any view decodes them with replacement.

The unit tests call the middleware with requests from ``RequestFactory`` and a view that
records whether it ran; the others go through the whole stack with the test client.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.core.files.uploadedfile import UploadedFile
from django.http import HttpRequest, HttpResponse
from django.test import Client, RequestFactory
from django.urls import reverse

from memadmin.audit.models import AuditEvent
from memadmin.lib.textinput import InvalidUtf8Middleware
from memadmin.memory.models import MemoryItem
from memadmin.providers import contract as c
from memadmin.providers.registry import provider_for
from tests.security.hostile import File, Raw, multipart_raw, urlencode_raw

FORM = "application/x-www-form-urlencoded"

#: Percent-encoded bytes that are not UTF-8: an encoded lone surrogate (high, low), a stray
#: byte, an overlong "/", a sequence cut short, a code point beyond U+10FFFF.
INVALID = {"surrogate-high": "%ED%A0%80", "surrogate-low": "x%ED%B0%80y", "ff": "%FF%FE",
           "overlong": "%C0%AF", "truncated": "%E2%82", "beyond-unicode": "%F4%90%80%80"}
#: Text that is valid, however odd: it must reach the view untouched.
VALID = {"ascii": "hello", "accents": "caf%C3%A9", "emoji": "%F0%9F%99%82",
         "nul": "a%00b", "bom": "%EF%BB%BFx", "max-code-point": "%F4%8F%BF%BF",
         "plus-and-percent": "a+b%2B%25", "empty": ""}


class Recorder:
    """The view behind the middleware: records the requests that reached it."""

    def __init__(self) -> None:
        self.seen: list[HttpRequest] = []

    def __call__(self, request: HttpRequest) -> HttpResponse:
        self.seen.append(request)
        return HttpResponse("view")


@pytest.fixture
def view() -> Recorder:
    return Recorder()


@pytest.fixture
def middleware(view: Recorder) -> InvalidUtf8Middleware:
    return InvalidUtf8Middleware(view)


def assert_refused(response: HttpResponse, view: Recorder, where: str) -> None:
    assert response.status_code == 400
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    text = response.content.decode()
    assert f"the {where} is not valid utf-8 text" in text.lower()
    assert len(text) < 200
    assert not view.seen


# ---------------------------------------------------------------------------------------------
# The middleware on its own
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("encoded", INVALID.values(), ids=INVALID.keys())
def test_an_undecodable_query_value_is_refused(middleware, view, encoded: str) -> None:
    response = middleware(RequestFactory().get(f"/w/acme/?q={encoded}&page=2"))

    assert_refused(response, view, "query string")


@pytest.mark.parametrize("encoded", INVALID.values(), ids=INVALID.keys())
def test_an_undecodable_form_value_is_refused(middleware, view, encoded: str) -> None:
    request = RequestFactory().post("/w/acme/x/", data=f"a=1&content={encoded}",
                                    content_type=FORM)

    assert_refused(middleware(request), view, "form data")


def test_an_undecodable_parameter_name_is_refused(middleware, view) -> None:
    assert_refused(middleware(RequestFactory().get("/?%ED%A0%80=1")), view, "query string")
    request = RequestFactory().post("/", data="%FF=1", content_type=FORM)
    assert_refused(middleware(request), view, "form data")


def test_raw_bytes_in_the_query_string_are_refused(middleware, view) -> None:
    # A client that does not percent-encode: WSGI hands the bytes over as ISO-8859-1 text.
    request = RequestFactory().get("/")
    request.META["QUERY_STRING"] = b"q=caf\xed\xa0\x80".decode("iso-8859-1")

    assert_refused(middleware(request), view, "query string")


def test_an_htmx_request_gets_the_same_plain_answer(middleware, view) -> None:
    request = RequestFactory().post("/", data="content=%ED%A0%80", content_type=FORM,
                                    headers={"HX-Request": "true"})

    assert_refused(middleware(request), view, "form data")


@pytest.mark.parametrize("encoded", VALID.values(), ids=VALID.keys())
def test_valid_text_reaches_the_view_unchanged(middleware, view, encoded: str) -> None:
    get = RequestFactory().get(f"/?q={encoded}")
    post = RequestFactory().post(f"/?q={encoded}", data=f"content={encoded}", content_type=FORM)

    assert middleware(get).content == b"view"
    assert middleware(post).content == b"view"
    assert view.seen == [get, post]
    assert get.GET["q"] == post.POST["content"]  # the view still reads the form


def test_a_declared_charset_is_the_one_checked(middleware, view) -> None:
    # Django decodes the query string in the charset the request's Content-Type declares:
    # every byte is ISO-8859-1 text, so there is nothing to refuse. (A urlencoded body in any
    # charset but UTF-8 Django refuses by itself with a 400.)
    request = RequestFactory().get("/?q=caf%E9%FF")
    request.encoding = "iso-8859-1"
    assert middleware(request).content == b"view"
    assert request.GET["q"] == "caf\xe9\xff"


def test_multipart_bodies_are_not_read_into_memory(middleware, view, settings) -> None:
    # With a 1 KiB in-memory cap, reading the body here would raise RequestDataTooBig; the
    # upload must reach the view's handlers, undecodable bytes and all.
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1024
    body, content_type = multipart_raw({"note": Raw("%ED%A0%80"),
                                        "file": File("big.jsonl", b"\xff" * 100_000)})
    request = RequestFactory().post("/", data=body, content_type=content_type)

    assert middleware(request).content == b"view"
    upload = request.FILES["file"]
    assert isinstance(upload, UploadedFile) and upload.size == 100_000


def test_an_oversized_form_is_left_to_django(middleware, view, settings) -> None:
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1024
    request = RequestFactory().post("/", data="content=" + "%FF" * 1000, content_type=FORM)

    assert middleware(request).content == b"view"  # the view reading request.POST gets the 400


def test_other_bodies_and_methods_are_not_read(middleware, view) -> None:
    json_post = RequestFactory().post("/", data=b'{"a": "\xff"}', content_type="application/json")
    put = RequestFactory().put("/", data="content=%FF", content_type=FORM)

    assert middleware(json_post).content == b"view"
    assert middleware(put).content == b"view"


def test_the_agent_endpoint_is_left_alone(middleware, view, settings) -> None:
    endpoint = "/" + settings.MEMADMIN_ENDPOINT_PATH
    for path in (endpoint, endpoint + "/"):
        request = RequestFactory().post(f"{path}?x=%FF", data="a=%FF", content_type=FORM)
        assert middleware(request).content == b"view"
    assert len(view.seen) == 2
    # Only that path: one that merely starts with it is checked.
    refused = RequestFactory().get(f"{endpoint}-other/?x=%FF")
    assert middleware(refused).status_code == 400


# ---------------------------------------------------------------------------------------------
# Through the whole stack
# ---------------------------------------------------------------------------------------------


@pytest.fixture
def item(local_config, namespace) -> Any:
    made = provider_for(local_config).retain(
        "facts", "", "before", "replace", operation_id="utf8-item",
        scope=c.Scope.of(namespace.partition_key), deadline=5)
    return made


@pytest.mark.django_db
def test_an_undecodable_edit_changes_nothing(client_for, item) -> None:
    url = reverse("memory:item_edit", args=["acme", "knowledge", "alice", item.id])
    before = AuditEvent.objects.count()
    for htmx in (False, True):
        body = urlencode_raw({"content": Raw("caf%ED%A0%80"), "mode": "replace",
                              "expected_revision": str(item.revision)})
        response = client_for("alice").post(url, data=body.encode(), content_type=FORM,
                                            headers={"HX-Request": "true"} if htmx else {})

        assert response.status_code == 400
        assert response["Content-Type"] == "text/plain; charset=utf-8"
    stored = MemoryItem.objects.get(pk=item.id)
    assert (stored.content, stored.revision) == ("before", item.revision)
    assert AuditEvent.objects.count() == before


@pytest.mark.django_db
def test_an_undecodable_search_is_refused_before_the_login_check(users) -> None:
    url = reverse("memory:search", args=["acme"])

    anonymous = Client().get(f"{url}?q=%ED%A0%80")
    valid = Client().get(f"{url}?q=%F0%9F%99%82")

    assert anonymous.status_code == 400
    assert valid.status_code == 302  # to the login page: the middleware let it through


@pytest.mark.django_db
def test_the_endpoint_answers_its_own_json_error(users) -> None:
    url = reverse("endpoint:endpoint")

    response = Client().post(f"{url}?x=%FF", data=b'{"operation": "\xed\xa0\x80"}',
                             content_type="application/json")

    assert response.status_code in (400, 401)
    assert response["Content-Type"] == "application/json"
    assert "error" in json.loads(response.content)


@pytest.mark.django_db
def test_a_csrf_failure_is_not_masked(users) -> None:
    # The boundary check runs first, but valid text still meets every later check.
    client = Client(enforce_csrf_checks=True)
    client.force_login(users["alice"])

    response = client.post(reverse("memory:token_mint", args=["acme"]),
                           data="name=%F0%9F%99%82", content_type=FORM)

    assert response.status_code == 403
    assert b"CSRF" in response.content
