"""Forms of the subject-request pages (bad values become clear errors, never a 500)."""

from __future__ import annotations

from django import forms

from memadmin.gdpr.models import REQUEST_STATE_LABELS, REQUEST_STATES, SubjectRequest
from memadmin.gdpr.transitions import REASON_MAX_CHARS
from memadmin.providers import contract as c


class RequestFilterForm(forms.Form):
    state = forms.ChoiceField(required=False, choices=[("", "any"), ("open", "open")] + [
        (s, REQUEST_STATE_LABELS[s]) for s in REQUEST_STATES])
    kind = forms.ChoiceField(required=False, choices=[("", "any")] + SubjectRequest.KIND_CHOICES)
    overdue = forms.ChoiceField(required=False, choices=[("", "any"), ("yes", "overdue"),
                                                         ("no", "on time")])
    approval = forms.ChoiceField(required=False, label="Approval",
                                 choices=[("", "any"), ("mine", "waiting for my approval")])


class RequestSearchForm(RequestFilterForm):
    """The filters plus the search text, sent by POST only: a subject id typed here never
    reaches a URL (nor an access log)."""

    q = forms.CharField(required=False, max_length=c.MAX_SUBJECT_ID_CHARS,
                        label="Request id, reason words or exact subject id")


class RequestCreateForm(forms.Form):
    kind = forms.ChoiceField(choices=SubjectRequest.CREATE_KIND_CHOICES,
                             widget=forms.RadioSelect)
    subject_id = forms.CharField(max_length=c.MAX_SUBJECT_ID_CHARS, strip=False,
                                 label="Data-subject id",
                                 help_text="Exactly as the agents store it, e.g. user:jane.doe@"
                                           "example.com.")
    reason = forms.CharField(max_length=REASON_MAX_CHARS, label="Reason / legal basis",
                             widget=forms.Textarea(attrs={"rows": 3}))


class ReasonForm(forms.Form):
    reason = forms.CharField(required=False, max_length=REASON_MAX_CHARS,
                             widget=forms.Textarea(attrs={"rows": 2}))


class StepResolveForm(forms.Form):
    """Resolve one step of a partial request by hand: which step, and why (required)."""

    step = forms.IntegerField(min_value=1, max_value=2**62)
    justification = forms.CharField(max_length=REASON_MAX_CHARS,
                                    widget=forms.Textarea(attrs={"rows": 2}))


class ExtendForm(forms.Form):
    """Extend the due date (Art. 12(3)): by one or two months, with the reason."""

    months = forms.TypedChoiceField(choices=[(1, "one month"), (2, "two months")], coerce=int)
    reason = forms.CharField(max_length=REASON_MAX_CHARS,
                             widget=forms.Textarea(attrs={"rows": 2}))


class CorrectionForm(forms.Form):
    """One item's corrected text (a rectification): which provider's step, the item's
    partition and id as listed, and the new text (checked further by the transition)."""

    step_id = forms.IntegerField(min_value=1, max_value=2**62, widget=forms.HiddenInput)
    partition = forms.CharField(max_length=200, widget=forms.HiddenInput)
    item_id = forms.CharField(max_length=c.MAX_ID_BYTES, widget=forms.HiddenInput)
    content = forms.CharField(max_length=16_384, strip=False, label="Corrected text",
                              widget=forms.Textarea(attrs={"rows": 4}))
