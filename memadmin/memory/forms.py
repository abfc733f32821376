"""Forms of the memory pages."""

from __future__ import annotations

from typing import Any

from django import forms

from memadmin.memory.models import AgentToken
from memadmin.workspaces.models import Namespace


class AgentTokenForm(forms.Form):
    name = forms.CharField(max_length=100, help_text="What uses it, e.g. support-bot prod.")
    access = forms.ChoiceField(choices=AgentToken.ACCESS_CHOICES, initial="read")
    namespaces = forms.ModelMultipleChoiceField(queryset=Namespace.objects.none(),
                                                widget=forms.CheckboxSelectMultiple)

    def __init__(self, *args: Any, namespaces: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["namespaces"].queryset = namespaces.select_related("resource").order_by(
            "resource__slug", "slug")
        self.fields["namespaces"].label_from_instance = (
            lambda ns: f"{ns.resource.slug} / {ns.slug}")
