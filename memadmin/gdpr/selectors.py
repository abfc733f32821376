"""Reads of subject requests for the pages: the queue, one request with its steps, duplicates,
and what the providers hold of a subject (counts for previews and verification).

Every request comes annotated with ``days_left`` (whole days until ``due_at``, negative when
late), ``overdue`` (open and past due) and ``duplicate_open`` (another open request of the same
workspace carries the same subject hash). Query counts are flat: the list is one query, a
request with its steps (and the items they touched) three.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor, as_completed, wait
from concurrent.futures import TimeoutError as FuturesTimeout
from typing import Any

from django.db.models import (
    BooleanField,
    Case,
    Exists,
    F,
    Func,
    IntegerField,
    OuterRef,
    Prefetch,
    Q,
    QuerySet,
    Value,
    When,
)
from django.http import Http404
from django.utils import timezone

from memadmin.gdpr.models import (
    REQUEST_KINDS,
    REQUEST_OPEN_STATES,
    REQUEST_STATES,
    SubjectRequest,
    SubjectRequestItem,
    SubjectRequestStep,
)
from memadmin.gdpr.scrub import scrub_text
from memadmin.lib.keys import subject_hashes_all_keys
from memadmin.providers import contract as c
from memadmin.providers.models import ProviderConfig
from memadmin.providers.registry import provider_for
from memadmin.workspaces.models import Namespace, Workspace

#: Longest search text looked at (a subject id is at most 256 characters).
Q_MAX_CHARS = 256


class _DaysLeft(Func):
    """floor((due_at - now) in days), as an integer."""

    template = "FLOOR(EXTRACT(EPOCH FROM (%(expressions)s)) / 86400)::integer"
    output_field = IntegerField()


def _annotated(workspace: Workspace) -> QuerySet[SubjectRequest]:
    now = timezone.now()
    same_subject_open = SubjectRequest.objects.filter(
        workspace_id=OuterRef("workspace_id"), subject_key_id=OuterRef("subject_key_id"),
        subject_hash=OuterRef("subject_hash"), state__in=REQUEST_OPEN_STATES,
    ).exclude(pk=OuterRef("pk"))
    return (SubjectRequest.objects.filter(workspace=workspace)
            .select_related("requested_by", "decided_by", "cancelled_by", "override_by")
            .annotate(
                days_left=_DaysLeft(F("due_at") - Value(now)),
                overdue=Case(When(Q(state__in=REQUEST_OPEN_STATES, due_at__lt=now),
                                  then=Value(True)),
                             default=Value(False), output_field=BooleanField()),
                duplicate_open=Exists(same_subject_open),
            ))


def waiting_for_approval_by(workspace: Workspace, user: Any) -> QuerySet[SubjectRequest]:
    """Requests awaiting approval that ``user`` may approve: not their own, and not an override
    they asked for (four eyes)."""
    return (SubjectRequest.objects
            .filter(workspace=workspace, state="awaiting_approval")
            .exclude(requested_by_id=user.pk)
            .exclude(override_hold=True, override_by_id=user.pk))


def waiting_for_approval_count(workspace: Workspace, user: Any) -> int:
    """How many requests wait for ``user``'s approval (the navigation's badge)."""
    return waiting_for_approval_by(workspace, user).count()


def request_list(workspace: Workspace, *, state: str | None = None, kind: str | None = None,
                 overdue: bool | None = None, q: str | None = None,
                 approver: Any = None) -> QuerySet[SubjectRequest]:
    """The workspace's requests, newest first, filtered. ``state`` may also be ``"open"``.
    ``q`` matches a request id, words of the reason, or a data-subject id exactly (compared by
    keyed hash, so the clear id is never searched for in the table). Unknown filter values
    match nothing rather than fail. ``approver``: only the requests waiting for that user's
    approval."""
    qs = _annotated(workspace)
    if approver is not None:
        qs = qs.filter(pk__in=waiting_for_approval_by(workspace, approver).values("pk"))
    if state:
        if state == "open":
            qs = qs.filter(state__in=REQUEST_OPEN_STATES)
        elif state in REQUEST_STATES:
            qs = qs.filter(state=state)
        else:
            return qs.none()
    if kind:
        qs = qs.filter(kind=kind) if kind in REQUEST_KINDS else qs.none()
    if overdue is not None:
        late = Q(state__in=REQUEST_OPEN_STATES, due_at__lt=timezone.now())
        qs = qs.filter(late) if overdue else qs.exclude(late)
    text = (q or "").replace("\x00", "").strip()[:Q_MAX_CHARS]
    if text:
        match = Q(reason__icontains=text)
        for key_id, digest in subject_hashes_all_keys(workspace.pk, text):
            match |= Q(subject_key_id=key_id, subject_hash=digest)
        with contextlib.suppress(ValueError):
            match |= Q(pk=uuid.UUID(text))
        qs = qs.filter(match)
    return qs.order_by("-created_at")


def request_with_steps(workspace: Workspace, request_id: Any) -> SubjectRequest:
    """One request of the workspace with its steps (``sr.step_list``, in provider order)
    and its job; ``Http404`` for an unknown or malformed id or another workspace's request."""
    try:
        pk = uuid.UUID(str(request_id))
    except ValueError:
        raise Http404("no such request") from None
    items = SubjectRequestItem.objects.order_by("pk")
    steps = (SubjectRequestStep.objects.select_related("provider").order_by("pk")
             .prefetch_related(Prefetch("items", queryset=items, to_attr="item_list")))
    sr = (_annotated(workspace).select_related("job", "preview_job", "workspace", "lifts")
          .prefetch_related(Prefetch("steps", queryset=steps, to_attr="step_list"))
          .filter(pk=pk).first())
    if sr is None:
        raise Http404("no such request")
    return sr


