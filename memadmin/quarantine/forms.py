"""Forms of the review queue (bad values become clear errors, never a 500)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from django import forms
from django.core.validators import RegexValidator

from memadmin.quarantine.selectors import STATE_FILTERS, QueueFilters
from memadmin.quarantine.services import DECISIONS, NOTE_MAX_CHARS

_SLUG = RegexValidator(r"^[-a-zA-Z0-9_]+\Z", "Letters, digits, - and _ only.")


class QueueFilterForm(forms.Form):
    state = forms.ChoiceField(required=False, choices=[(s, s) for s in STATE_FILTERS])
    provider = forms.CharField(required=False, max_length=64, validators=[_SLUG])
    rule = forms.CharField(required=False, max_length=64, validators=[_SLUG])
    namespace = forms.UUIDField(required=False)
    cursor = forms.CharField(required=False, max_length=200, widget=forms.HiddenInput)

    def __init__(self, *args: Any, providers: Sequence[tuple[str, str]] = (),
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.provider_choices = providers

    def filters(self) -> QueueFilters:
        data = self.cleaned_data if self.is_bound else {}
        return QueueFilters(state=data.get("state") or "pending",
                            provider=data.get("provider") or None,
                            rule=data.get("rule") or None,
                            namespace=data.get("namespace"))


class DecisionForm(forms.Form):
    """``act`` is ``<decision>:<entry id>``, ``<decision>:selected`` or ``<decision>:matching``;
    the decision ``allow`` is a release that allow-lists the content."""

    act = forms.CharField(max_length=64)
    ids = forms.TypedMultipleChoiceField(required=False, coerce=uuid.UUID, choices=())
    note = forms.CharField(required=False, max_length=NOTE_MAX_CHARS,
                           widget=forms.Textarea(attrs={"rows": 2}))
    allow = forms.BooleanField(required=False,
                               label="Allow-list this exact content (release only)")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Any well-formed id may be posted; the queue checks it belongs to the workspace.
        self.fields["ids"].valid_value = _is_uuid  # type: ignore[attr-defined]

    def clean_act(self) -> tuple[str, str, bool]:
        decision, _, target = self.cleaned_data["act"].partition(":")
        allow = decision == "allow"
        decision = "release" if allow else decision
        if decision not in DECISIONS:
            raise forms.ValidationError("Unknown decision.")
        if target not in ("selected", "matching") and not _is_uuid(target):
            raise forms.ValidationError("Unknown target.")
        return decision, target, allow

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        assert data is not None  # Form.clean returns cleaned_data
        act = data.get("act")
        if act and act[1] == "selected" and not data.get("ids"):
            raise forms.ValidationError("Select at least one entry.")
        return data


def _is_uuid(value: Any) -> bool:
    try:
        uuid.UUID(str(value))
    except ValueError:
        return False
    return True
