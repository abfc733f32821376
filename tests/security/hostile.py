"""The hostile-input catalogue: hostile values by category, the page targets that take input,
and the helpers that send a value the way a hostile client would (raw bytes included).

The catalogue is data. To cover a new page, add a ``Target`` to ``TARGETS`` (its form's fields
come from ``form.base_fields``, so a field added to the form is covered without touching this
file); a URL that reads no input goes into ``NO_INPUT`` with the reason. ``test_hostile_input``
fails when a URL pattern is in neither list.

Sampling: ``MEMADMIN_HOSTILE_FULL=1`` (``make hostile-full``) sends every value of every
category to every field. Otherwise every field still gets every *category*, with the value
within the category rotated deterministically by the field's position, and values marked
``heavy`` (the slowest to send) left to the full run.
"""

from __future__ import annotations

import dataclasses
import json
import os
import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import Any
from urllib.parse import quote_plus, unquote_to_bytes

from django.contrib.auth.forms import AuthenticationForm
from django.urls import URLPattern, URLResolver, get_resolver

from memadmin.accounts.people import AccountForm
from memadmin.audit import forms as audit_forms
from memadmin.events import forms as events_forms
from memadmin.gdpr import forms as gdpr_forms
from memadmin.memory import forms as memory_forms
from memadmin.providers.forms import (
    IncidentNoteForm,
    MaintenanceForm,
    ProviderForm,
    SlaExportForm,
)
from memadmin.quarantine import forms as quarantine_forms
from memadmin.workspaces import forms as ws_forms

FULL = os.environ.get("MEMADMIN_HOSTILE_FULL", "").lower() in {"1", "true", "yes"}

# ---------------------------------------------------------------------------------------------
# How a value travels
# ---------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Raw:
    """Bytes sent exactly as given (percent-encoded here), e.g. invalid UTF-8."""

    encoded: str


@dataclasses.dataclass(frozen=True)
class Repeat:
    """The parameter sent several times (a list where one value is expected)."""

    values: tuple[str, ...]


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING = _Missing()

Value = str | Raw | Repeat | _Missing


@dataclasses.dataclass(frozen=True)
class Hostile:
    category: str
    label: str
    value: Value
    heavy: bool = False  # slow to send and render: only in the full run


def _h(category: str, values: Sequence[tuple[str, Value] | tuple[str, Value, bool]]
       ) -> list[Hostile]:
    return [Hostile(category, *v) for v in values]


MEGA = 1_000_000

