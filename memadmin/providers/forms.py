"""Provider configuration forms. The credential is write-only: never rendered back."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from typing import Any

from django import forms

from memadmin.lib.outbound import origin_of
from memadmin.providers.models import ProviderConfig

_RELATIVE_FOLDER = re.compile(r"[A-Za-z0-9_-]{1,64}(/[A-Za-z0-9_-]{1,64}){0,3}")


class ProviderForm(forms.ModelForm):
    credential = forms.CharField(
        required=False, max_length=500, strip=True,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "off"}),
        help_text="Write-only. Leave empty to keep the current one.")
    clear_credential = forms.BooleanField(required=False, label="Remove the stored credential")

    class Meta:
        model = ProviderConfig
        fields = ["name", "slug", "kind", "url", "options", "health_deadline_ms",
                  "request_deadline_ms", "enabled", "probed"]
        labels = {"health_deadline_ms": "Health deadline (ms)",
                  "request_deadline_ms": "Request deadline (ms)",
                  "probed": "Probed (poll this provider's health)"}
        help_texts = {"health_deadline_ms": "Empty: 200 ms built-in, 1,000 ms remote.",
                      "url": "For remote providers: the endpoint URL, e.g. "
                             "https://memory.example.com/oc-memory",
                      "options": "Governed stores, as JSON. Markdown: {\"root\": \"folder "
                                 "under var/stores\", \"subject_marker\": \"Subject:\"}. "
                                 "LangGraph: {\"prefixes\": {\"<namespace>\": [\"memories\"]}, "
                                 "\"subject\": {\"position\": 1} or {\"key\": \"user_id\"}} "
                                 "(the connection string goes in the credential). Mem0: "
                                 "{\"config\": {...Memory.from_config...}}."}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["health_deadline_ms"].required = False
        editing = not self.instance._state.adding
        if "kind" in self.fields:
            from memadmin.providers.registry import install_command

            kind = self.fields["kind"]
            assert isinstance(kind, forms.ChoiceField) and isinstance(kind.choices, Iterable)
            kind.choices = [
                (value, label if not value or install_command(value) is None
                 else f"{label} (not installed: {install_command(value)})")
                for value, label in kind.choices]
        if not editing and not self.is_bound:
            # A provider nobody polls is a provider nobody notices going down.
            self.initial.setdefault("probed", True)
        if editing:
            # Kind and slug identify the provider; changing them would orphan its data.
            del self.fields["kind"]
            del self.fields["slug"]
        if not (editing and self.instance.credential):
            del self.fields["clear_credential"]

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        assert data is not None  # Form.clean returns cleaned_data
        kind = data.get("kind") or self.instance.kind
        if kind == "http" and not data.get("url"):
            self.add_error("url", "A remote provider needs its endpoint URL.")
        if kind == "local" and data.get("url"):
            self.add_error("url", "The built-in provider has no URL.")
        if (self.instance.credential and data.get("url")
                and origin_of(data["url"]) != origin_of(self.instance.url)
                and not data.get("credential") and not data.get("clear_credential")):
            # The credential is bound to the origin: it never follows the URL elsewhere.
            self.add_error("credential", "The URL points to another origin (scheme, host or "
                           "port): enter the credential again for it, or remove it.")
        options = data.get("options")
        if options in (None, ""):
            data["options"] = options = {}
        if not isinstance(options, dict):
            self.add_error("options", "Options must be a JSON object.")
        elif kind == "markdown":
            root = options.get("root")
            if not isinstance(root, str) or not _RELATIVE_FOLDER.fullmatch(root):
                self.add_error("options", "A Markdown provider needs \"root\": a folder under "
                                          "var/stores (letters, digits, -, _ and /; no ..).")
        elif kind == "langgraph" and not (data.get("credential") or self.instance.credential):
            self.add_error("credential", "A LangGraph store needs its PostgreSQL connection "
                                         "string (kept write-only).")
        return data

    def changes(self) -> dict[str, Any]:
        """The fields to pass to the service (credential only when typed or cleared)."""
        data = {name: self.cleaned_data[name] for name in self.changed_data
                if name in self.Meta.fields and name in self.fields}
        if self.cleaned_data.get("credential"):
            data["credential"] = self.cleaned_data["credential"]
        elif self.cleaned_data.get("clear_credential"):
            data["credential"] = ""
        if data.get("health_deadline_ms") is None:
            data.pop("health_deadline_ms", None)
        return data


class MaintenanceForm(forms.Form):
    provider = forms.ModelChoiceField(
        queryset=ProviderConfig.objects.none(), required=False,
        empty_label="Every provider of the workspace")
    starts_at = forms.DateTimeField(label="Starts", widget=forms.DateTimeInput(
        attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M"),
        help_text="Server time (UTC).")
    ends_at = forms.DateTimeField(label="Ends", widget=forms.DateTimeInput(
        attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M"))
    reason = forms.CharField(max_length=300, help_text="Shown on the panel while it runs.")

    def __init__(self, *args: Any, workspace: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields["provider"]
        assert isinstance(field, forms.ModelChoiceField)
        field.queryset = ProviderConfig.objects.filter(workspace=workspace).order_by("name")
        if not self.is_bound:
            from django.utils import timezone

            start = timezone.now().replace(second=0, microsecond=0)
            self.initial.setdefault("starts_at", start)
            self.initial.setdefault("ends_at", start + dt.timedelta(hours=1))

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        assert data is not None  # Form.clean returns cleaned_data
        starts, ends = data.get("starts_at"), data.get("ends_at")
        if starts and ends:
            if ends <= starts:
                self.add_error("ends_at", "The window must end after it starts.")
            elif ends - starts > dt.timedelta(days=7):
                self.add_error("ends_at", "A maintenance window lasts at most 7 days.")
        return data


class IncidentNoteForm(forms.Form):
    text = forms.CharField(max_length=1000, label="Note",
                           widget=forms.Textarea(attrs={"rows": 2}),
                           help_text="What happened, what was done: for the next operator.")


class SlaExportForm(forms.Form):
    what = forms.ChoiceField(choices=[("checks", "Checks"), ("incidents", "Incidents")])
    days = forms.IntegerField(min_value=1, max_value=400, initial=30)
