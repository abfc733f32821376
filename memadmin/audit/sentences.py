"""Each audit event as a sentence: "compliance2 approved erasure request 23e46d2e".

Pure functions: the page's selectors look up what the links need (``TargetPlaces``, one query
per page) and these turn an event into parts the template escapes. An action without a
sentence of its own still reads ("bot did x.test on item 42").
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode

from django.urls import NoReverseMatch, reverse

#: (kind, id) -> (label, url name, url kwargs without the workspace slug)
TargetPlaces = Mapping[tuple[str, str], tuple[str, str, dict[str, str]]]

# action -> (words before the target, words after it); "{…}" are filled from the event's data.
VERBS: dict[str, tuple[str, str]] = {
    "workspace.create": ("created workspace", ""),
    "workspace.settings": ("changed the settings of workspace", ""),
    "resource.create": ("created resource", ""),
    "resource.update": ("changed resource", ""),
    "resource.delete": ("deleted resource", ""),
    "namespace.create": ("created namespace", ""),
    "namespace.update": ("changed namespace", ""),
    "namespace.delete": ("deleted namespace", ""),
    "provider.create": ("added provider", ""),
    "provider.update": ("changed provider", ""),
    "provider.delete": ("removed provider", ""),
    "provider.test": ("tested provider", ""),
    "provider.check_now": ("checked the health of provider", ""),
    "role.grant": ("granted the {role} role to", ""),
    "role.revoke": ("revoked the {role} role from", ""),
    "alert_target.add": ("added {kind} alert target", ""),
    "alert_target.remove": ("removed {kind} alert target", ""),
    "webhook.create": ("added webhook endpoint {name}", ""),
    "webhook.update": ("changed webhook endpoint {name}", ""),
    "webhook.enable": ("enabled webhook endpoint {name}", ""),
    "webhook.disable": ("disabled webhook endpoint {name}", ""),
    "webhook.rotate_secret": ("renewed the signing secret of webhook endpoint {name}", ""),
    "webhook.test": ("sent a test event to webhook endpoint {name}", ""),
    "webhook.remove": ("removed webhook endpoint {name}", ""),
    "agent_token.mint": ("minted agent token", ""),
    "agent_token.revoke": ("revoked agent token", ""),
    "admin_credential.mint": ("minted admin credential", ""),
    "admin_credential.revoke": ("revoked admin credential", ""),
    "metrics_token.mint": ("minted metrics token", ""),
    "metrics_token.revoke": ("revoked metrics token", ""),
    "job.start": ("started {kind} job", ""),
    "job.cancel": ("cancelled {kind} job", ""),
    "audit.export": ("exported the audit trail of", " as {format}"),
    "audit.verify": ("verified the audit chain in", ""),
    "audit.keyed": ("sealed the {unkeyed_events} unkeyed audit events before this one", ""),
    "memory.edit": ("edited item", ""),
    "memory.restore": ("restored item", ""),
    "memory.delete": ("deleted items in", ""),
    "memory.export": ("exported", " as {format}"),
    "memory.export.result": ("finished export", ""),
    "memory.export_download": ("downloaded export", ""),
    "memory.import.start": ("started an import into", ""),
    "memory.import.result": ("finished an import into", ""),
    "memory.bulk_delete.start": ("started a bulk delete in", ""),
    "memory.bulk_delete.result": ("finished a bulk delete in", ""),
    "memory.bulk_load": ("loaded {items} items into", ""),
    "retention.policy_set": ("set a retention policy ({action}, {rule}, {days} days) on", ""),
    "retention.policy_remove": ("removed the retention policy ({action}, {rule}, {days} days) of",
                                ""),
    "retention.run": ("started a retention run ({action}) on", ""),
    "retention.run.result": ("finished a retention run on", ": {removed} removed, {held} held"),
    "freeze.place": ("froze", ""),
    "freeze.lift": ("lifted the freeze on", ""),
    "legal_hold.place": ("placed a legal hold on", ""),
    "legal_hold.lift": ("lifted the legal hold on", ""),
    "quarantine.view": ("viewed quarantined content", ""),
    "quarantine.release": ("released quarantined item", ""),
    "quarantine.purge": ("purged quarantined item", ""),
    "quarantine.allow": ("allowed quarantined item", ""),
    "quarantine.unallow": ("removed an allowed content hash", ""),
    "quarantine.rescan.result": ("finished rescan", ""),
    "subject_request.create": ("created {kind} request", ""),
    "subject_request.submit": ("submitted {kind} request", ""),
    "subject_request.approve": ("approved {kind} request", ""),
    "subject_request.deny": ("denied {kind} request", ""),
    "subject_request.cancel": ("cancelled {kind} request", ""),
    "subject_request.cancelled": ("stopped {kind} request", " (cancelled)"),
    "subject_request.cancelled_by_upkeep": ("cancelled {kind} request", " (overdue)"),
    "subject_request.retry": ("retried {kind} request", ""),
    "subject_request.override_hold": ("overrode legal holds for {kind} request", ""),
    "subject_request.preview": ("previewed the counts of {kind} request", ""),
    "subject_request.start": ("started {kind} request", ""),
    "subject_request.finish": ("finished {kind} request", " ({state})"),
    "subject_request.receipt_download": ("downloaded the receipt of {kind} request", ""),
    "subject_request.access_download": ("downloaded the access bundle of {kind} request", ""),
}

@dataclasses.dataclass(frozen=True)
class Sentence:
    actor: str
    actor_url: str
    before: str
    target: str
    target_url: str
    after: str


class _Blank(dict):
    def __missing__(self, key: str) -> str:
        return "?"


def _fill(template: str, data: Mapping[str, Any]) -> str:
    values = _Blank({key: str(value).replace("_", " ") for key, value in data.items()
                     if isinstance(value, str | int | float | bool)})
    return " ".join(template.format_map(values).split()) if template else ""


def short_id(value: str) -> str:
    """A UUID's first block (how people quote them); other ids as they are, capped."""
    if len(value) == 36 and value.count("-") == 4:
        return value[:8]
    return value if len(value) <= 40 else value[:39] + "…"


