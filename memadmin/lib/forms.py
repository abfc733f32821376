"""The form renderer: Django's own form templates, except those the project overrides under
``templates/django/forms/`` (field errors in an alert region, so a failed save is announced)."""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import Any

import django.forms
from django.conf import settings
from django.forms.renderers import DjangoTemplates


class FormRenderer(DjangoTemplates):
    @cached_property
    def engine(self) -> Any:
        engine: dict[str, Any] = settings.TEMPLATES[0]
        project = [Path(d) for d in engine.get("DIRS", [])]
        return self.backend({
            "APP_DIRS": True,
            "DIRS": [*project, Path(django.forms.__file__).parent / "templates"],
            "NAME": "memadmin-forms",
            "OPTIONS": {},
        })
