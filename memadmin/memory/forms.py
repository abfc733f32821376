"""Forms of the memory pages."""

from __future__ import annotations

import datetime as dt
from typing import Any, cast
from urllib.parse import urlencode

from django import forms
from django.http import QueryDict

from memadmin.lib.textinput import VisibleCharField
from memadmin.memory.models import (
    RETENTION_ACTIONS,
    RETENTION_MAX_DAYS,
    RETENTION_RULES,
    AgentToken,
)
from memadmin.privacy.detect import TYPE_NAMES
from memadmin.providers import contract as c
from memadmin.workspaces.forms import LifetimeField
from memadmin.workspaces.models import Namespace


class AgentTokenForm(forms.Form):
    name = forms.CharField(max_length=100, help_text="What uses it, e.g. support-bot prod.")
    access = forms.ChoiceField(choices=AgentToken.ACCESS_CHOICES, initial="read")
    namespaces = forms.ModelMultipleChoiceField(queryset=Namespace.objects.none(),
                                                widget=forms.CheckboxSelectMultiple)
    lifetime = LifetimeField()

    def __init__(self, *args: Any, namespaces: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields["namespaces"]
        assert isinstance(field, forms.ModelMultipleChoiceField)
        field.queryset = namespaces.select_related("resource").order_by("resource__slug", "slug")
        # A per-instance label: Django calls self.label_from_instance(obj), so this works.
        field.label_from_instance = (  # type: ignore[method-assign]
            lambda obj: f"{obj.resource.slug} / {obj.slug}")


TIER_CHOICES = [("", "any tier")] + [(t, t) for t in c.TIERS]
ORDER_CHOICES = [("", "last updated"), ("key", "key (A to Z)"), ("size", "size (largest first)")]


#: The item list's personal-data filter: a detected type (memadmin.privacy).
PII_CHOICES = [("", "any"), *TYPE_NAMES.items()]


class ItemFilterForm(forms.Form):
    """The browse filters (a GET form: bad values become a clear error, never a 500)."""

    q = forms.CharField(required=False, max_length=1024, label="Search")
    tier = forms.ChoiceField(required=False, choices=TIER_CHOICES)
    key = forms.CharField(required=False, max_length=128, label="Key starts with",
                          help_text="The start of a key: 2026-05 finds May's daily notes, "
                                    "alice a peer's slug; the whole key finds one item.")
    subject = forms.CharField(required=False, max_length=c.MAX_SUBJECT_ID_CHARS,
                              label="Data subject")
    frozen = forms.ChoiceField(required=False, choices=[("", "any"), ("yes", "frozen"),
                                                        ("no", "not frozen")])
    quarantine = forms.ChoiceField(required=False, choices=[("", "any")] + [
        (s, s) for s in c.QUARANTINE_STATES])
    pii = forms.ChoiceField(required=False, label="Personal data", choices=PII_CHOICES)
    since = forms.DateField(required=False, label="Updated since",
                            widget=forms.DateInput(attrs={"type": "date"}))
    order = forms.ChoiceField(required=False, label="Sort by", choices=ORDER_CHOICES)
    cursor = forms.CharField(required=False, max_length=c.MAX_ID_BYTES,
                             widget=forms.HiddenInput)
    # The subject filter as it travels in URLs: an opaque, short-lived token (never the id).
    subject_ref = forms.CharField(required=False, max_length=1024, widget=forms.HiddenInput)

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        assert data is not None  # Form.clean returns cleaned_data
        if data.get("subject_ref") and not data.get("subject"):
            subject = subject_from_ref(data["subject_ref"])
            if subject is None:
                self.add_error("subject_ref", "this subject search has expired; search again")
            else:
                data["subject"] = subject
                # The field shows what is being filtered on (a bound form's data is a QueryDict).
                shown = cast(QueryDict, self.data).copy()
                shown["subject"] = subject
                self.data = shown
        # What every provider refuses (control characters) is a form error here: an export
        # would otherwise fail only once its response had started streaming.
        for name in ("key", "subject", "cursor"):
            if data.get(name):
                try:
                    c.check_text(data[name], field=name)
                except c.ProviderError as exc:
                    self.add_error(name, exc.message)
        return data

    #: Not in the side-by-side row: the search box and the order have their own places, hidden
    #: fields none; the personal-data filter is drawn by its include (memory/_pii_filter.html)
    #: on the built-in store only, the one kind that keeps labels.
    NOT_IN_ROW = frozenset({"q", "order", "cursor", "subject_ref", "pii"})

    def filter_row(self) -> list[forms.BoundField]:
        """The filters shown side by side, in declaration order: a field added to this form
        (or by a subclass) appears on the page, in links and in confirmations by itself."""
        return [self[name] for name in self.fields if name not in self.NOT_IN_ROW]

    def filters(self) -> c.ItemFilters:
        data = self.cleaned_data
        since = data.get("since")
        return c.ItemFilters(
            q=data.get("q") or None, tier=data.get("tier") or None,
            key_prefix=data.get("key") or None, subject=data.get("subject") or None,
            order=data.get("order") or None,
            frozen={"yes": True, "no": False}.get(data.get("frozen") or ""),
            quarantine=data.get("quarantine") or None, pii=data.get("pii") or None,
            updated_since=dt.datetime.combine(since, dt.time.min, tzinfo=dt.UTC)
            if since else None,
        )

    def query_without_cursor(self) -> str:
        """The filters for a link: a subject travels as ``subject_ref``, never in clear."""
        params = {k: v for k, v in self.data.items()
                  if k in self.fields and k != "cursor" and v}
        if params.get("subject"):
            params["subject_ref"] = subject_ref(params.pop("subject"))
        return urlencode(params)


#: How long a subject search stays usable in links (Load more, export) before it is typed again.
SUBJECT_REF_SECONDS = 3600


def subject_ref(subject: str) -> str:
    from memadmin.lib.keys import opaque_token

    return opaque_token(subject, purpose="subject filter")


def subject_from_ref(token: str) -> str | None:
    from memadmin.lib.keys import opaque_token_open

    return opaque_token_open(token, purpose="subject filter", max_age=SUBJECT_REF_SECONDS)


class ItemEditForm(forms.Form):
    content = forms.CharField(required=False, strip=False,
                              widget=forms.Textarea(attrs={"rows": 14, "spellcheck": "false"}),
                              max_length=1_000_000)
    mode = forms.ChoiceField(choices=[("replace", "Replace the content"),
                                      ("append", "Append to the content")], initial="replace")
    expected_revision = forms.IntegerField(min_value=1, widget=forms.HiddenInput)
    expires_at = forms.DateTimeField(
        required=False, label="Expires (UTC)",
        widget=forms.DateTimeInput(attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M"),
        help_text="Empty: it never expires. Once past, the retention duty deletes it "
                  "(unless it is frozen or on legal hold).")

    def clean_expires_at(self) -> dt.datetime | None:
        value = self.cleaned_data.get("expires_at")
        # The field is labelled UTC whatever the server's time zone.
        return value.replace(tzinfo=dt.UTC) if value is not None else None


class FreezeForm(forms.Form):
    kind = forms.ChoiceField(choices=[("freeze", "Freeze (owner)"),
                                      ("legal_hold", "Legal hold (compliance)")])
    reason = VisibleCharField(max_length=1000, widget=forms.Textarea(attrs={"rows": 2}))


class LiftForm(forms.Form):
    kind = forms.ChoiceField(choices=[("freeze", "Freeze"), ("legal_hold", "Legal hold")])


class RecallPreviewForm(forms.Form):
    text = forms.CharField(required=False, max_length=10_000,
                           widget=forms.Textarea(attrs={"rows": 3}),
                           label="What the agent receives as input")
    token_budget = forms.IntegerField(required=False, min_value=1, max_value=1_000_000,
                                      label="Token budget (optional)")


class SearchForm(forms.Form):
    q = forms.CharField(max_length=1024, label="Search memory")


class BulkDeleteForm(forms.Form):
    """The confirmation of a filter-wide delete (the filters travel beside it)."""

    exclude = forms.CharField(required=False, max_length=400_000, label="Keep these items",
                              help_text="Item ids to keep, separated by commas or new lines.",
                              widget=forms.Textarea(attrs={"rows": 3, "spellcheck": "false"}))
    expected = forms.IntegerField(required=False, min_value=0, widget=forms.HiddenInput)
    typed = forms.CharField(required=False, max_length=20, label="Type DELETE to confirm")

    def exclude_ids(self) -> list[str]:
        raw = self.cleaned_data.get("exclude") or ""
        parts = (p.strip() for p in raw.replace("\n", ",").split(","))
        return list(dict.fromkeys(p for p in parts if p and len(p) <= c.MAX_ID_BYTES))


class ExportForm(forms.Form):
    format = forms.ChoiceField(choices=[("zip", "ZIP (one JSONL file per provider + manifest)"),
                                        ("jsonl", "JSON Lines (one file)")], initial="zip",
                               widget=forms.RadioSelect)


class ImportForm(forms.Form):
    namespace = forms.ModelChoiceField(queryset=Namespace.objects.none(),
                                       label="Into namespace")
    file = forms.FileField(label="Export file (.jsonl or .zip, at most 50 MB)")

    def __init__(self, *args: Any, namespaces: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields["namespace"]
        assert isinstance(field, forms.ModelChoiceField)
        field.queryset = namespaces.select_related("resource").order_by("resource__slug", "slug")
        # A per-instance label: Django calls self.label_from_instance(obj), so this works.
        field.label_from_instance = (  # type: ignore[method-assign]
            lambda obj: f"{obj.resource.slug} / {obj.slug}")


class RetentionForm(forms.Form):
    """One form for a retention policy's three actions: set it, remove it, run it now."""

    act = forms.ChoiceField(choices=[("set", "Save the policy"), ("remove", "Remove the policy"),
                                     ("run", "Run it now")], widget=forms.HiddenInput)
    tier = forms.ChoiceField(required=False, choices=[("", "every tier")]
                             + [(t, t) for t in c.TIERS])
    action = forms.ChoiceField(required=False, choices=RETENTION_ACTIONS, initial="delete")
    rule = forms.ChoiceField(required=False, choices=RETENTION_RULES, initial="idle")
    days = forms.IntegerField(required=False, min_value=1, max_value=RETENTION_MAX_DAYS,
                              initial=90, label="Days")

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        assert data is not None  # Form.clean returns cleaned_data
        if data.get("act") == "set":
            for name in ("action", "rule", "days"):
                if data.get(name) in (None, "") and name not in self.errors:
                    self.add_error(name, "This field is required to save a policy.")
        return data
