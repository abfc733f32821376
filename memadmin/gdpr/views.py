"""Subject-request pages (compliance): the queue, a new request, one request with its live
steps and its actions, and the receipt and access-file downloads (both audited)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.http import FileResponse, Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from memadmin.audit.services import Actor, audit_event_create
from memadmin.gdpr import selectors, services, transitions
from memadmin.gdpr.access_output import access_file_open
from memadmin.gdpr.forms import (
    CorrectionForm,
    ExtendForm,
    ReasonForm,
    RequestCreateForm,
    RequestFilterForm,
    RequestSearchForm,
    StepResolveForm,
)
from memadmin.gdpr.models import REQUEST_OPEN_STATES
from memadmin.gdpr.receipts import receipt_document
from memadmin.lib import keys
from memadmin.lib.http import AuthenticatedHttpRequest
from memadmin.privacy import selectors as privacy_selectors
from memadmin.workspaces import access
from memadmin.workspaces.context import ws_context

LIST_LIMIT = 200
#: The page polls while the request can still change by itself.
LIVE_STATES = frozenset({"approved", "running"})
#: Kinds whose page lists the items the request touched.
ITEM_KINDS = frozenset({"rectification", "restriction", "lift"})


def _workspace(request: AuthenticatedHttpRequest, slug: str) -> Any:
    return access.get_workspace(request.user, slug, "subject_requests")


@require_http_methods(["GET", "POST"])
@login_required
def request_list(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    """The queue. Filters work by GET (links); a search (which may be a subject id) is POSTed,
    so a clear id never travels in a URL."""
    workspace = _workspace(request, slug)
    form: RequestFilterForm = (RequestSearchForm(request.POST) if request.method == "POST"
                               else RequestFilterForm(request.GET or None))
    rows, status = None, 200
    if form.is_bound and not form.is_valid():
        status = 400
    else:
        data = form.cleaned_data if form.is_bound else {}
        rows = list(selectors.request_list(
            workspace, state=data.get("state") or None, kind=data.get("kind") or None,
            overdue={"yes": True, "no": False}.get(data.get("overdue") or ""),
            q=data.get("q") or None,
            approver=request.user if data.get("approval") == "mine" else None)[:LIST_LIMIT])
    return render(request, "gdpr/list.html", ws_context(
        request, workspace, tab="requests", form=form, rows=rows, limit=LIST_LIMIT),
        status=status)


@require_http_methods(["GET", "POST"])
@login_required
def request_new(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    workspace = _workspace(request, slug)
    form = RequestCreateForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        try:
            created = transitions.subject_request_create(
                actor=Actor.of(request.user), workspace=workspace, **form.cleaned_data)
        except transitions.SubjectRequestError as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(request, "Request created. Preview it, then submit it.")
            return redirect("gdpr:detail", workspace.slug, created.pk)
    status = 400 if request.method == "POST" else 200
    return render(request, "gdpr/new.html", ws_context(
        request, workspace, tab="requests", form=form,
        due_days=workspace.subject_request_due_days), status=status)


def _detail_context(request: AuthenticatedHttpRequest, workspace: Any, row: Any) -> dict[str, Any]:
    user = request.user
    is_requester = row.requested_by_id == user.pk
    is_admin = access.can(user, "manage_workspace", workspace)
    state = row.state
    previewing = row.preview_job is not None and not row.preview_job.finished
    lift = transitions.active_lift(row) if row.kind == "restriction" else None
    return ws_context(
        request, workspace, tab="requests", req=row, steps=row.step_list,
        duplicates=list(selectors.open_duplicates(row)[:10]),
        live=state in LIVE_STATES or previewing, previewing=previewing,
        preview=row.preview_job, item_kind=row.kind in ITEM_KINDS, lift=lift,
        four_eyes=transitions.needs_four_eyes(row),
        cannot_freeze=[s.provider_label for s in row.step_list if s.state == "unsupported"]
        if row.kind in ("restriction", "lift") else [],
        reason_form=ReasonForm(),
        open_steps=[s for s in row.step_list if s.state not in ("done", "resolved")],
        may={
            "preview": state in ("new", "awaiting_approval", "approved", "partial")
            and row.kind != "lift" and not previewing,
            "correct": row.kind == "rectification" and state in transitions.PROPOSE_STATES,
            "lift": row.kind == "restriction" and state in transitions.LIFTABLE_STATES
            and lift is None,
            "submit": state == "new" and is_requester,
            "decide": state == "awaiting_approval" and not is_requester
            and not (row.override_hold and row.override_by_id == user.pk),
            "cancel": (state in ("new", "awaiting_approval", "approved", "partial")
                       and (is_requester or is_admin)) or (state == "running" and is_admin),
            "retry": state == "partial" and any(
                s.state not in ("done", "resolved") and s.provider is not None
                and s.provider.enabled for s in row.step_list),
            "resolve": state == "partial",
            "close": state == "partial",
            "extend": state in REQUEST_OPEN_STATES
            and row.extension_months < transitions.MAX_EXTENSION_MONTHS,
            "override": row.kind == "erasure" and state in ("new", "awaiting_approval", "partial")
            and not row.override_hold,
        },
        receipt=row.receipt is not None, now=timezone.now(),
        # Not on the page's polls: the suggestions sit outside the live fragment.
        pii_suggestions=[] if request.htmx or state not in REQUEST_OPEN_STATES else
        privacy_selectors.subject_suggestions(workspace=workspace, subject_id=row.subject_id),
    )


@require_GET
@login_required
def request_detail(request: AuthenticatedHttpRequest, slug: str, request_id: str) -> HttpResponse:
    workspace = _workspace(request, slug)
    row = selectors.request_with_steps(workspace, request_id)
    template = "gdpr/detail.html#live" if request.htmx else "gdpr/detail.html"
    return render(request, template, _detail_context(request, workspace, row))


SENT_BACK = ("What was approved has changed: the request now waits for another compliance "
             "user's approval.")


def _act(request: AuthenticatedHttpRequest, slug: str, request_id: str,
         call: Callable[[Actor, Any, str], Any], done: str,
         may_send_back: bool = False) -> HttpResponse:
    """The body of every action view: the request of the workspace, a valid reason form, the
    transition (which enforces its own rules), a message, back to the request's page."""
    workspace = _workspace(request, slug)
    row = selectors.request_with_steps(workspace, request_id)
    form = ReasonForm(request.POST)
    if not form.is_valid():
        messages.error(request, " ".join(str(e) for errors in form.errors.values()
                                          for e in errors))
        return redirect("gdpr:detail", workspace.slug, row.pk)
    before = row.state
    try:
        call(Actor.of(request.user), row, form.cleaned_data["reason"])
    except transitions.SubjectRequestError as exc:
        messages.error(request, f"Not done: {exc}.")
    else:
        sent_back = may_send_back and before != row.state == "awaiting_approval"
        messages.success(request, SENT_BACK if sent_back else done)
    return redirect("gdpr:detail", workspace.slug, row.pk)