#: Every category named in issue #9 part 3, in a fixed order.
CATALOGUE: dict[str, list[Hostile]] = {
    "quotes": _h("quotes", [
        ("single", "'"), ("double", '"'), ("backtick", "`"),
        ("mixed", "it's a \"quoted\" `thing`"),
    ]),
    "fts": _h("fts", [
        ("operators", "& | ! <-> :* ( )"), ("websearch", '"phrase" -not OR'),
        ("prefix-and-not", "a:* & !b | (c <-> d)"), ("open-parens", "(((("),
        ("dangling", "!"), ("distance", "<2>"), ("or-alone", "OR"),
    ]),
    "sql": _h("sql", [
        ("drop", "'; DROP TABLE x; --"), ("tautology", "1 OR 1=1"),
        ("quoted-tautology", "' OR '1'='1' --"), ("sleep", "1; SELECT pg_sleep(10)"),
        ("like", "%' AND 1=1 --"), ("backslash", "\\'; --"),
    ]),
    "html": _h("html", [
        ("script", "<script>alert(1)</script>"), ("img", "<img src=x onerror=alert(1)>"),
        ("javascript-url", "javascript:alert(1)"),
        ("textarea-escape", "</textarea><script>alert(1)</script>"),
        ("attribute-escape", '"><svg onload=alert(1)>'),
    ]),
    "htmx": _h("htmx", [
        ("attributes", 'hx-get="/x" hx-trigger="load"'),
        ("attribute-escape", '" hx-get="/x" hx-trigger="load" x="'),
        ("element", '<div hx-get="/x" hx-trigger="load">'),
    ]),
    "template": _h("template", [
        ("expression", "zz{{ 7*7 }}zz"), ("debug", "zz{% debug %}zz"),
        ("variable", "{{ request.user.password }}"), ("tag", "{% csrf_token %}"),
    ]),
    "control": _h("control", [
        ("nul-inside", "a\x00b"), ("nul", "\x00"), ("ansi", "\x1b[31mred\x1b[0m"),
        ("del", "\x7f"), ("crlf", "line\r\nX-Injected: 1"), ("backspace", "\x08\x0c"),
    ]),
    "surrogate": _h("surrogate", [
        # A Python str with a lone surrogate cannot be UTF-8-encoded by any client; it is sent
        # as the bytes a careless client would produce (surrogatepass), like the raw forms.
        ("str-high", "\ud800"), ("str-low", "x\udfffy"),
        ("raw-high", Raw("%ED%A0%80")), ("raw-low", Raw("%ED%B0%80x")),
        ("raw-not-utf8", Raw("%FF%FE")), ("raw-overlong", Raw("%C0%AF")),
    ]),
    "bidi": _h("bidi", [
        ("rlo", "\u202egnp.exe"), ("isolate", "\u2066abc\u2069"), ("zero-width", "a\u200bb"),
        ("bom", "\ufeffx"),
    ]),
    "emoji": _h("emoji", [
        ("smile", "🙂"), ("zwj-family", "👩‍👩‍👧‍👦"), ("flag", "🏳️‍🌈"),
        ("combining", "e\u0301"), ("math-digit", "𝟏"),
    ]),
    "long": _h("long", [
        ("10k-ascii", "x" * 10_000), ("10k-accents", "é" * 10_000),
        ("1m-ascii", "a" * MEGA), ("10k-tags", "<b>" * 3_334),
        ("1m-emoji", "🙂" * MEGA, True),
    ]),
    "number": _h("number", [
        ("letters", "abc"), ("negative", "-1"), ("zero", "0"),
        ("huge", "99999999999999999999999999"), ("fraction", "1.5"), ("exponent", "1e308"),
        ("nan", "NaN"), ("infinity", "Infinity"), ("hex", "0x10"),
        ("superscript", "²"), ("arabic-indic", "١٢"), ("padded", " 7 "),
        ("5000-digits", "9" * 5_000),
    ]),
    "json": _h("json", [
        ("object", '{"a": [1, {"b": null}]}'), ("array", "[]"), ("null", "null"),
        ("true", "true"), ("proto", '{"__proto__": {"x": 1}}'),
    ]),
    "date": _h("date", [
        ("month-13", "2026-13-45"), ("zeros", "0000-00-00"), ("feb-30", "2026-02-30"),
        ("far", "99999-01-01"), ("negative", "-1-01-01"), ("bad-time", "2026-01-01T25:61"),
    ]),
    "repeat": _h("repeat", [
        ("two", Repeat(("a", "b"))), ("script-second", Repeat(("", "<script>alert(1)</script>"))),
        ("hundred", Repeat(("1",) * 100)),
    ]),
    "missing": _h("missing", [("missing", MISSING), ("empty", ""), ("blank", "   ")]),
}

CATEGORIES = tuple(CATALOGUE)


def values_for(field_index: int) -> list[Hostile]:
    """The hostile values one field gets: all of them (full run), or one per category, chosen
    by rotating through the category's light values with the field's position."""
    if FULL:
        return [h for values in CATALOGUE.values() for h in values]
    chosen = []
    for offset, values in enumerate(CATALOGUE.values()):
        light = [h for h in values if not h.heavy]
        chosen.append(light[(field_index + offset) % len(light)])
    return chosen


# ---------------------------------------------------------------------------------------------
# Encoding requests by hand (the test client refuses what a hostile client sends)
# ---------------------------------------------------------------------------------------------


def _pieces(value: Any) -> list[bytes]:
    """The raw bytes of each occurrence of one parameter."""
    if value is MISSING:
        return []
    if isinstance(value, Raw):
        return [unquote_to_bytes(value.encoded)]
    if isinstance(value, Repeat):
        return [p for v in value.values for p in _pieces(v)]
    if isinstance(value, list | tuple):
        return [p for v in value for p in _pieces(v)]
    if isinstance(value, File):
        return [value.content]
    return [str(value).encode("utf-8", "surrogatepass")]


def urlencode_raw(data: dict[str, Any]) -> str:
    """``a=1&b=2`` with every value percent-encoded from its raw bytes (invalid UTF-8 too)."""
    return "&".join(f"{quote_plus(name)}={quote_plus(piece)}"
                    for name, value in data.items() for piece in _pieces(value))


@dataclasses.dataclass(frozen=True)
class File:
    name: str
    content: bytes


