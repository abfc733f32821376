"""The one normaliser of typed text: invisible characters count as blank, as spaces do."""

from __future__ import annotations

import pytest
from django import forms
from django.urls import reverse

from memadmin.lib.textinput import VisibleCharField, visible_strip
from memadmin.memory.models import Freeze

INVISIBLE = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u200e", "\u202e", "\u00ad",
             "\u3164", "\u2800", " ", "\u00a0", "\t"]


@pytest.mark.parametrize("char", INVISIBLE)
def test_it_strips_invisible_characters_at_the_ends(char: str) -> None:
    assert visible_strip(char * 3) == ""
    assert visible_strip(f"{char}audit{char}") == "audit"


def test_it_keeps_what_is_inside_the_text() -> None:
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467"  # joiners inside an emoji sequence
    assert visible_strip(f" {family} ") == family
    assert visible_strip("a\u200bb") == "a\u200bb"


class ReasonForm(forms.Form):
    reason = VisibleCharField(max_length=100)


@pytest.mark.parametrize("blank", ["   ", "\u200b\u200b\u200b", "\u200b \ufeff"])
def test_a_required_field_refuses_blank_or_invisible_text(blank: str) -> None:
    form = ReasonForm({"reason": blank})
    assert not form.is_valid() and "reason" in form.errors


@pytest.mark.django_db
def test_a_freeze_reason_of_zero_width_characters_is_refused(client_for, namespace) -> None:
    url = reverse("memory:namespace_freeze", args=["acme", "knowledge", "alice"])
    response = client_for("nora").post(url, {"kind": "freeze", "reason": "\u200b\u200b"})
    assert response.status_code == 302
    assert not Freeze.objects.exists()
    client_for("nora").post(url, {"kind": "freeze", "reason": "\u200b audit \u200b"})
    assert Freeze.objects.get().reason == "audit"
