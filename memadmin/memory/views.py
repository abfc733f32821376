"""Memory pages: browse, inspect, edit, freeze, delete, export, search, recall preview, and
agent tokens (owners mint them for the namespaces they own)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import itertools
import json
from collections.abc import Iterator
from typing import Any
from uuid import UUID

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.files.storage import default_storage
from django.core.files.uploadhandler import FileUploadHandler, StopUpload
from django.db.models import Exists, OuterRef
from django.http import (
    FileResponse,
    Http404,
    HttpResponse,
    HttpResponseBase,
    StreamingHttpResponse,
)
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.csrf import csrf_exempt, csrf_protect
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import HttpResponseClientRedirect

from memadmin.audit.services import Actor
from memadmin.jobs.models import Job
from memadmin.lib.http import AuthenticatedHttpRequest, posted
from memadmin.memory import exports, forms, imports, selectors
from memadmin.memory.forms import AgentTokenForm
from memadmin.memory.models import AgentToken
from memadmin.memory.services import (
    FreezeSubject,
    agent_token_mint,
    agent_token_revoke,
    filters_for_audit,
    memory_bulk_delete_start,
    memory_freeze_lift,
    memory_freeze_place,
    memory_item_restore,
    memory_item_update,
    memory_items_delete,
)
from memadmin.privacy import selectors as privacy_selectors
from memadmin.providers import contract as c
from memadmin.providers import wire
from memadmin.providers.registry import namespace_scope, provider_for
from memadmin.workspaces import access
from memadmin.workspaces import selectors as ws_selectors
from memadmin.workspaces.context import ws_context
from memadmin.workspaces.models import Namespace


def _manageable_tokens(user, workspace):
    """Tokens whose every namespace the user owns (admins and workspace owners: all)."""
    owned = access.owned_namespaces(user, workspace)
    tokens = AgentToken.objects.filter(workspace=workspace)
    if access.can(user, "manage_workspace", workspace):
        return tokens
    foreign = AgentToken.namespaces.through.objects.filter(
        agenttoken_id=OuterRef("pk")).exclude(namespace_id__in=owned.values("pk"))
    return tokens.exclude(Exists(foreign))


def _curl_example(endpoint: str, secret: str, partition: str) -> str:
    """A recall an owner can paste into a shell to try a new token (the deadline is computed
    by the shell: a fixed one would have passed by the time it is pasted)."""
    body = ('{"version": 1, "operation": "recall", "operationId": "try-1", '
            f'"partition": "{partition}", '
            '"deadlineAt": "\'$(date -u -d "+10 seconds" +%Y-%m-%dT%H:%M:%SZ)\'", '
            '"input": {"text": "hello"}}')
    return (f"curl -sS -X POST {endpoint} \\\n"
            f"  -H 'Authorization: Bearer {secret}' \\\n"
            "  -H 'Content-Type: application/json' \\\n"
            f"  -d '{body}'")


def _page(request: AuthenticatedHttpRequest, workspace, form, *, secret: str | None = None,
          status: int = 200, minted: AgentToken | None = None) -> HttpResponse:
    tokens = (_manageable_tokens(request.user, workspace)
              .prefetch_related("namespaces__resource").order_by("-created_at"))
    endpoint = curl = None
    if secret is not None:
        from django.conf import settings

        endpoint = request.build_absolute_uri("/" + settings.MEMADMIN_ENDPOINT_PATH)
        first = minted.namespaces.order_by("slug").first() if minted is not None else None
        if first is not None:
            curl = _curl_example(endpoint, secret, first.partition_key)
    return render(request, "memory/tokens.html", ws_context(
        request, workspace, tokens=list(tokens), form=form, secret=secret, tab="tokens",
        endpoint=endpoint, curl=curl,
        can_reactivate=access.can(request.user, "manage_workspace", workspace),
        can_mint=access.owned_namespaces(request.user, workspace).exists()),
        status=status)


@require_GET
@login_required
def token_list(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    workspace = access.get_workspace(request.user, slug)
    owned = access.owned_namespaces(request.user, workspace)
    return _page(request, workspace, AgentTokenForm(namespaces=owned))


@require_POST
@login_required
def token_mint(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    workspace = access.get_workspace(request.user, slug)
    owned = access.owned_namespaces(request.user, workspace)
    if not owned.exists():
        raise PermissionDenied("you own no namespace here")
    form = AgentTokenForm(request.POST, namespaces=owned)
    if not form.is_valid():
        return _page(request, workspace, form, status=400)
    try:
        token, secret = agent_token_mint(
            actor=Actor.of(request.user), workspace=workspace,
            namespaces=list(form.cleaned_data["namespaces"]),
            access=form.cleaned_data["access"], name=form.cleaned_data["name"],
            lifetime_days=form.cleaned_data["lifetime"])
    except ValidationError as exc:
        form.add_error(None, exc)
        return _page(request, workspace, form, status=400)
    # The secret is shown in this response only; it is never stored or shown again.
    return _page(request, workspace, AgentTokenForm(namespaces=owned), secret=secret,
                 minted=token)


@require_POST
@login_required
def token_revoke(request: AuthenticatedHttpRequest, slug: str, token_id: UUID) -> HttpResponse:
    workspace = access.get_workspace(request.user, slug)
    token = _manageable_tokens(request.user, workspace).filter(pk=token_id).first()
    if token is None:
        raise Http404("not found")
    agent_token_revoke(actor=Actor.of(request.user), token=token)
    messages.success(request, f"Token {token.prefix}… revoked.")
    return redirect("memory:tokens", workspace.slug)


# -- browse, inspect, edit, freeze, delete, export, search, recall preview ---------------------


def _target(request: AuthenticatedHttpRequest, slug: str, resource: str, namespace: str,
            capability: str = "view_content") -> tuple[Any, Any, Any]:
    workspace = access.get_workspace(request.user, slug)
    res = access.get_resource(request.user, workspace, resource)
    ns = access.get_namespace(request.user, res, namespace, capability)
    return workspace, res, ns


def _when(value: Any) -> str:
    """A time for a sentence: "1 Dec 2026 at 07:25 UTC"."""
    import datetime as dt

    if isinstance(value, str):
        try:
            value = dt.datetime.fromisoformat(value)
        except ValueError:
            return value[:16]
    if not isinstance(value, dt.datetime):
        return ""
    value = value.astimezone(dt.UTC)
    return f"{value.day} {value:%b %Y} at {value:%H:%M} UTC"


def _freeze_sentence(kind: str | None, by: Any, at: Any, reason: Any) -> str:
    what = "put it on legal hold" if kind == "legal_hold" else "froze it"
    return f"{by or 'Someone'} {what} on {_when(at)}, because: “{reason}”."


def _frozen_sentence(res: Any, ns: Any, item: c.Item) -> str:
    """Who froze the item (or what holds it), when and why, in plain words; empty if free."""
    if not item.frozen:
        return ""
    for freeze in reversed(selectors.active_freezes(res, ns, item.id)):
        return _freeze_sentence(freeze.kind, freeze.created_by_label, freeze.created_at,
                                freeze.reason)
    return "It is frozen in the store."


def _provider_error_text(error: c.ProviderError) -> str:
    if isinstance(error, c.Frozen) and error.details:
        d = error.details
        said = _freeze_sentence(d.get("kind"), d.get("by"), d.get("at"), d.get("reason"))
        return f"Nothing was saved: {said} Writes are refused until it is lifted."
    if isinstance(error, c.Timeout):
        return "The provider did not answer in time. Nothing was changed; try again."
    if isinstance(error, c.Unsupported):
        return "This provider does not support that operation."
    return error.message


def _whole(value: str) -> int | None:
    """A whole number written in ASCII digits, or None. (``str.isdigit`` also takes "²" and
    5,000-digit strings, on which ``int()`` raises: a 500.)"""
    return int(value) if value.isascii() and value.isdigit() and len(value) <= 18 else None


@require_http_methods(["GET", "POST"])
@login_required
def item_list(request: AuthenticatedHttpRequest, slug: str, resource: str,
              namespace: str) -> HttpResponse:
    workspace, res, ns = _target(request, slug, resource, namespace)
    if request.method == "POST":
        # The filter form posts, so a typed subject id never reaches a URL: valid filters come
        # back as a GET link whose subject is an opaque token.
        posted = forms.ItemFilterForm(request.POST)
        if posted.is_valid():
            query = posted.query_without_cursor()
            return redirect(request.path + (f"?{query}" if query else ""))
    form = (posted if request.method == "POST"
            else forms.ItemFilterForm(request.GET or None))
    page, error = None, None
    if form.is_bound and not form.is_valid():
        error = "Some filters are not valid; see the form."
        status = 400
    else:
        if not form.is_bound:
            form = forms.ItemFilterForm({})
            form.is_valid()
        status = 200
        try:
            page = provider_for(res.provider).list_items(
                form.filters(), cursor=form.cleaned_data.get("cursor") or None, limit=50,
                scope=namespace_scope(ns), deadline=selectors.deadline_of(res.provider))
        except c.ProviderError as exc:
            error, status = _provider_error_text(exc), 400 if isinstance(
                exc, c.InvalidRequest) else 503
    row = ws_selectors.namespace_row(user=request.user, namespace=ns)
    rows, total = [], None
    if page is not None:
        page = dataclasses.replace(page, items=selectors.shown_items(page.items))
        q = form.cleaned_data.get("q")
        rows = [(item, selectors.highlighted(item.content, q)) for item in page.items]
        if not request.htmx:  # "Load more" pages do not recount
            total = selectors.matching_total(res.provider, form.filters(), namespace_scope(ns),
                                             namespace_items=row.items)
    template = "memory/items.html#rows" if request.htmx and page else "memory/items.html"
    return render(request, template, ws_context(
        request, workspace, resource=res, namespace=ns, form=form, page=page, error=error,
        rows=rows, total=total, row=row, freezes=selectors.active_freezes(res, ns),
        can_edit=access.can(request.user, "edit_memory", workspace, ns),
        query=form.query_without_cursor()), status=status)


def _detail_context(request: AuthenticatedHttpRequest, workspace: Any, res: Any, ns: Any,
                    detail: c.ItemDetail, **extra: Any) -> dict[str, Any]:
    from memadmin.quarantine.models import QuarantineEntry

    detail, withheld = selectors.shown_detail(detail)
    revisions = {r.revision: r for r in detail.revisions}
    diff, diff_withheld = None, False
    a, b = request.GET.get("a", ""), request.GET.get("b", "")
    if _whole(b) in revisions and _whole(a) not in revisions:
        # Only "with" chosen: compare it with its predecessor.
        earlier = [n for n in revisions if n < int(b)]
        a = str(max(earlier)) if earlier else b
    chosen = _whole(a) in revisions and _whole(b) in revisions
    if not chosen:
        a, b = selectors.default_comparison(list(revisions))
    if chosen:
        if withheld & {int(a), int(b)}:
            diff_withheld = True  # a quarantined version is compared only in the review queue
        else:
            diff = selectors.revision_diff(revisions[int(a)].content,
                                           revisions[int(b)].content)
    quarantine = (QuarantineEntry.objects.filter(provider=res.provider, item_ref=detail.item.id,
                                                 state="pending").first()
                  if detail.item.quarantine == "pending" else None)
    return ws_context(
        request, workspace, resource=res, namespace=ns, detail=detail, item=detail.item,
        revisions=list(reversed(detail.revisions)), diff=diff, diff_a=a, diff_b=b,
        freeze_text=_frozen_sentence(res, ns, detail.item),
        diff_withheld=diff_withheld, withheld=withheld,
        quarantine=quarantine, freezes=selectors.active_freezes(res, ns, detail.item.id),
        can_edit=access.can(request.user, "edit_memory", workspace, ns),
        can_hold=access.can(request.user, "legal_hold", workspace),
        pii_labels=privacy_selectors.item_labels(res.provider, detail.item.id), **extra)


@require_GET
@login_required
def item_detail(request: AuthenticatedHttpRequest, slug: str, resource: str, namespace: str,
                item_id: str) -> HttpResponse:
    workspace, res, ns = _target(request, slug, resource, namespace)
    try:
        detail = provider_for(res.provider).get_item(
            item_id, scope=namespace_scope(ns), deadline=selectors.deadline_of(res.provider))
    except c.NotFound:
        raise Http404("not found") from None
    except c.ProviderError as exc:
        messages.error(request, _provider_error_text(exc))
        return redirect("memory:items", workspace.slug, res.slug, ns.slug)
    return render(request, "memory/item.html",
                            _detail_context(request, workspace, res, ns, detail))


@require_http_methods(["GET", "POST"])
@login_required
def item_edit(request: AuthenticatedHttpRequest, slug: str, resource: str, namespace: str,
              item_id: str) -> HttpResponse:
    """The inline editor. A save against a stale revision shows both versions side by side;
    nothing typed is lost."""
    workspace, res, ns = _target(request, slug, resource, namespace, "edit_memory")
    provider, scope = provider_for(res.provider), namespace_scope(ns)
    deadline = selectors.deadline_of(res.provider)
    try:
        detail = provider.get_item(item_id, scope=scope, deadline=deadline)
    except c.NotFound:
        raise Http404("not found") from None
    if detail.item.quarantine == "pending":
        raise PermissionDenied("quarantined items are reviewed in the quarantine queue")
    expiry = detail.item.expires_at
    form = forms.ItemEditForm(posted(request), initial={
        "content": detail.item.content, "expected_revision": detail.item.revision,
        "expires_at": expiry.astimezone(dt.UTC).replace(tzinfo=None) if expiry else None})
    conflict = None
    status = 200
    if request.method == "POST":
        if form.is_valid():
            try:
                wanted = form.cleaned_data["expires_at"]
                changed = "expires_at" in form.data and wanted != (
                    expiry.replace(second=0, microsecond=0) if expiry else None)
                result = memory_item_update(
                    actor=Actor.of(request.user), namespace=ns, item_id=item_id,
                    content=form.cleaned_data["content"], mode=form.cleaned_data["mode"],
                    expected_revision=form.cleaned_data["expected_revision"],
                    expires_at=wanted if changed else c.KEEP)
            except c.Conflict:
                # Show theirs beside yours and let the next save target the current revision.
                detail = provider.get_item(item_id, scope=scope, deadline=deadline)
                conflict = selectors.shown_item(detail.item)
                data = request.POST.copy()
                data["expected_revision"] = str(detail.item.revision)
                form = forms.ItemEditForm(data)
                form.is_valid()
                status = 409
            except c.ProviderError as exc:
                form.add_error("content", _provider_error_text(exc))
                status = 409 if isinstance(exc, c.Frozen) else 400
            else:
                _saved(request, result, "Saved.")
                url = reverse("memory:item", args=[workspace.slug, res.slug, ns.slug, item_id])
                return HttpResponseClientRedirect(url) if request.htmx else redirect(url)
        else:
            status = 400
    extra: dict[str, Any] = {}
    if conflict is not None:
        shown, withheld = selectors.shown_detail(detail)
        latest = shown.revisions[-1] if shown.revisions else None
        extra = {"conflict_by": latest.actor if latest else "",
                 "merge": selectors.merge_view(form.cleaned_data.get("content") or "",
                                               conflict.content),
                 # The item page's revision table is swapped in beside the editor (htmx).
                 "revisions": list(reversed(shown.revisions)), "withheld": withheld,
                 "can_edit": True}
    template = "memory/edit.html#editor" if request.htmx else "memory/edit.html"
    return render(request, template, ws_context(
        request, workspace, resource=res, namespace=ns, item=detail.item, form=form,
        conflict=conflict, limit=res.item_max_bytes, **extra), status=status)


@require_POST
@login_required
def item_restore(request: AuthenticatedHttpRequest, slug: str, resource: str, namespace: str,
                 item_id: str) -> HttpResponse:
    workspace, res, ns = _target(request, slug, resource, namespace, "edit_memory")
    revision, expected = request.POST.get("revision", ""), request.POST.get("expected", "")
    if _whole(revision) is None or _whole(expected) is None:
        return HttpResponse("revision and expected must be whole numbers", status=400)
    try:
        result = memory_item_restore(actor=Actor.of(request.user), namespace=ns,
                                     item_id=item_id, revision=int(revision),
                                     expected_revision=int(expected))
    except c.NotFound:
        raise Http404("not found") from None
    except c.Conflict:
        messages.error(request, "The item changed meanwhile; look at it again before restoring.")
    except c.ProviderError as exc:
        messages.error(request, _provider_error_text(exc))
    else:
        _saved(request, result, f"Revision {revision} restored as a new revision.")
    return redirect("memory:item", workspace.slug, res.slug, ns.slug, item_id)


def _saved(request: AuthenticatedHttpRequest, result: c.RetainResult, done: str) -> None:
    """Say a write happened, and whether the scanner quarantined the new version."""
    if result.quarantined:
        messages.warning(request, f"{done} The prompt-injection scanner quarantined this "
                                  "version: agents will not see it until compliance reviews it.")
    else:
        messages.success(request, done)


def _freeze_subject(request: AuthenticatedHttpRequest, slug: str, resource: str,
                    namespace: str | None, item_id: str | None
                    ) -> tuple[Any, FreezeSubject, str]:
    workspace = access.get_workspace(request.user, slug)
    res = access.get_resource(request.user, workspace, resource)
    ns = access.get_namespace(request.user, res, namespace) if namespace else None
    subject = FreezeSubject(res, ns, item_id)
    if ns is not None:
        back = (reverse("memory:item", args=[slug, resource, namespace, item_id]) if item_id
                else reverse("memory:items", args=[slug, resource, namespace]))
    else:
        back = reverse("workspaces:resource", args=[slug, resource])
    return workspace, subject, back


def _may_freeze(request: AuthenticatedHttpRequest, workspace: Any, subject: FreezeSubject,
                kind: str) -> None:
    if kind == "legal_hold":
        allowed = access.can(request.user, "legal_hold", workspace)
    elif subject.namespace is not None:
        allowed = access.can(request.user, "edit_memory", workspace, subject.namespace)
    else:
        allowed = access.can(request.user, "edit_memory", workspace)
    if not allowed:
        raise PermissionDenied("your role does not allow that freeze")


@require_POST
@login_required
def freeze(request: AuthenticatedHttpRequest, slug: str, resource: str,
           namespace: str | None = None, item_id: str | None = None) -> HttpResponse:
    workspace, subject, back = _freeze_subject(request, slug, resource, namespace, item_id)
    form = forms.FreezeForm(request.POST)
    if not form.is_valid():
        messages.error(request, "A freeze needs a kind and a reason (at most 1,000 characters).")
        return redirect(back)
    _may_freeze(request, workspace, subject, form.cleaned_data["kind"])
    try:
        memory_freeze_place(actor=Actor.of(request.user), subject=subject,
                            kind=form.cleaned_data["kind"], reason=form.cleaned_data["reason"])
    except (ValidationError, c.ProviderError) as exc:
        messages.error(request, _provider_error_text(exc) if isinstance(exc, c.ProviderError)
                       else " ".join(exc.messages))
    else:
        messages.success(request, "Frozen: every write to it is refused until lifted.")
    return redirect(back)


@require_POST
@login_required
def lift(request: AuthenticatedHttpRequest, slug: str, resource: str,
         namespace: str | None = None, item_id: str | None = None) -> HttpResponse:
    workspace, subject, back = _freeze_subject(request, slug, resource, namespace, item_id)
    form = forms.LiftForm(request.POST)
    if not form.is_valid():
        return HttpResponse("unknown kind", status=400)
    _may_freeze(request, workspace, subject, form.cleaned_data["kind"])
    try:
        lifted = memory_freeze_lift(actor=Actor.of(request.user), subject=subject,
                                    kind=form.cleaned_data["kind"])
    except c.ProviderError as exc:
        messages.error(request, _provider_error_text(exc))
    else:
        messages.success(request, "Lifted." if lifted else "It was not frozen.")
    return redirect(back)


@require_POST
@login_required
def items_delete(request: AuthenticatedHttpRequest, slug: str, resource: str,
                 namespace: str) -> HttpResponse:
    """Delete a selection: first a confirmation stating the exact count, then the deletion.
    "All N matching" selected on the list posts the filters instead of ids (``scope=matching``):
    that is the filter-wide delete, a job, whatever the number."""
    workspace, res, ns = _target(request, slug, resource, namespace, "edit_memory")
    if request.POST.get("scope") == "matching":
        return _delete_matching(request, workspace, res, ns)
    # Checkboxes send one id each; the confirmation sends them comma-joined.
    ids = [part for value in request.POST.getlist("ids") for part in value.split(",")]
    ids = list(dict.fromkeys(i for i in ids if i and len(i) <= c.MAX_ID_BYTES))[:10_000]
    if not ids:
        messages.error(request, "Select the items to delete first.")
        # Back to the same filtered list (the filters travel beside the checkboxes).
        filters = forms.ItemFilterForm(request.POST)
        query = filters.query_without_cursor() if filters.is_valid() else ""
        url = reverse("memory:items", args=[workspace.slug, res.slug, ns.slug])
        return redirect(url + (f"?{query}" if query else ""))
    if request.POST.get("confirm") != "yes":
        return render(request, "memory/delete_confirm.html", ws_context(
            request, workspace, resource=res, namespace=ns, ids=ids, count=len(ids)))
    try:
        result = memory_items_delete(actor=Actor.of(request.user), namespace=ns, ids=ids)
    except c.ProviderError as exc:
        messages.error(request, _provider_error_text(exc))
    else:
        held = f"; {result.held} frozen item(s) were kept (held)" if result.held else ""
        messages.success(request, f"Deleted {result.removed} item(s){held}.")
    return redirect("memory:items", workspace.slug, res.slug, ns.slug)


def _export_error_status(error: c.ProviderError) -> int:
    """A provider error at the start of a streamed export: the user's filter (400), a provider
    that did not answer in time (504), or any other upstream failure (502)."""
    if isinstance(error, c.InvalidRequest):
        return 400
    return 504 if isinstance(error, c.Timeout) else 502


@require_GET
@login_required
def export_jsonl(request: AuthenticatedHttpRequest, slug: str, resource: str,
                 namespace: str) -> HttpResponseBase:
    """The namespace (or a filter result) as JSON Lines, streamed in constant memory.

    The first page is fetched before the export is audited and before the response starts, so
    a provider that fails or times out at once gets a clear error page (and no audit event)
    instead of a broken 200 download."""
    workspace, res, ns = _target(request, slug, resource, namespace, "export")
    form = forms.ItemFilterForm(request.GET)
    if not form.is_valid():
        return HttpResponse("invalid filters", status=400, content_type="text/plain")
    filters = form.filters()
    provider = provider_for(res.provider)
    deadline = selectors.deadline_of(res.provider)
    try:
        items = provider.export(filters, scope=namespace_scope(ns), deadline=deadline)
        first = next(items, None)
    except c.ProviderError as exc:
        return _export_failed(request, workspace, res, ns, form, exc)
    exports.memory_export_streamed(actor=Actor.of(request.user), workspace=workspace,
                                   namespace=ns, filters=filters)

    def lines() -> Iterator[bytes]:
        buffer = bytearray()
        try:
            for item in itertools.chain([first] if first is not None else [], items):
                if item.quarantine == "pending":
                    continue  # quarantined content leaves only through the review queue
                buffer += json.dumps(wire.item_to_wire(item),
                                     ensure_ascii=False).encode() + b"\n"
                if len(buffer) >= 64 * 1024:
                    yield bytes(buffer)
                    buffer.clear()
        except c.ProviderError as exc:
            # The status (200) is already sent: say so in the file's last line (an import
            # refuses it), then fail the stream so the transfer is also seen as incomplete.
            buffer += json.dumps({"error": {"code": exc.code, "message": exc.message},
                                  "complete": False}).encode() + b"\n"
            yield bytes(buffer)
            raise
        if buffer:
            yield bytes(buffer)

    response = StreamingHttpResponse(lines(), content_type="application/x-ndjson")
    filename = f"{workspace.slug}-{res.slug}-{ns.slug}.jsonl"
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def _export_failed(request: AuthenticatedHttpRequest, workspace: Any, res: Any, ns: Any,
                   filter_form: forms.ItemFilterForm, error: c.ProviderError) -> HttpResponse:
    """The namespace's export page, saying why the stream did not start (nothing was sent)."""
    messages.error(request, "The export did not start (nothing was downloaded). "
                            f"{_provider_error_text(error)}")
    scope = {"kind": "namespace", "id": str(ns.pk), "label": f"{res.slug}/{ns.slug}"}
    return render(request, "memory/export.html", ws_context(
        request, workspace, resource=res, namespace=ns, scope=scope, form=forms.ExportForm(),
        namespaces=[ns], filter_fields=_filter_fields(filter_form),
        query=filter_form.query_without_cursor()), status=_export_error_status(error))