def multipart_raw(data: dict[str, Any]) -> tuple[bytes, str]:
    """A multipart/form-data body (raw bytes allowed anywhere) and its content type."""
    boundary = f"hostile{uuid.uuid4().hex}"
    out = bytearray()
    for name, value in data.items():
        values = value.values if isinstance(value, Repeat) else (
            value if isinstance(value, list | tuple) else [value])
        for one in values:
            if one is MISSING:
                continue
            out += f"--{boundary}\r\n".encode()
            if isinstance(one, File):
                filename = one.name.encode("utf-8", "surrogatepass").replace(b'"', b"%22")
                out += (f'Content-Disposition: form-data; name="{name}"; filename="'.encode()
                        + filename + b'"\r\nContent-Type: application/octet-stream\r\n\r\n')
            else:
                out += f'Content-Disposition: form-data; name="{name}"\r\n\r\n'.encode()
            out += b"".join(_pieces(one)) + b"\r\n"
    out += f"--{boundary}--\r\n".encode()
    return bytes(out), f"multipart/form-data; boundary={boundary}"


def import_file(value: Value) -> Value | File:
    """A hostile value as the import form's ``file``: an export line carrying it as content
    (raw bytes go into the file as they are)."""
    if value is MISSING:
        return MISSING
    if isinstance(value, Raw):
        return File("hostile.jsonl", unquote_to_bytes(value.encoded))
    if isinstance(value, Repeat):
        return Repeat(tuple(value.values))  # several plain fields named "file": not files
    line = json.dumps({"tier": "facts", "key": "", "content": value}) + "\n"
    return File("hostile.jsonl", line.encode("utf-8", "surrogatepass"))


# ---------------------------------------------------------------------------------------------
# What an answer must never contain
# ---------------------------------------------------------------------------------------------

#: (needle, why) -- a hostile value that reached the page unescaped, or rendered as a template.
UNESCAPED = [
    ("<script>alert(1)", "a <script> value appears unescaped"),
    ("<img src=x onerror", "an <img onerror> value appears unescaped"),
    ("<svg onload", "an <svg onload> value appears unescaped"),
    ('hx-get="/x"', "an htmx attribute value appears unescaped"),
    ('<div hx-get', "an htmx element value appears unescaped"),
    ("zz49zz", "{{ 7*7 }} was rendered as a template"),
    ("&#x27;False&#x27;: False", "{% debug %} was rendered as a template"),
    ("'False': False", "{% debug %} was rendered as a template"),
]


def unescaped_problems(body: str) -> list[str]:
    return [why for needle, why in UNESCAPED if needle in body]


# ---------------------------------------------------------------------------------------------
# The targets: every page view that reads a form field or a query parameter
# ---------------------------------------------------------------------------------------------


def form_fields(form: type) -> tuple[str, ...]:
    return tuple(form.base_fields)  # type: ignore[attr-defined]


Base = Callable[[Any], dict[str, Any]]


def _no_base(world: Any) -> dict[str, Any]:
    return {}


@dataclasses.dataclass(frozen=True)
class Ref:
    """A URL keyword argument taken from the world's ``kwargs`` under another name (e.g. the
    audit verification job, where ``job_id`` is otherwise the world's recount job)."""

    name: str


@dataclasses.dataclass(frozen=True)
class Target:
    """One page view fed hostile values, field by field.

    ``base`` gives valid values for every field, so a request with one hostile field reaches
    as far into the view as that field lets it. ``touches`` names the snapshots (see
    ``tests/security/test_hostile_input.py``) of the rows the form may change; ``read_audits``
    the audit actions the page writes merely by showing something (a refused decision shows
    the review queue again, and every view of quarantined content is audited), which are not
    changes.
    """

    url: str
    method: str
    user: str | None
    form: type | None = None
    params: tuple[str, ...] = ()
    base: Base = _no_base
    touches: tuple[str, ...] = ()
    read_audits: tuple[str, ...] = ()
    kwargs: dict[str, str | Ref] = dataclasses.field(default_factory=dict)
    multipart: bool = False
    live_db: bool = False  # the view reads on worker threads: data must be committed
    also_allowed: frozenset[int] = frozenset()  # statuses besides 200/302/400/409/413
    htmx: bool = False  # sent as htmx sends it: the view answers with a fragment
    label: str = ""

    @property
    def fields(self) -> tuple[str, ...]:
        return (form_fields(self.form) if self.form else ()) + self.params

    @property
    def id(self) -> str:
        return "-".join(p for p in (self.url.replace(":", "."), self.label, self.method,
                                    "htmx" if self.htmx else "") if p)