@require_POST
@login_required
def request_submit(request: AuthenticatedHttpRequest, slug: str, request_id: str) -> HttpResponse:
    return _act(request, slug, request_id, lambda actor, sr, reason: (
        transitions.subject_request_submit(actor=actor, subject_request=sr)), "Submitted.")


@require_POST
@login_required
def request_approve(request: AuthenticatedHttpRequest, slug: str,
                    request_id: str) -> HttpResponse:
    return _act(request, slug, request_id, lambda actor, sr, reason: (
        transitions.subject_request_approve(actor=actor, subject_request=sr)),
        "Approved: the cascade starts.")


@require_POST
@login_required
def request_deny(request: AuthenticatedHttpRequest, slug: str, request_id: str) -> HttpResponse:
    return _act(request, slug, request_id, lambda actor, sr, reason: (
        transitions.subject_request_deny(actor=actor, subject_request=sr, reason=reason)),
        "Denied.")


@require_POST
@login_required
def request_cancel(request: AuthenticatedHttpRequest, slug: str, request_id: str) -> HttpResponse:
    return _act(request, slug, request_id, lambda actor, sr, reason: (
        transitions.subject_request_cancel(actor=actor, subject_request=sr)),
        "Cancel requested.")


@require_POST
@login_required
def request_retry(request: AuthenticatedHttpRequest, slug: str, request_id: str) -> HttpResponse:
    return _act(request, slug, request_id, lambda actor, sr, reason: (
        transitions.subject_request_retry(actor=actor, subject_request=sr)),
        "Retrying the steps that are not done.", may_send_back=True)


