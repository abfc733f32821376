"""Forms of the workspace administration pages. They validate shape; services validate rules."""

from __future__ import annotations

import json
from typing import Any

from django import forms
from django.contrib.auth import get_user_model

from memadmin.providers.models import ProviderConfig
from memadmin.workspaces.models import WORKSPACE_ROLES, Namespace, Resource, Workspace

TEXT_LIMIT = 500


def _clean_text(value: str, field: str) -> str:
    if "\x00" in value:
        raise forms.ValidationError(f"{field} must not contain NUL characters.")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise forms.ValidationError(f"{field} is not valid text.") from None
    return value


class TextCleaningMixin:
    """Refuses NUL bytes and lone surrogates in every char field before PostgreSQL sees them."""

    cleaned_data: dict[str, Any]

    def clean(self) -> dict[str, Any]:
        data = super().clean()  # type: ignore[misc]
        for name, value in list(data.items()):
            if isinstance(value, str):
                try:
                    data[name] = _clean_text(value, name.replace("_", " ").capitalize())
                except forms.ValidationError as exc:
                    self.add_error(name, exc)  # type: ignore[attr-defined]
        return data


class WorkspaceSettingsForm(TextCleaningMixin, forms.ModelForm):
    class Meta:
        model = Workspace
        fields = ["four_eyes_erasure", "subject_request_due_days", "health_retention_days"]
        labels = {"four_eyes_erasure": "Erasure needs a second compliance user's approval",
                  "subject_request_due_days": "Subject requests are due after (days)",
                  "health_retention_days": "Keep health history for (days)"}


class ToolsField(forms.CharField):
    """Tools as JSON text in a textarea; the model validates the declarations."""

    widget = forms.Textarea(attrs={"rows": 8, "spellcheck": "false"})

    def prepare_value(self, value: Any) -> str:
        if isinstance(value, str):
            return value
        return json.dumps(value or [], indent=2)

    def to_python(self, value: Any) -> Any:
        text = super().to_python(value) or "[]"
        if len(text) > 64 * 1024:
            raise forms.ValidationError("Tools must be at most 64 KiB of JSON.")
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise forms.ValidationError(f"Not valid JSON: {exc.msg} (line {exc.lineno}).") from None


class ResourceForm(TextCleaningMixin, forms.ModelForm):
    tools = ToolsField(required=False, help_text="JSON list of tool declarations (seed 001).")

    class Meta:
        model = Resource
        fields = ["slug", "provider", "description", "max_bytes", "item_max_bytes", "tools"]

    def __init__(self, *args: Any, workspace: Workspace, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["provider"].queryset = ProviderConfig.objects.filter(workspace=workspace)


class ResourceEditForm(TextCleaningMixin, forms.ModelForm):
    tools = ToolsField(required=False)

    class Meta:
        model = Resource
        fields = ["description", "max_bytes", "item_max_bytes", "tools"]


class NamespaceForm(TextCleaningMixin, forms.ModelForm):
    partition_key = forms.CharField(
        required=False, max_length=200,
        help_text="Only for a remote provider whose store already uses its own key.")

    class Meta:
        model = Namespace
        fields = ["slug", "description", "quota_bytes"]


class NamespaceEditForm(TextCleaningMixin, forms.ModelForm):
    class Meta:
        model = Namespace
        fields = ["description", "quota_bytes"]


ROLE_CHOICES = [(role, role.capitalize()) for role in WORKSPACE_ROLES]


class MemberForm(TextCleaningMixin, forms.Form):
    username = forms.CharField(max_length=150)
    roles = forms.MultipleChoiceField(choices=ROLE_CHOICES, widget=forms.CheckboxSelectMultiple)

    def clean_username(self) -> Any:
        username = self.cleaned_data["username"]
        user = get_user_model().objects.filter(username=username, is_active=True).first()
        if user is None:
            raise forms.ValidationError("No active user has that username.")
        return user


class MemberRolesForm(forms.Form):
    roles = forms.MultipleChoiceField(choices=ROLE_CHOICES, required=False,
                                      widget=forms.CheckboxSelectMultiple)


class OwnerForm(TextCleaningMixin, forms.Form):
    username = forms.CharField(max_length=150)
    namespace = forms.ModelChoiceField(queryset=Namespace.objects.none(), to_field_name="pk")

    def __init__(self, *args: Any, workspace: Workspace, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["namespace"].queryset = (Namespace.objects
                                             .filter(resource__workspace=workspace)
                                             .select_related("resource")
                                             .order_by("resource__slug", "slug"))
        self.fields["namespace"].label_from_instance = (
            lambda ns: f"{ns.resource.slug} / {ns.slug}")

    clean_username = MemberForm.clean_username