def target_label(event: Any) -> str:
    data = event.data if isinstance(event.data, dict) else {}
    kind, ident = event.target_type, event.target_id
    if kind == "user" and data.get("user"):
        return str(data["user"])
    if kind in {"resource", "namespace", "provider", "workspace"} and data.get("slug"):
        return str(data["slug"])
    if kind in {"agenttoken", "admincredential", "metricstoken"} and data.get("prefix"):
        return f"{data['prefix']}…"
    if kind == "scope":
        return ident or "(no namespace)"
    return short_id(ident) if ident else ""


def target_place(event: Any, places: TargetPlaces) -> tuple[str, str, dict[str, str]] | None:
    """The page of the event's target, if there is one (url name, kwargs)."""
    kind, ident = event.target_type, event.target_id
    if kind == "subject_request" and ident:
        return ("", "gdpr:detail", {"request_id": ident})
    if kind == "job" and event.action == "audit.verify":
        return ("", "audit:verify_result", {"job_id": ident})
    if kind == "workspace":
        return ("", "workspaces:home", {})
    if kind == "item":
        data = event.data if isinstance(event.data, dict) else {}
        namespace = places.get(("namespace", str(data.get("namespace", ""))))
        if namespace is not None:
            return ("", "memory:item", {**namespace[2], "item_id": ident})
        return None
    return places.get((kind, ident))


def sentence(event: Any, *, workspace_slug: str, places: TargetPlaces,
             list_url: str) -> Sentence:
    """The event as a sentence: who (linked to their events), did what, to which target
    (linked to its page where there is one)."""
    data = event.data if isinstance(event.data, dict) else {}
    fallback = f"did {event.action} on {event.target_type.replace('_', ' ')}".rstrip()
    if event.action.startswith("api."):
        fallback = f"called {event.action.removeprefix('api.')} on the admin API for"
    before, after = VERBS.get(event.action, (fallback, ""))
    label, url = target_label(event), ""
    place = target_place(event, places)
    if place is not None:
        found_label, name, kwargs = place
        if found_label and (not label or label == short_id(event.target_id)):
            label = found_label
        try:
            url = reverse(name, kwargs={"slug": workspace_slug, **kwargs})
        except NoReverseMatch:
            url = ""  # an id its page cannot be addressed by (a remote id with "/", say)
    actor_url = f"{list_url}?{urlencode({'actor': event.actor_label})}"
    return Sentence(actor=event.actor_label, actor_url=actor_url, before=_fill(before, data),
                    target=label, target_url=url, after=_fill(after, data))
