"""Forms of the memory pages."""

from __future__ import annotations

import datetime as dt
from typing import Any
from urllib.parse import urlencode

from django import forms

from memadmin.memory.models import AgentToken
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


class ItemFilterForm(forms.Form):
    """The browse filters (a GET form: bad values become a clear error, never a 500)."""

    q = forms.CharField(required=False, max_length=1024, label="Search")
    tier = forms.ChoiceField(required=False, choices=TIER_CHOICES)
    key = forms.CharField(required=False, max_length=128)
    subject = forms.CharField(required=False, max_length=c.MAX_SUBJECT_ID_CHARS,
                              label="Data subject")
    frozen = forms.ChoiceField(required=False, choices=[("", "any"), ("yes", "frozen"),
                                                        ("no", "not frozen")])
    quarantine = forms.ChoiceField(required=False, choices=[("", "any")] + [
        (s, s) for s in c.QUARANTINE_STATES])
    since = forms.DateField(required=False, label="Updated since",
                            widget=forms.DateInput(attrs={"type": "date"}))
    cursor = forms.CharField(required=False, max_length=c.MAX_ID_BYTES,
                             widget=forms.HiddenInput)

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        assert data is not None  # Form.clean returns cleaned_data
        # What every provider refuses (control characters) is a form error here: an export
        # would otherwise fail only once its response had started streaming.
        for name in ("key", "subject", "cursor"):
            if data.get(name):
                try:
                    c.check_text(data[name], field=name)
                except c.ProviderError as exc:
                    self.add_error(name, exc.message)
        return data

    def filters(self) -> c.ItemFilters:
        data = self.cleaned_data
        since = data.get("since")
        return c.ItemFilters(
            q=data.get("q") or None, tier=data.get("tier") or None,
            key=data.get("key") or None, subject=data.get("subject") or None,
            frozen={"yes": True, "no": False}.get(data.get("frozen") or ""),
            quarantine=data.get("quarantine") or None,
            updated_since=dt.datetime.combine(since, dt.time.min, tzinfo=dt.UTC)
            if since else None,
        )

    def query_without_cursor(self) -> str:
        params = {k: v for k, v in self.data.items() if k != "cursor" and v}
        return urlencode(params)


class ItemEditForm(forms.Form):
    content = forms.CharField(required=False, strip=False,
                              widget=forms.Textarea(attrs={"rows": 14, "spellcheck": "false"}),
                              max_length=1_000_000)
    mode = forms.ChoiceField(choices=[("replace", "Replace the content"),
                                      ("append", "Append to the content")], initial="replace")
    expected_revision = forms.IntegerField(min_value=1, widget=forms.HiddenInput)


class FreezeForm(forms.Form):
    kind = forms.ChoiceField(choices=[("freeze", "Freeze (owner)"),
                                      ("legal_hold", "Legal hold (compliance)")])
    reason = forms.CharField(max_length=1000, widget=forms.Textarea(attrs={"rows": 2}))


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
