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


def apply_service(form: Any, call: Any) -> Any:
    """Run a service for ``form``; its ValidationErrors become the form's errors (on the field
    they name, else the form). Returns the service's result, or None when it failed."""
    from django.core.exceptions import ValidationError

    try:
        return call()
    except ValidationError as exc:
        if hasattr(exc, "error_dict"):
            for field, errors in exc.error_dict.items():
                form.add_error(field if field in form.fields else None, errors)
        else:
            form.add_error(None, exc)
        return None
