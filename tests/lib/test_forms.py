"""Form errors are announced: the project's renderer puts each error list in an alert region
and Django points the field at it."""

from __future__ import annotations

from django import forms


class _Form(forms.Form):
    name = forms.CharField(help_text="Who uses it.")


def test_it_puts_field_errors_in_an_alert_the_field_points_at() -> None:
    form = _Form({"name": ""})
    assert not form.is_valid()
    html = str(form)
    assert '<div role="alert" class="errors"><ul class="errorlist" id="id_name_error">' in html
    assert 'aria-invalid="true"' in html
    assert 'aria-describedby="id_name_helptext id_name_error"' in html
    assert 'id="id_name_helptext"' in html


def test_it_leaves_a_valid_form_without_alerts() -> None:
    form = _Form({"name": "bot"})
    assert form.is_valid()
    assert 'role="alert"' not in str(form)