FILTERS = form_fields(memory_forms.ItemFilterForm)
#: A query parameter no view reads: pages without inputs must ignore it quietly.
JUNK = ("junk",)


def _item_edit_base(w: Any) -> dict[str, Any]:
    return {"content": "edited text", "mode": "replace", "expected_revision": str(w.revision)}


QUEUE_FILTERS = form_fields(quarantine_forms.QueueFilterForm)
VIEWED = ("quarantine.view",)


TARGETS: list[Target] = [
    # -- accounts ----------------------------------------------------------------------------
    Target("login", "POST", None, AuthenticationForm, ("next",),
           lambda w: {"username": "vic", "password": w.password, "next": "/"}),
    Target("login", "GET", None, None, ("next",)),
    Target("logout", "POST", "vic", None, ("next",)),
    Target("accounts:account_create", "POST", "ada", AccountForm, (),
           lambda w: {"username": "newbie", "email": "", "roles": ["viewer"]}, ("accounts",)),
    Target("accounts:account_active", "POST", "ada", None, ("active",),
           lambda w: {"active": "0"}, ("accounts",)),
    Target("accounts:people", "GET", "ada", None, JUNK),
    Target("accounts:2fa_verify", "POST", "vic", None, ("code", "next"),
           lambda w: {"code": "123456", "next": "/"}),
    Target("accounts:2fa_setup", "POST", "vic", None, ("code", "next"),
           lambda w: {"code": "123456", "next": "/"}),
    # -- memory: tokens --------------------------------------------------------------------------
    Target("memory:token_mint", "POST", "alice", memory_forms.AgentTokenForm, (),
           lambda w: {"name": "bot", "access": "read", "namespaces": [w.namespace_pk]},
           ("tokens",)),
    # -- memory: browse, detail, edit ----------------------------------------------------------
    Target("memory:items", "GET", "alice", memory_forms.ItemFilterForm),
    Target("memory:items", "GET", "alice", memory_forms.ItemFilterForm, htmx=True),
    Target("memory:items", "POST", "alice", memory_forms.ItemFilterForm, label="posted"),
    Target("memory:item", "GET", "carl", None, ("a", "b"), lambda w: {"a": "1", "b": "2"}),
    Target("memory:item_edit", "POST", "alice", memory_forms.ItemEditForm, (), _item_edit_base,
           ("memory",)),
    Target("memory:item_edit", "POST", "alice", memory_forms.ItemEditForm, (), _item_edit_base,
           ("memory",), htmx=True),
    # A revision the item never had is "not found" (404), like the item itself.
    Target("memory:item_restore", "POST", "alice", None, ("revision", "expected"),
           lambda w: {"revision": "1", "expected": str(w.revision)}, ("memory",),
           also_allowed=frozenset({404})),
    Target("memory:recall", "GET", "olga", memory_forms.RecallPreviewForm, (),
           lambda w: {"text": "hello", "token_budget": "100"}),
    Target("memory:search", "GET", "carl", memory_forms.SearchForm, (),
           lambda w: {"q": "hello"}, live_db=True),
    Target("memory:export", "GET", "alice", memory_forms.ItemFilterForm),
    # -- memory: freeze and lift at every level ---------------------------------------------------
    Target("memory:resource_freeze", "POST", "ada", memory_forms.FreezeForm, (),
           lambda w: {"kind": "freeze", "reason": "audit"}, ("freezes", "memory")),
    Target("memory:namespace_freeze", "POST", "alice", memory_forms.FreezeForm, (),
           lambda w: {"kind": "freeze", "reason": "audit"}, ("freezes", "memory")),
    Target("memory:item_freeze", "POST", "carl", memory_forms.FreezeForm, (),
           lambda w: {"kind": "legal_hold", "reason": "case 17"}, ("freezes", "memory")),
    Target("memory:resource_lift", "POST", "ada", memory_forms.LiftForm, (),
           lambda w: {"kind": "freeze"}, ("freezes", "memory")),
    Target("memory:namespace_lift", "POST", "alice", memory_forms.LiftForm, (),
           lambda w: {"kind": "freeze"}, ("freezes", "memory")),
    Target("memory:item_lift", "POST", "carl", memory_forms.LiftForm, (),
           lambda w: {"kind": "legal_hold"}, ("freezes", "memory")),
    # -- memory: delete, export, import -----------------------------------------------------------
    Target("memory:items_delete", "POST", "alice", None, ("ids", "confirm"),
           lambda w: {"ids": [w.item_id], "confirm": "yes"}, ("memory",)),
    Target("memory:items_delete_matching", "POST", "alice", memory_forms.BulkDeleteForm,
           FILTERS + ("confirm",),
           lambda w: {"confirm": "yes", "expected": "1", "tier": "pins"}, ("memory", "jobs")),
    Target("memory:export_namespace", "GET", "alice", memory_forms.ItemFilterForm),
    Target("memory:export_namespace", "POST", "alice", memory_forms.ExportForm, FILTERS,
           lambda w: {"format": "jsonl"}, ("jobs",)),
    Target("memory:export_resource", "POST", "ada", memory_forms.ExportForm, (),
           lambda w: {"format": "zip"}, ("jobs",)),
    Target("memory:export_workspace", "POST", "alice", memory_forms.ExportForm, (),
           lambda w: {"format": "zip"}, ("jobs",)),
    # -- memory: retention ---------------------------------------------------------------------
    Target("memory:retention_namespace", "POST", "alice", memory_forms.RetentionForm, (),
           lambda w: {"act": "set", "tier": "", "action": "archive", "rule": "idle",
                      "days": "30"}, ("retention",)),
    Target("memory:retention_resource", "POST", "ada", memory_forms.RetentionForm, (),
           lambda w: {"act": "set", "tier": "daily", "action": "delete", "rule": "age",
                      "days": "7"}, ("retention",)),
    Target("memory:import", "GET", "alice", None, ("namespace",),
           lambda w: {"namespace": w.namespace_pk}),
    Target("memory:import", "POST", "alice", memory_forms.ImportForm, (),
           lambda w: {"namespace": w.namespace_pk,
                      "file": File("ok.jsonl", b'{"tier": "facts", "key": "", '
                                               b'"content": "imported"}\n')},
           ("memory", "jobs"), multipart=True),
    Target("memory:import_start", "POST", "alice", None, ("token",),
           lambda w: {"token": "not-a-token"}, ("memory", "jobs")),
    # -- workspaces: settings, credentials, alerts ------------------------------------------------
    Target("workspaces:settings", "POST", "ada", ws_forms.WorkspaceSettingsForm, (),
           lambda w: {"four_eyes_erasure": "on", "subject_request_due_days": "20",
                      "health_retention_days": "10"}, ("workspace",)),
    Target("workspaces:credential_mint", "POST", "ada", ws_forms.AdminCredentialForm, (),
           lambda w: {"name": "central"}, ("credentials",)),
    Target("workspaces:metrics_token_mint", "POST", "ada", ws_forms.MetricsTokenForm, (),
           lambda w: {"lifetime": "30"}, ("credentials",)),
    Target("workspaces:alert_add", "POST", "ada", ws_forms.AlertTargetForm, (),
           lambda w: {"kind": "webhook", "target": "https://hooks.example.com/x"},
           ("alerts",)),
    # -- events: memory-event webhooks -----------------------------------------------------------
    Target("events:endpoint_add", "POST", "olga", events_forms.EndpointCreateForm, (),
           lambda w: {"name": "warehouse", "url": "https://hooks.invalid/new",
                      "event_types": ["item.deleted"], "secret": ""}, ("webhooks",)),
    Target("events:endpoint_edit", "POST", "olga", events_forms.EndpointForm, (),
           lambda w: {"name": "siem", "url": "https://hooks.invalid/edited",
                      "event_types": ["item.created", "subject.erased"]}, ("webhooks",)),
    Target("events:endpoint_toggle", "POST", "ada", None, ("enabled",),
           lambda w: {"enabled": "0"}, ("webhooks",)),
    # -- workspaces: members and roles ------------------------------------------------------------
    Target("workspaces:member_add", "POST", "ada", ws_forms.MemberForm, (),
           lambda w: {"username": "mallory", "roles": ["viewer"]}, ("roles",)),
    Target("workspaces:member_roles", "POST", "ada", ws_forms.MemberRolesForm, (),
           lambda w: {"roles": ["viewer", "compliance"]}, ("roles",),
           kwargs={"username": "vic"}),
    Target("workspaces:owner_add", "POST", "ada", ws_forms.OwnerForm, (),
           lambda w: {"username": "mallory", "namespace": w.namespace_pk}, ("roles",)),
    Target("workspaces:owner_remove", "POST", "ada", ws_forms.OwnerForm, (),
           lambda w: {"username": "nora", "namespace": w.namespace_pk}, ("roles",)),
    # -- workspaces: resources and namespaces -----------------------------------------------------
    Target("workspaces:resource_create", "POST", "ada", ws_forms.ResourceForm, (),
           lambda w: {"slug": "fresh", "provider": w.provider_pk, "description": "d",
                      "max_bytes": "1024", "item_max_bytes": "4096", "tools": "[]"},
           ("resources",)),
    Target("workspaces:resource_edit", "POST", "ada", ws_forms.ResourceEditForm, (),
           lambda w: {"description": "d", "max_bytes": "2048", "item_max_bytes": "4096",
                      "tools": "[]"}, ("resources",)),
    Target("workspaces:namespace_create", "POST", "ada", ws_forms.NamespaceForm, (),
           lambda w: {"slug": "carol", "description": "d", "quota_bytes": "",
                      "partition_key": ""}, ("namespaces",)),
    Target("workspaces:namespace_edit", "POST", "ada", ws_forms.NamespaceEditForm, (),
           lambda w: {"description": "d", "quota_bytes": "100000"}, ("namespaces",)),
    # -- providers --------------------------------------------------------------------------------
    # Remote stores at addresses of the documentation range (RFC 5737), not names: the form
    # checks the address of every URL it is sent, and a name is looked up each time. The
    # resolver here slows a burst of lookups of one name to 60-110 ms each, ~45 s a run.
    Target("providers:create", "POST", "olga", ProviderForm, (),
           lambda w: {"name": "Remote two", "slug": "remote-two", "kind": "http",
                      "url": "https://192.0.2.10/oc-memory",
                      "health_deadline_ms": "", "request_deadline_ms": "10000",
                      "enabled": "on", "credential": "s3cret"}, ("providers",)),
    Target("providers:edit", "POST", "olga", ProviderForm, (),
           lambda w: {"name": "Built-in", "url": "", "health_deadline_ms": "200",
                      "request_deadline_ms": "10000", "enabled": "on", "probed": "on"},
           ("providers",), kwargs={"provider": "builtin"}, label="local"),
    Target("providers:edit", "POST", "ada", ProviderForm, (),
           lambda w: {"name": "Remote", "url": "https://192.0.2.20/oc-memory",
                      "health_deadline_ms": "1000", "request_deadline_ms": "10000",
                      "enabled": "on", "clear_credential": "on"},
           ("providers",), kwargs={"provider": "remote"}, label="remote"),
    Target("providers:maintenance_add", "POST", "olga", MaintenanceForm, (),
           lambda w: {"provider": "", "starts_at": "2030-01-01T10:00",
                      "ends_at": "2030-01-01T11:00", "reason": "upgrade"}, ("maintenance",)),
    Target("providers:incident_note", "POST", "olga", IncidentNoteForm, ("incident",),
           lambda w: {"text": "a note", "incident": w.kwargs["incident"]}, ("maintenance",),
           kwargs={"provider": "builtin"}),
    Target("providers:sla_export", "GET", "vic", SlaExportForm, (),
           lambda w: {"what": "checks", "days": "7"}),
    # -- quarantine: the review queue and decisions (the filters travel with a decision) -------
    Target("quarantine:queue", "GET", "carl", quarantine_forms.QueueFilterForm),
    Target("quarantine:queue", "GET", "carl", quarantine_forms.QueueFilterForm, htmx=True),
    Target("quarantine:decide", "POST", "carl", quarantine_forms.DecisionForm, QUEUE_FILTERS,
           lambda w: {"act": f"keep:{w.entry_id}", "note": "seen it"},
           ("quarantine", "memory"), read_audits=VIEWED, label="one"),
    Target("quarantine:decide", "POST", "carl", quarantine_forms.DecisionForm, QUEUE_FILTERS,
           lambda w: {"act": "allow:selected", "ids": [w.entry_id], "allow": "on",
                      "note": "benign"}, ("quarantine", "memory"), read_audits=VIEWED,
           label="selected"),
    Target("quarantine:decide", "POST", "ada", quarantine_forms.DecisionForm, QUEUE_FILTERS,
           lambda w: {"act": "purge:matching", "state": "pending",
                      "namespace": w.namespace_pk}, ("quarantine", "memory"),
           read_audits=VIEWED, label="matching"),
    # -- subject requests ------------------------------------------------------------------------
    Target("gdpr:list", "GET", "carl", gdpr_forms.RequestFilterForm),
    Target("gdpr:list", "POST", "carl", gdpr_forms.RequestSearchForm, label="search"),
    Target("gdpr:new", "POST", "carl", gdpr_forms.RequestCreateForm, (),
           lambda w: {"kind": "erasure", "subject_id": "user:jane.doe@example.com",
                      "reason": "Art. 17 request of 3 May"}, ("requests",)),
    Target("gdpr:override", "POST", "carl", gdpr_forms.ReasonForm, (),
           lambda w: {"reason": "court order 17"}, ("requests",), label="override"),
    Target("gdpr:resolve_step", "POST", "carl", gdpr_forms.StepResolveForm, (),
           lambda w: {"step": w.partial_step, "justification": "handled by post"},
           ("requests",), kwargs={"request_id": Ref("partial_request_id")}),
    # carl's rectification: one correction of its subject's item (tests/security/
    # test_hostile_input.py's world).
    Target("gdpr:items", "POST", "carl", gdpr_forms.CorrectionForm, (),
           lambda w: {"step_id": w.rect_step, "partition": w.rect_partition,
                      "item_id": w.rect_item, "content": "corrected text"},
           ("requests", "memory"), kwargs={"request_id": Ref("rect_request_id")}),
    Target("gdpr:extend", "POST", "carl", gdpr_forms.ExtendForm, (),
           lambda w: {"months": "1", "reason": "the subject sent more stores to check"},
           ("requests",)),
    # ada asked for the erasure awaiting approval: carl is the second pair of eyes.
    Target("gdpr:deny", "POST", "carl", gdpr_forms.ReasonForm, (),
           lambda w: {"reason": "no legal basis"}, ("requests",),
           kwargs={"request_id": Ref("awaiting_request_id")}, label="deny"),
    # -- audit trail -----------------------------------------------------------------------------
    Target("audit:list", "GET", "carl", audit_forms.AuditFilterForm),
    Target("audit:list", "GET", "carl", audit_forms.AuditFilterForm, htmx=True),
    Target("audit:export", "GET", "carl", audit_forms.AuditFilterForm, kwargs={"fmt": "csv"},
           label="csv"),
    Target("audit:export", "GET", "ada", audit_forms.AuditFilterForm, kwargs={"fmt": "jsonl"},
           label="jsonl"),
]

