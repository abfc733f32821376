"""Forms of the workspace administration pages. They validate shape; services validate rules.

(Django's form fields already refuse NUL characters, and request data cannot carry lone
surrogates: it is decoded from UTF-8 with replacement.)"""

from __future__ import annotations

import json
from typing import Any

from django import forms
from django.contrib.auth import get_user_model

from memadmin.providers.models import ProviderConfig
from memadmin.workspaces.models import (
    DEFAULT_TOKEN_LIFETIME_DAYS,
    TOKEN_LIFETIME_CHOICES,
    WORKSPACE_ROLES,
    Namespace,
    Resource,
    Workspace,
)


class WorkspaceSettingsForm(forms.ModelForm):
    class Meta:
        model = Workspace
        fields = ["four_eyes_erasure", "subject_request_due_days", "health_retention_days",
                  "wire_compliance"]
        labels = {"four_eyes_erasure": "Subject requests that change data (erasure, "
                                       "rectification, restriction and its lift) need a "
                                       "second compliance user's approval",
                  "wire_compliance": "Admin credentials may carry compliance decisions over "
                                     "the wire",
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
        except ValueError:
            # An integer of more than 4,300 digits: Python refuses to convert it (not a 500).
            raise forms.ValidationError("Not valid JSON: a number is too long.") from None


class _PolicyFields:
    """The personal-data and secrets policies (memadmin.privacy) may be left out of a post:
    a new resource then gets the defaults, an edited one keeps what it has."""

    POLICY_FIELDS = ("pii_policy", "secrets_policy")
    fields: Any
    instance: Any
    cleaned_data: dict[str, Any]

    def _optional_policies(self) -> None:
        for name in self.POLICY_FIELDS:
            self.fields[name].required = False

    def clean_pii_policy(self) -> str:
        return self.cleaned_data.get("pii_policy") or self.instance.pii_policy

    def clean_secrets_policy(self) -> str:
        return self.cleaned_data.get("secrets_policy") or self.instance.secrets_policy


class ResourceForm(_PolicyFields, forms.ModelForm):
    tools = ToolsField(required=False, help_text="JSON list of tool declarations (seed 001).")

    class Meta:
        model = Resource
        fields = ["slug", "provider", "description", "max_bytes", "item_max_bytes", "tools",
                  "pii_policy", "secrets_policy"]

    def __init__(self, *args: Any, workspace: Workspace, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._optional_policies()
        field = self.fields["provider"]
        assert isinstance(field, forms.ModelChoiceField)
        field.queryset = ProviderConfig.objects.filter(workspace=workspace)


class ResourceEditForm(_PolicyFields, forms.ModelForm):
    tools = ToolsField(required=False)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._optional_policies()

    class Meta:
        model = Resource
        fields = ["description", "max_bytes", "item_max_bytes", "tools", "pii_policy",
                  "secrets_policy"]


class NamespaceForm(forms.ModelForm):
    partition_key = forms.CharField(
        required=False, max_length=200,
        help_text="Only for a remote provider whose store already uses its own key.")

    class Meta:
        model = Namespace
        fields = ["slug", "description", "quota_bytes"]


class NamespaceEditForm(forms.ModelForm):
    class Meta:
        model = Namespace
        fields = ["description", "quota_bytes"]


ROLE_CHOICES = [(role, role.capitalize()) for role in WORKSPACE_ROLES]


class MemberForm(forms.Form):
    username = forms.CharField(max_length=150)
    roles = forms.MultipleChoiceField(choices=ROLE_CHOICES, widget=forms.CheckboxSelectMultiple)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # The members page shows this form beside OwnerForm: distinct ids (the field names, which
        # clients post, stay as they are), so no two controls share an id or a label.
        kwargs.setdefault("auto_id", "id_member_%s")
        super().__init__(*args, **kwargs)

    def clean_username(self) -> Any:
        username = self.cleaned_data["username"]
        user = get_user_model().objects.filter(username=username, is_active=True).first()
        if user is None:
            raise forms.ValidationError("No active user has that username. A new person needs "
                                        "an account first: create it on the People page.")
        return user


class MemberRolesForm(forms.Form):
    roles = forms.MultipleChoiceField(choices=ROLE_CHOICES, required=False,
                                      widget=forms.CheckboxSelectMultiple)


class OwnerForm(forms.Form):
    username = forms.CharField(max_length=150)
    namespace = forms.ModelChoiceField(queryset=Namespace.objects.none(), to_field_name="pk")

    def __init__(self, *args: Any, workspace: Workspace, **kwargs: Any) -> None:
        kwargs.setdefault("auto_id", "id_owner_%s")  # beside MemberForm: see there
        super().__init__(*args, **kwargs)
        field = self.fields["namespace"]
        assert isinstance(field, forms.ModelChoiceField)
        field.queryset = (Namespace.objects
                          .filter(resource__workspace=workspace)
                          .select_related("resource")
                          .order_by("resource__slug", "slug"))
        # A per-instance label: Django calls self.label_from_instance(obj), so this works.
        field.label_from_instance = (  # type: ignore[method-assign]
            lambda obj: f"{obj.resource.slug} / {obj.slug}")

    clean_username = MemberForm.clean_username


class LifetimeField(forms.ChoiceField):
    """How long a minted token lives: a sensible default, "never" only when chosen."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("label", "Expires after")
        kwargs.setdefault("required", False)
        super().__init__(choices=TOKEN_LIFETIME_CHOICES,
                         initial=str(DEFAULT_TOKEN_LIFETIME_DAYS), **kwargs)

    def clean(self, value: Any) -> Any:
        value = super().clean(value)
        if not value:
            return DEFAULT_TOKEN_LIFETIME_DAYS
        return None if value == "never" else int(value)


class AdminCredentialForm(forms.Form):
    name = forms.CharField(max_length=100, help_text="Who uses it, e.g. the central memadmin.")
    lifetime = LifetimeField()


class MetricsTokenForm(forms.Form):
    lifetime = LifetimeField()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # Beside AdminCredentialForm on the settings page: distinct ids, same field names.
        kwargs.setdefault("auto_id", "id_metrics_%s")
        super().__init__(*args, **kwargs)


class AlertTargetForm(forms.Form):
    kind = forms.ChoiceField(choices=[
        ("apprise", "Apprise URL (Slack, Teams, Discord, PagerDuty, Opsgenie, ntfy, Telegram, "
                    "e-mail, webhooks)"),
        ("webhook", "Webhook (JSON POST)"), ("email", "Email")])
    target = forms.CharField(
        max_length=1000, label="URL or address",
        help_text="For Apprise, e.g. slack://TokenA/TokenB/TokenC, ntfy://ntfy.example.com/topic, "
                  "msteams://…, pagerduty://…, json://hooks.example.com/path.")
    on_degraded = forms.BooleanField(required=False, label="Also alert on degraded",
                                     help_text="Down and recoveries always alert.")