def open_duplicates(sr: SubjectRequest) -> QuerySet[SubjectRequest]:
    """Other open requests of the workspace for the same subject (by keyed hash)."""
    return (SubjectRequest.objects
            .filter(workspace_id=sr.workspace_id, subject_key_id=sr.subject_key_id,
                    subject_hash=sr.subject_hash, state__in=REQUEST_OPEN_STATES)
            .exclude(pk=sr.pk).select_related("requested_by").order_by("-created_at"))


# -- what the providers hold (counts for previews and verification) -----------------------------

#: How many pages are read when a provider cannot count (500 items each).
COUNT_MAX_PAGES = 100


def provider_scopes(config: ProviderConfig) -> tuple[list[c.Scope], bool]:
    """(scopes, whether they are the workspace-wide fallback) for one provider's step.

    The partitions of the namespaces declared on the provider's resources, as one scope. A
    provider with none declared is asked about every partition of the workspace (it may still
    hold some of them: erasure asks everywhere), one scope per provider that declares them (a
    scope stays within one provider); an answer of ``not_found`` then means it holds none of
    that group. An empty list when the workspace has no namespace at all."""
    own = list(Namespace.objects.filter(resource__provider=config)
               .order_by("partition_key").values_list("partition_key", flat=True))
    if own:
        return [c.Scope(tuple(own))], False
    groups: dict[Any, list[str]] = {}
    rows = (Namespace.objects.filter(resource__workspace_id=config.workspace_id)
            .order_by("resource__provider_id", "partition_key")
            .values_list("resource__provider_id", "partition_key"))
    for provider_id, key in rows:
        groups.setdefault(provider_id, []).append(key)
    return [c.Scope(tuple(keys)) for keys in groups.values()], True


@dataclasses.dataclass(frozen=True)
class Count:
    """What a provider said about a subject: ``found`` items (None: cannot tell, ``note`` says
    why); ``more``: ``found`` is a lower bound (counting by listing stopped at the cap or at
    the deadline)."""

    found: int | None
    note: str = ""
    more: bool = False


def subject_count(config: ProviderConfig, subject: str, *,
                  scopes: tuple[list[c.Scope], bool] | None = None,
                  end: float | None = None) -> Count:
    """How many items of the subject the provider holds, within one deadline for the whole
    answer (``end``, a ``time.monotonic()`` value; default: the provider's request deadline
    from now), however many scopes and pages that takes."""
    groups, fallback = provider_scopes(config) if scopes is None else scopes
    provider = provider_for(config)
    end = time.monotonic() + config.request_deadline if end is None else end
    filters = c.ItemFilters(subject=subject)
    total = 0
    for scope in groups:
        left = end - time.monotonic()
        if left <= 0:
            return _out_of_time(total)
        try:
            found = provider.count(filters, scope=scope, deadline=left)
        except c.NotFound:
            if fallback:
                continue
            return Count(None, "not_found: a partition is unknown to the provider")
        except c.Unsupported:
            found = None
        except c.ProviderError as exc:
            return Count(None, scrub_text(f"{exc.code}: {exc.message}", subject))
        if found is None:
            listed = _listed(provider, filters, scope, end, subject)
            if listed.found is None or listed.more:
                return Count(None if listed.found is None else total + listed.found,
                             listed.note, listed.more)
            found = listed.found
        total += found
    return Count(total)