#: Pages that read no form field and no query parameter: they get junk parameters only, which
#: they must ignore (GET) -- or are actions on the object in the URL (POST, nothing to feed).
JUNK_PAGES: list[Target] = [
    Target("events:endpoints", "GET", "olga", None, JUNK),
    Target("events:endpoint", "GET", "ada", None, JUNK),
    Target("workspaces:list", "GET", "vic", None, JUNK),
    Target("workspaces:home", "GET", "alice", None, JUNK),
    Target("workspaces:members", "GET", "ada", None, JUNK),
    Target("workspaces:resource", "GET", "alice", None, JUNK),
    Target("workspaces:namespace", "GET", "alice", None, JUNK),
    Target("workspaces:settings", "GET", "ada", None, JUNK),
    Target("workspaces:resource_create", "GET", "ada", None, JUNK),
    Target("workspaces:resource_edit", "GET", "ada", None, JUNK),
    Target("workspaces:namespace_create", "GET", "ada", None, JUNK),
    Target("workspaces:namespace_edit", "GET", "ada", None, JUNK),
    Target("memory:tokens", "GET", "alice", None, JUNK),
    Target("memory:item_edit", "GET", "alice", None, JUNK),
    Target("providers:list", "GET", "olga", None, JUNK),
    Target("providers:create", "GET", "olga", None, JUNK),
    Target("providers:edit", "GET", "olga", None, JUNK, kwargs={"provider": "builtin"}),
    Target("providers:discover", "GET", "ada", None, JUNK, kwargs={"provider": "builtin"}),
    Target("providers:health", "GET", "olga", None, JUNK),
    Target("providers:health_json", "GET", "olga", None, JUNK),
    Target("providers:maintenance", "GET", "olga", None, JUNK),
    Target("providers:history", "GET", "olga", None, JUNK, kwargs={"provider": "builtin"}),
    Target("jobs:detail", "GET", "alice", None, JUNK),
    Target("jobs:list", "GET", "alice", None, JUNK),
    Target("quarantine:allowed", "GET", "carl", None, JUNK),
    Target("gdpr:new", "GET", "carl", None, JUNK),
    Target("gdpr:detail", "GET", "carl", None, JUNK),
    Target("gdpr:detail", "GET", "ada", None, JUNK, htmx=True),
    Target("gdpr:items", "GET", "carl", None, JUNK,
           kwargs={"request_id": Ref("rect_request_id")}),
    Target("audit:verify_result", "GET", "carl", None, JUNK,
           kwargs={"job_id": Ref("verify_job_id")}),
    Target("audit:verify_result", "GET", "carl", None, JUNK,
           kwargs={"job_id": Ref("verify_job_id")}, htmx=True),
]

