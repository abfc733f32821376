from __future__ import annotations

from typing import Any

from django import forms

from memadmin.events.models import EVENT_TYPES

TYPE_CHOICES = [(name, f"{name}: {what}") for name, what in EVENT_TYPES.items()]


class EndpointForm(forms.Form):
    name = forms.CharField(max_length=100, help_text="How this page and the log name it.")
    url = forms.URLField(max_length=1000, label="URL", assume_scheme="https",
                         help_text="Receives a signed JSON POST per event (https; a host the "
                                   "outbound policy allows).")
    event_types = forms.MultipleChoiceField(
        choices=TYPE_CHOICES, required=False, widget=forms.CheckboxSelectMultiple,
        label="Events", help_text="None ticked: every event.")


class EndpointCreateForm(EndpointForm):
    secret = forms.CharField(
        max_length=200, required=False, label="Signing secret",
        widget=forms.PasswordInput(render_value=False),
        help_text="Leave empty to have one made (shown once). Or paste a whsec_… secret your "
                  "receiver already uses.")

    def clean_secret(self) -> str:
        return str(self.cleaned_data.get("secret") or "").strip()


def initial_of(endpoint: Any) -> dict[str, Any]:
    return {"name": endpoint.name, "url": endpoint.url, "event_types": endpoint.event_types}