def _out_of_time(total: int) -> Count:
    if total:
        return Count(total, f"more than {total}: no full answer within the deadline", True)
    return Count(None, "no answer within the deadline")


def _listed(provider: c.Provider, filters: c.ItemFilters, scope: c.Scope, end: float,
            subject: str) -> Count:
    """Count by listing, for a provider that cannot count: at most ``COUNT_MAX_PAGES`` pages,
    all within the same deadline; a lower bound ("more than N") when it stops early."""
    listed, cursor = 0, None
    try:
        for _ in range(COUNT_MAX_PAGES):
            left = end - time.monotonic()
            if left <= 0:
                return _out_of_time(listed)
            page = provider.list_items(filters, cursor=cursor, limit=c.LIST_MAX_LIMIT,
                                       scope=scope, deadline=left)
            listed += len(page.items)
            cursor = page.next_cursor
            if cursor is None:
                return Count(listed)
    except c.Unsupported:
        return Count(None, "the provider can neither count nor list the subject's items")
    except c.ProviderError as exc:
        if listed:
            return Count(listed, f"more than {listed}: listing stopped ({exc.code})", True)
        return Count(None, scrub_text(f"{exc.code}: {exc.message}", subject))
    return Count(listed, f"more than {listed}: stopped counting after {COUNT_MAX_PAGES} "
                 "pages", True)


#: Extra time the preview waits for its threads beyond the slowest provider's deadline.
PREVIEW_GRACE_SECONDS = 1.0
PREVIEW_MAX_THREADS = 16


def subject_counts(steps: list[SubjectRequestStep], subject: str) -> dict[int, Count]:
    """Every step's provider asked at once: {step id: Count} (see ``subject_counts_iter``)."""
    return dict(subject_counts_iter(steps, subject))


def subject_counts_iter(steps: list[SubjectRequestStep],
                        subject: str) -> Iterator[tuple[int, Count]]:
    """Every step's provider asked at once, under one overall deadline (the slowest
    provider's request deadline): (step id, Count) pairs as the answers arrive, so the caller
    can save each at once. A provider that has not answered by then "cannot tell". The
    built-in store is asked on this thread (it reads this database connection's rows), first;
    remote providers each on a thread."""
    configs = {s.pk: s.provider for s in steps if s.provider is not None}
    for s in steps:
        if s.provider is None:
            yield s.pk, Count(None, "the provider was deleted")
    if not configs:
        return
    budget = max(cfg.request_deadline_ms for cfg in configs.values()) / 1000
    end = time.monotonic() + budget
    scopes = {pk: provider_scopes(cfg) for pk, cfg in configs.items()}
    remote = {pk: cfg for pk, cfg in configs.items() if cfg.kind != "local"}
    pool = ThreadPoolExecutor(max_workers=max(1, min(PREVIEW_MAX_THREADS, len(remote))),
                              thread_name_prefix="gdpr-preview")
    try:
        futures = {pool.submit(_count_on_thread, cfg, subject, scopes[pk], end): pk
                   for pk, cfg in remote.items()}
        for pk, cfg in configs.items():
            if pk not in remote:
                yield pk, subject_count(cfg, subject, scopes=scopes[pk], end=end)
        answered: set[int] = set()
        with contextlib.suppress(FuturesTimeout):
            for future in as_completed(futures, timeout=max(0.0, end - time.monotonic())
                                       + PREVIEW_GRACE_SECONDS):
                answered.add(futures[future])
                yield futures[future], future.result()
        for pk in remote:
            if pk not in answered:
                yield pk, Count(None, f"no answer within {budget:g} s")
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


