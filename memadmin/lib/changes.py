"""The one way services change editable fields of a row."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from django.core.exceptions import ValidationError
from django.db import models


def apply_changes(obj: models.Model, changes: Mapping[str, Any], editable: Iterable[str],
                  *, label: str = "not editable") -> dict[str, Any]:
    """Set ``changes`` on ``obj`` (only ``editable`` fields), validate, save just those fields.
    Returns the previous values. Call it inside the service's transaction."""
    unknown = set(changes) - set(editable)
    if unknown:
        raise ValidationError(f"{label}: {', '.join(sorted(unknown))}")
    before = {field: getattr(obj, field) for field in changes}
    for field, value in changes.items():
        setattr(obj, field, value)
    obj.full_clean()
    obj.save(update_fields=list(changes))
    return before
