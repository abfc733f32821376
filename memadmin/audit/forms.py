"""The audit trail's filter form (a GET form: a bad value is a form error, never a 500)."""

from __future__ import annotations

import datetime as dt
from typing import Any
from urllib.parse import urlencode

from django import forms
from django.db import models

from memadmin.audit.models import AuditEvent
from memadmin.audit.selectors import AuditFilters, Cursor

DATETIME_FORMATS = ["%Y-%m-%dT%H:%M", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M", "%Y-%m-%d %H:%M:%S",
                    "%Y-%m-%d"]


def _field_max(name: str) -> int:
    field = AuditEvent._meta.get_field(name)
    assert isinstance(field, models.Field)
    return int(field.max_length or 0)


class AuditFilterForm(forms.Form):
    actor = forms.CharField(required=False, max_length=_field_max("actor_label"),
                            help_text="Exact username or agent label")
    action = forms.ChoiceField(required=False, choices=[("", "any action")])
    target_type = forms.CharField(required=False, max_length=_field_max("target_type"),
                                  label="Target type")
    target_id = forms.CharField(required=False, max_length=_field_max("target_id"),
                                label="Target id contains")
    since = forms.DateTimeField(required=False, label="From (UTC)", input_formats=DATETIME_FORMATS,
                                widget=forms.DateTimeInput(attrs={"type": "datetime-local"}))
    until = forms.DateTimeField(required=False, label="To (UTC)", input_formats=DATETIME_FORMATS,
                                widget=forms.DateTimeInput(attrs={"type": "datetime-local"}))
    cursor = forms.CharField(required=False, max_length=48, widget=forms.HiddenInput)

    def __init__(self, *args: Any, actions: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields["action"]
        assert isinstance(field, forms.ChoiceField)
        field.choices = [("", "any action")] + [(a, a) for a in actions]

    def _aware(self, value: dt.datetime | None) -> dt.datetime | None:
        # Inputs are read as UTC (the page says so), whatever the server's time zone.
        if value is None:
            return None
        return value.replace(tzinfo=dt.UTC) if value.tzinfo is None else value

    def clean_since(self) -> dt.datetime | None:
        return self._aware(self.cleaned_data.get("since"))

    def clean_until(self) -> dt.datetime | None:
        return self._aware(self.cleaned_data.get("until"))

    def clean_cursor(self) -> Cursor | None:
        raw = self.cleaned_data.get("cursor") or ""
        if not raw:
            return None
        try:
            return Cursor.decode(raw)
        except ValueError:
            raise forms.ValidationError("This page link is not valid; start again.") from None

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        assert data is not None  # Form.clean returns cleaned_data
        since, until = data.get("since"), data.get("until")
        if since and until and since >= until:
            self.add_error("until", "“To” must be after “From”.")
        return data

    def filters(self) -> AuditFilters:
        data = self.cleaned_data
        return AuditFilters(
            actor=data.get("actor") or "", action=data.get("action") or "",
            target_type=data.get("target_type") or "", target_id=data.get("target_id") or "",
            since=data.get("since"), until=data.get("until"))

    def query_without_cursor(self) -> str:
        """The submitted filters as a query string, for page and export links."""
        if not self.is_bound:
            return ""
        params = {name: self.data.get(name) for name in self.fields
                  if name != "cursor" and self.data.get(name)}
        return urlencode(params)