def _count_on_thread(config: ProviderConfig, subject: str,
                     scopes: tuple[list[c.Scope], bool], end: float) -> Count:
    from django.db import connections

    try:
        return subject_count(config, subject, scopes=scopes, end=end)
    except c.ProviderError as exc:
        return Count(None, scrub_text(f"{exc.code}: {exc.message}", subject))
    finally:
        connections.close_all()  # this thread's own connections, if the provider opened any


# -- the subject's items (what a rectification corrects) ----------------------------------------

#: At most this many items of the subject are listed per provider (a lower bound beyond).
ITEMS_PER_PROVIDER = 100


@dataclasses.dataclass(frozen=True)
class SubjectItems:
    """One step's provider's items of the subject: at most ``ITEMS_PER_PROVIDER`` (``more``:
    there are others), or none with ``note`` saying why. A quarantined item comes without its
    content (it is shown only in the review screen)."""

    step: SubjectRequestStep
    items: list[c.Item]
    note: str = ""
    more: bool = False


def _items_of(config: ProviderConfig, subject: str, end: float) -> tuple[list[c.Item], str, bool]:
    groups, fallback = provider_scopes(config)
    provider = provider_for(config)
    filters = c.ItemFilters(subject=subject)
    found: list[c.Item] = []
    for scope in groups:
        left = end - time.monotonic()
        if left <= 0:
            return found, "no full answer within the deadline", True
        try:
            page = provider.list_items(filters, limit=ITEMS_PER_PROVIDER - len(found) + 1,
                                       scope=scope, deadline=left)
        except c.NotFound:
            if fallback:
                continue
            return found, "not_found: a partition is unknown to the provider", False
        except c.Unsupported:
            return found, "the provider cannot list the subject's items", False
        except c.ProviderError as exc:
            return found, scrub_text(f"{exc.code}: {exc.message}", subject), False
        found += page.items
        if len(found) > ITEMS_PER_PROVIDER or page.next_cursor is not None:
            return found[:ITEMS_PER_PROVIDER], "", True
    return found, "", False


def _items_on_thread(config: ProviderConfig, subject: str,
                     end: float) -> tuple[list[c.Item], str, bool]:
    from django.db import connections

    try:
        return _items_of(config, subject, end)
    finally:
        connections.close_all()


def subject_items(sr: SubjectRequest) -> list[SubjectItems]:
    """The subject's items on every enabled provider of the request, asked at once under one
    overall deadline (the slowest provider's), in step order."""
    subject = sr.subject_id
    steps = list(SubjectRequestStep.objects.filter(request=sr).select_related("provider")
                 .order_by("pk"))
    usable = {s.pk: s.provider for s in steps
              if s.provider is not None and s.provider.enabled and subject}
    answers: dict[int, tuple[list[c.Item], str, bool]] = {}
    if usable and subject:
        budget = max(cfg.request_deadline_ms for cfg in usable.values()) / 1000
        end = time.monotonic() + budget
        remote = {pk: cfg for pk, cfg in usable.items() if cfg.kind != "local"}
        pool = ThreadPoolExecutor(max_workers=max(1, min(PREVIEW_MAX_THREADS, len(remote))),
                                  thread_name_prefix="gdpr-items")
        try:
            futures = {pool.submit(_items_on_thread, cfg, subject, end): pk
                       for pk, cfg in remote.items()}
            for pk, cfg in usable.items():
                if pk not in remote:
                    answers[pk] = _items_of(cfg, subject, end)
            done, _ = wait(futures, timeout=max(0.0, end - time.monotonic())
                           + PREVIEW_GRACE_SECONDS)
            for future, pk in futures.items():
                answers[pk] = (future.result() if future in done
                               else ([], f"no answer within {budget:g} s", False))
        finally:
            pool.shutdown(wait=False, cancel_futures=True)
    result = []
    for step in steps:
        if step.pk not in answers:
            note = ("the provider was deleted" if step.provider is None
                    else "the provider is disabled" if not step.provider.enabled
                    else "the subject id is no longer available")
            result.append(SubjectItems(step, [], note))
            continue
        items, note, more = answers[step.pk]
        shown = [dataclasses.replace(i, content="") if i.quarantine == "pending" else i
                 for i in items]
        result.append(SubjectItems(step, shown, note, more))
    return result