@require_POST
@login_required
def request_override(request: AuthenticatedHttpRequest, slug: str,
                     request_id: str) -> HttpResponse:
    return _act(request, slug, request_id, lambda actor, sr, reason: (
        transitions.subject_request_set_override(actor=actor, subject_request=sr,
                                                 reason=reason)),
        "Legal holds will be overridden for this erasure.", may_send_back=True)


@require_POST
@login_required
def request_preview(request: AuthenticatedHttpRequest, slug: str,
                    request_id: str) -> HttpResponse:
    return _act(request, slug, request_id, lambda actor, sr, reason: (
        services.subject_request_preview_start(actor=actor, subject_request=sr)),
        "Asking every provider: their counts appear below as they answer.")


@require_POST
@login_required
def request_lift(request: AuthenticatedHttpRequest, slug: str, request_id: str) -> HttpResponse:
    """A later decision lifts a completed restriction: a new ``lift`` request, submitted at
    once (waiting for another compliance user where four eyes apply); its page is next."""
    workspace = _workspace(request, slug)
    row = selectors.request_with_steps(workspace, request_id)
    form = ReasonForm(request.POST)
    reason = form.cleaned_data["reason"] if form.is_valid() else ""
    try:
        lift = transitions.subject_request_lift(actor=Actor.of(request.user), restriction=row,
                                                reason=reason)
    except transitions.SubjectRequestError as exc:
        messages.error(request, f"Not done: {exc}.")
        return redirect("gdpr:detail", workspace.slug, row.pk)
    messages.success(request, "The lift of the restriction is requested"
                     + (": another compliance user must approve it." if lift.state ==
                        "awaiting_approval" else "."))
    return redirect("gdpr:detail", workspace.slug, lift.pk)


@require_http_methods(["GET", "POST"])
@login_required
def request_items(request: AuthenticatedHttpRequest, slug: str,
                  request_id: str) -> HttpResponse:
    """A rectification's editor: the subject's items on every provider, each with its current
    text and a form to propose the corrected text (POST: one item's correction)."""
    workspace = _workspace(request, slug)
    row: Any = selectors.request_with_steps(workspace, request_id)
    if row.kind != "rectification":
        raise Http404("only a rectification corrects items")
    status = 200
    form = CorrectionForm(request.POST if request.method == "POST" else None)
    if request.method == "POST":
        if form.is_valid():
            try:
                transitions.subject_request_correction_propose(
                    actor=Actor.of(request.user), subject_request=row, **form.cleaned_data)
            except transitions.SubjectRequestError as exc:
                form.add_error(None, str(exc))
            else:
                messages.success(request, "Correction proposed: submit the request when every "
                                          "correction is in.")
                return redirect("gdpr:items", workspace.slug, row.pk)
        status = 400
    editable = row.state in transitions.PROPOSE_STATES
    found = selectors.subject_items(row) if editable else []
    proposed = {(i.step_id, i.partition, i.item_id): i
                for s in row.step_list for i in s.item_list}
    return render(request, "gdpr/items.html", ws_context(
        request, workspace, tab="requests", req=row, found=found, proposed=proposed,
        editable=editable, form=form, limit=selectors.ITEMS_PER_PROVIDER), status=status)