NO_INPUT: dict[str, str] = {
    name: "an action on the object named in the URL; it reads no form field or parameter"
    for name in (
        "memory:token_revoke", "workspaces:credential_revoke", "workspaces:alert_remove",
        "workspaces:alert_test", "events:endpoint_test", "events:endpoint_rotate",
        "events:endpoint_remove",
        "workspaces:metrics_token_revoke", "workspaces:secret_reactivate",
        "accounts:2fa_recovery_codes",
        "workspaces:resource_delete", "workspaces:namespace_delete",
        "workspaces:namespace_recount", "providers:delete", "providers:test",
        "providers:check_now", "jobs:cancel", "memory:export_download",
        "quarantine:allowed_remove", "workspaces:setting_change_confirm",
        "workspaces:setting_change_cancel", "providers:maintenance_end", "providers:badge_rotate",
    )
}
NO_INPUT.update({
    name: "starts a job for the workspace in the URL; it reads no form field or parameter"
    for name in ("quarantine:rescan", "quarantine:remote_sync", "audit:verify")
})
NO_INPUT.update({
    name: "a download of the request named in the URL; it reads no parameter"
    for name in ("gdpr:receipt", "gdpr:access_download")
})
NO_INPUT.update({
    name: "an action on the request named in the URL; it reads only the ReasonForm that "
          "gdpr:override and gdpr:deny are fed through"
    for name in ("gdpr:submit", "gdpr:approve", "gdpr:cancel", "gdpr:retry", "gdpr:preview",
                 "gdpr:close", "gdpr:lift")
})
NO_INPUT["gdpr:receipt_keys"] = "the published public keys of receipts; it reads no parameter"
NO_INPUT.update({
    name: "public badge named by the key in the URL; it reads no parameter (unknown keys 404, "
          "covered by tests/providers/test_status_pages.py)"
    for name in ("providers:badge_svg", "providers:badge_json", "providers:badge_provider_svg",
                 "providers:badge_provider_json")
})
NO_INPUT["accounts:account_reset_2fa"] = ("an action on the account named in the URL; it reads "
                                          "no form field or parameter")