@require_GET
@login_required
def recall_preview(request: AuthenticatedHttpRequest, slug: str, resource: str,
                   namespace: str) -> HttpResponse:
    """Exactly what an agent would receive for an input (quarantined items as labels only)."""
    workspace, res, ns = _target(request, slug, resource, namespace)
    form = forms.RecallPreviewForm(request.GET or None)
    result, error, cap = None, None, res.max_bytes
    if form.is_bound and form.is_valid():
        budget = form.cleaned_data.get("token_budget")
        if budget:
            cap = min(cap, max(1, budget * 4))  # ~4 bytes per token
        try:
            result = provider_for(res.provider).recall(
                form.cleaned_data.get("text") or None, max_bytes=cap,
                scope=namespace_scope(ns), deadline=selectors.deadline_of(res.provider))
        except c.ProviderError as exc:
            error = _provider_error_text(exc)
    return render(request, "memory/recall.html", ws_context(
        request, workspace, resource=res, namespace=ns, form=form, result=result, error=error,
        cap=cap, text_bytes=len(result.text.encode()) if result else 0),
        status=400 if form.errors else 200)


@require_GET
@login_required
def search(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    """Full-text search over every namespace whose content the user may read, grouped by
    provider; a provider that failed is named, never shown as "no results"."""
    workspace = access.get_workspace(request.user, slug)
    form = forms.SearchForm(request.GET or None)
    results = None
    namespaces = list(access.content_namespaces(request.user, workspace)
                      .select_related("resource__provider"))
    if form.is_bound and form.is_valid() and namespaces:
        results = selectors.search(namespaces=namespaces, query=form.cleaned_data["q"])
    rows = []
    for group in results or []:
        rows.append((group, [(item, selectors.namespace_of(item, namespaces))
                             for item in selectors.shown_items(group.items)]))
    return render(request, "memory/search.html", ws_context(
        request, workspace, form=form, groups=rows, searched=results is not None,
        tab="search"), status=400 if form.errors else 200)


# -- filter-wide delete, export and import ("data owners") --------------------------------------


def _filter_fields(form: forms.ItemFilterForm) -> list[tuple[str, str]]:
    """The submitted filters as (name, value) pairs, to carry through a confirmation."""
    return [(name, str(form.data.get(name))) for name in form.fields
            if name != "cursor" and form.data.get(name)]


@require_POST
@login_required
def items_delete_matching(request: AuthenticatedHttpRequest, slug: str, resource: str,
                          namespace: str) -> HttpResponse:
    """Delete everything matching the filters: a confirmation stating the exact count (or, when
    the provider cannot count, asking for the word DELETE), then a job."""
    workspace, res, ns = _target(request, slug, resource, namespace, "edit_memory")
    return _delete_matching(request, workspace, res, ns)


def _delete_matching(request: AuthenticatedHttpRequest, workspace: Any, res: Any,
                     ns: Any) -> HttpResponse:
    filter_form = forms.ItemFilterForm(request.POST)
    if not filter_form.is_valid():
        return HttpResponse("invalid filters", status=400, content_type="text/plain")
    filters = filter_form.filters()
    try:
        count = provider_for(res.provider).count(filters, scope=namespace_scope(ns),
                                                 deadline=selectors.deadline_of(res.provider))
    except c.ProviderError as exc:
        messages.error(request, _provider_error_text(exc))
        return redirect("memory:items", workspace.slug, res.slug, ns.slug)
    confirming = request.POST.get("confirm") == "yes"
    # Items unticked on the list while "all matching" was selected are kept.
    keep = ",".join(i for i in request.POST.getlist("keep") if i and len(i) <= c.MAX_ID_BYTES)
    form = forms.BulkDeleteForm(request.POST if confirming else None,
                                initial={"expected": count, "exclude": keep})
    notice, status = None, 200
    if confirming:
        if not form.is_valid():
            status = 400
        elif count is None and form.cleaned_data["typed"] != "DELETE":
            notice, status = "The count is unknown: type DELETE to confirm.", 400
        elif count is not None and form.cleaned_data["expected"] != count:
            notice, status = (f"The number of matching items changed to {count}; "
                              "check it and confirm again."), 409
            form = forms.BulkDeleteForm(initial={"expected": count,
                                                 "exclude": form.cleaned_data["exclude"]})
        else:
            job = memory_bulk_delete_start(actor=Actor.of(request.user), namespace=ns,
                                           filters=filters, exclude_ids=form.exclude_ids(),
                                           count=count)
            return redirect("jobs:detail", job.pk)
    return render(request, "memory/delete_matching.html", ws_context(
        request, workspace, resource=res, namespace=ns, form=form, count=count,
        notice=notice, filter_fields=_filter_fields(filter_form),
        described=filters_for_audit(filters) or {}), status=status)


def _export_target(request: AuthenticatedHttpRequest, workspace: Any, resource: str | None,
                   namespace: str | None) -> tuple[dict[str, str], list[Any], Any, Any]:
    """(scope, namespaces, resource, namespace) the user may export; 404/403 otherwise."""
    if resource is None:
        if not exports.may_export_workspace(request.user, workspace):
            raise PermissionDenied("only admins and workspace owners export a whole workspace")
        namespaces = list(Namespace.objects.filter(resource__workspace=workspace))
        return ({"kind": "workspace", "id": str(workspace.pk), "label": workspace.slug},
                namespaces, None, None)
    res = access.get_resource(request.user, workspace, resource)
    if namespace is None:
        namespaces = exports.resource_export_namespaces(request.user, res)
        if not namespaces:
            raise PermissionDenied("you own none of this resource's namespaces")
        return ({"kind": "resource", "id": str(res.pk), "label": res.slug}, namespaces, res,
                None)
    ns = access.get_namespace(request.user, res, namespace, "export")
    return ({"kind": "namespace", "id": str(ns.pk), "label": f"{res.slug}/{ns.slug}"}, [ns],
            res, ns)


@require_http_methods(["GET", "POST"])
@login_required
def export_start(request: AuthenticatedHttpRequest, slug: str, resource: str | None = None,
                 namespace: str | None = None) -> HttpResponse:
    """Export a namespace (optionally filtered), a resource or the workspace as a job."""
    workspace = access.get_workspace(request.user, slug)
    scope, namespaces, res, ns = _export_target(request, workspace, resource, namespace)
    data = request.POST if request.method == "POST" else request.GET
    filter_form = forms.ItemFilterForm(data if ns is not None else {})
    form = forms.ExportForm(posted(request))
    status = 200
    if not filter_form.is_valid():
        status = 400
    elif request.method == "POST":
        if form.is_valid():
            job = exports.memory_export_start(
                actor=Actor.of(request.user), workspace=workspace, scope=scope,
                namespaces=namespaces, filters=filter_form.filters(),
                fmt=form.cleaned_data["format"])
            return redirect("jobs:detail", job.pk)
        status = 400
    return render(request, "memory/export.html", ws_context(
        request, workspace, resource=res, namespace=ns, scope=scope, form=form,
        namespaces=namespaces, filter_fields=_filter_fields(filter_form),
        query=filter_form.query_without_cursor()), status=status)


@require_GET
@login_required
def export_download(request: AuthenticatedHttpRequest, slug: str,
                    job_id: UUID) -> HttpResponseBase:
    """The export file, for the user who started it or an admin, until it expires."""
    workspace = access.get_workspace(request.user, slug)
    job = Job.objects.filter(pk=job_id, workspace=workspace,
                             kind__in=exports.DOWNLOADABLE_KINDS).first()
    if job is None or not exports.export_downloadable(job, request.user):
        raise Http404("not found")
    if not default_storage.exists(job.result_file):
        raise Http404("not found")
    exports.memory_export_downloaded(actor=Actor.of(request.user), job=job)
    extension = job.result_file.rsplit(".", 1)[-1]
    response = FileResponse(default_storage.open(job.result_file, "rb"), as_attachment=True,
                            filename=f"{workspace.slug}-export-{job.pk}.{extension}")
    return response


class _UploadCap(FileUploadHandler):
    """Counts upload bytes as they arrive and stops reading past the import limit."""

    def __init__(self, request: Any = None) -> None:
        super().__init__(request)
        self.received = 0
        self.exceeded = False

    def receive_data_chunk(self, raw_data: bytes, start: int) -> bytes | None:
        self.received += len(raw_data)
        if self.received > imports.MAX_UPLOAD_BYTES:
            self.exceeded = True
            raise StopUpload(connection_reset=False)
        return raw_data

    def file_complete(self, file_size: int) -> None:
        return None


def _import_namespaces(user: Any, workspace: Any) -> Any:
    if access.can(user, "edit_memory", workspace):
        return Namespace.objects.filter(resource__workspace=workspace)
    return access.owned_namespaces(user, workspace)


IMPORT_EXTENSIONS = (".jsonl", ".ndjson", ".zip")


@csrf_exempt  # checked by _import_upload, once the upload cap is in place
@require_http_methods(["GET", "POST"])
@login_required
def import_upload(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    """Upload an export file and see the dry run; nothing is written to memory here."""
    workspace = access.get_workspace(request.user, slug)
    namespaces = _import_namespaces(request.user, workspace)
    if not namespaces.exists():
        raise PermissionDenied("you own no namespace here")
    cap = _UploadCap(request)
    if request.method == "POST":
        length = _whole(request.META.get("CONTENT_LENGTH") or "0")
        if length is None or length > imports.MAX_UPLOAD_BYTES + 64 * 1024:
            return render(request, "memory/import.html", ws_context(
                request, workspace, form=forms.ImportForm(namespaces=namespaces),
                error="The file is larger than 50 MB.", tab="import"), status=413)
        request.upload_handlers.insert(0, cap)
    return _import_upload(request, workspace, namespaces, cap)


@csrf_protect
def _import_upload(request: AuthenticatedHttpRequest, workspace: Any, namespaces: Any,
                   cap: _UploadCap) -> HttpResponse:
    initial = {"namespace": request.GET.get("namespace")} if request.method == "GET" else None
    form = forms.ImportForm(posted(request), request.FILES if request.method == "POST" else None,
                            namespaces=namespaces, initial=initial)
    error, status = None, 200
    if request.method == "POST":
        if cap.exceeded:
            error, status = "The file is larger than 50 MB.", 413
        elif not form.is_valid():
            status = 400
        elif not form.cleaned_data["file"].name.lower().endswith(IMPORT_EXTENSIONS):
            error, status = "Only export files (.jsonl or .zip) can be imported.", 400
        else:
            upload, ns = form.cleaned_data["file"], form.cleaned_data["namespace"]
            try:
                imports.check_file(upload)
                plan = imports.import_plan(namespace=ns, stream=upload)
            except imports.ImportFileError as exc:
                error, status = f"This file cannot be imported: {exc}", 400
            except c.ProviderError as exc:
                error, status = _provider_error_text(exc), 503
            else:
                name = imports.upload_store(upload)
                token = imports.upload_token(name=name, namespace=ns, user=request.user,
                                             total=plan.total)
                return render(request, "memory/import_plan.html", ws_context(
                    request, workspace, namespace=ns, resource=ns.resource, plan=plan,
                    token=token, tab="import"))
    return render(request, "memory/import.html", ws_context(
        request, workspace, form=form, error=error, tab="import"), status=status)


@require_POST
@login_required
def import_start(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    """Confirm a dry run: start the import job."""
    workspace = access.get_workspace(request.user, slug)
    namespaces = _import_namespaces(request.user, workspace)
    if not namespaces.exists():
        raise PermissionDenied("you own no namespace here")
    found = imports.upload_from_token(request.POST.get("token", "")[:2000], user=request.user)
    ns = namespaces.filter(pk=found.namespace).first() if found else None
    if found is None or ns is None:
        messages.error(request, "That upload has expired or is not yours; upload it again.")
        return redirect("memory:import", workspace.slug)
    job = imports.memory_import_start(actor=Actor.of(request.user), namespace=ns,
                                      upload=found.name, total=found.total)
    return redirect("jobs:detail", job.pk)