@require_POST
@login_required
def request_close(request: AuthenticatedHttpRequest, slug: str, request_id: str) -> HttpResponse:
    return _act(request, slug, request_id, lambda actor, sr, reason: (
        transitions.subject_request_close_with_exceptions(actor=actor, subject_request=sr,
                                                          reason=reason)),
        "Closed as completed with exceptions.")


@require_POST
@login_required
def request_resolve_step(request: AuthenticatedHttpRequest, slug: str,
                         request_id: str) -> HttpResponse:
    workspace = _workspace(request, slug)
    row = selectors.request_with_steps(workspace, request_id)
    form = StepResolveForm(request.POST)
    if not form.is_valid():
        messages.error(request, "To resolve a step by hand, choose the step and write why.")
        return redirect("gdpr:detail", workspace.slug, row.pk)
    try:
        transitions.subject_request_step_resolve(
            actor=Actor.of(request.user), subject_request=row,
            step_id=form.cleaned_data["step"], justification=form.cleaned_data["justification"])
    except transitions.SubjectRequestError as exc:
        messages.error(request, f"Not done: {exc}.")
    else:
        messages.success(request, "The step is resolved by hand; the receipt shows why.")
    return redirect("gdpr:detail", workspace.slug, row.pk)


@require_POST
@login_required
def request_extend(request: AuthenticatedHttpRequest, slug: str, request_id: str) -> HttpResponse:
    workspace = _workspace(request, slug)
    row = selectors.request_with_steps(workspace, request_id)
    form = ExtendForm(request.POST)
    if not form.is_valid():
        messages.error(request, "To extend the due date, choose one or two months and give "
                                "the reason.")
        return redirect("gdpr:detail", workspace.slug, row.pk)
    try:
        transitions.subject_request_extend(actor=Actor.of(request.user), subject_request=row,
                                           months=form.cleaned_data["months"],
                                           reason=form.cleaned_data["reason"])
    except transitions.SubjectRequestError as exc:
        messages.error(request, f"Not done: {exc}.")
    else:
        messages.success(request, "The due date is extended; tell the data subject why.")
    return redirect("gdpr:detail", workspace.slug, row.pk)


def _download_audited(request: AuthenticatedHttpRequest, workspace: Any, row: Any,
                      what: str, **data: Any) -> None:
    with transaction.atomic():
        audit_event_create(workspace=workspace, actor=Actor.of(request.user),
                           action=f"subject_request.{what}_download",
                           target_type="subject_request", target_id=row.pk, data=data)


@require_GET
@login_required
def receipt_download(request: AuthenticatedHttpRequest, slug: str,
                     request_id: str) -> HttpResponse:
    workspace = _workspace(request, slug)
    row = selectors.request_with_steps(workspace, request_id)
    try:
        document = receipt_document(row)
    except ValueError:
        raise Http404("no receipt yet") from None
    _download_audited(request, workspace, row, "receipt", key_id=row.receipt_key_id)
    response = HttpResponse(json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False),
                            content_type="application/json")
    response["Content-Disposition"] = f'attachment; filename="receipt-{row.pk}.json"'
    return response


@require_GET
@login_required
def access_download(request: AuthenticatedHttpRequest, slug: str,
                    request_id: str) -> FileResponse:
    workspace = _workspace(request, slug)
    row = selectors.request_with_steps(workspace, request_id)
    try:
        stream, name = access_file_open(row, request.user)
    except FileNotFoundError:
        raise Http404("the access file expired or was never made") from None
    _download_audited(request, workspace, row, "access", subject_hash=row.subject_hash)
    return FileResponse(stream, as_attachment=True, filename=name,
                        content_type="application/zip")


@require_GET
def receipt_keys(request: HttpRequest) -> JsonResponse:
    """The public keys receipts are signed with (no secret, no login): anyone holding a receipt
    can check it (``manage.py verify_receipt --public-keys``) and nobody can forge one."""
    return JsonResponse({"algorithm": keys.SIGNATURE_ALGORITHM, "keys": keys.public_keys()})