NO_INPUT["accounts:set_password"] = ("Django's PasswordResetConfirmView behind a one-time link; "
                                     "a wrong link shows the expired page (tests/accounts)")
NO_INPUT["accounts:sso_start"] = "single sign-on, off in this suite (tests/accounts/test_sso.py)"
NO_INPUT["accounts:sso_callback"] = ("single sign-on's callback, off in this suite "
                                     "(tests/accounts/test_sso.py feeds it a forged state)")
NO_INPUT["providers:metrics"] = "bearer-token endpoint; covered by test_hostile_metrics_tokens"
NO_INPUT["endpoint:endpoint"] = "the JSON endpoint; covered by the /oc-memory tests"


def url_names() -> dict[str, set[str]]:
    """Every named URL of the site, with the URL keyword arguments it needs."""
    found: dict[str, set[str]] = {}

    def walk(patterns: list[Any], namespaces: list[str], kwargs: set[str]) -> None:
        for pattern in patterns:
            converters = set(getattr(pattern.pattern, "converters", {}))
            if isinstance(pattern, URLResolver):
                ns = [pattern.namespace] if pattern.namespace else []
                walk(pattern.url_patterns, namespaces + ns, kwargs | converters)
            elif isinstance(pattern, URLPattern) and pattern.name:
                found[":".join([*namespaces, pattern.name])] = kwargs | converters

    walk(get_resolver().url_patterns, [], set())
    return found


def cases(target: Target) -> Iterator[tuple[str, Hostile]]:
    """(field, hostile value) pairs for one target."""
    for index, name in enumerate(target.fields):
        for hostile in values_for(index + len(target.url)):
            yield name, hostile

