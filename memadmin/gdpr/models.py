"""Data-subject requests (access, erasure, rectification, restriction and the lift of a
restriction), their per-provider steps, the items a request touched, and tombstones."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models

from memadmin.workspaces.models import Workspace

REQUEST_STATES = ["new", "awaiting_approval", "approved", "running", "completed", "partial",
                  "completed_with_exceptions", "denied", "cancelled"]
#: What each state is called on the pages.
REQUEST_STATE_LABELS = {
    "new": "New (not submitted)", "awaiting_approval": "Waiting for approval",
    "approved": "Approved, about to run", "running": "Running", "completed": "Completed",
    "partial": "Partly done: needs attention",
    "completed_with_exceptions": "Completed with exceptions", "denied": "Denied",
    "cancelled": "Cancelled",
}
#: States in which the clear subject id is still kept (it is needed to run the request).
REQUEST_OPEN_STATES = ["new", "awaiting_approval", "approved", "running", "partial"]
#: The kind of the cascade job that runs a request (its params: the request id only).
JOB_KIND = "subject_request_run"
#: The kind of the job that asks every provider for its count of the subject (a preview).
PREVIEW_JOB_KIND = "subject_request_preview"
#: Every kind of request; ``lift`` is made from a completed restriction, never from the form.
REQUEST_KINDS = ["access", "erasure", "rectification", "restriction", "lift"]
#: The note of a step whose store its agents write directly: a freeze there refuses
#: memadmin's writes only (named on the page and the receipt).
NOT_ENFORCED_NOTE = ("the store's agents write to it directly: the freeze refuses memadmin's "
                     "writes only")
#: Kinds that change memory (four eyes apply where the workspace asks for them).
CHANGING_KINDS = frozenset({"erasure", "rectification", "restriction", "lift"})
STEP_STATES = ["pending", "running", "done", "held", "unsupported", "retrying", "failed",
               "resolved"]
STEP_STATE_LABELS = {
    "pending": "waiting", "running": "in progress", "done": "done",
    "held": "items on hold", "unsupported": "not supported by this system",
    "retrying": "will try again", "failed": "failed", "resolved": "resolved by hand",
}


class SubjectRequest(models.Model):
    KIND_CHOICES = [("access", "Access (Art. 15/20)"), ("erasure", "Erasure (Art. 17)"),
                    ("rectification", "Rectification (Art. 16)"),
                    ("restriction", "Restriction (Art. 18)"),
                    ("lift", "Lift of a restriction (Art. 18(3))")]
    #: What the "new request" form offers (a lift starts from its restriction's page).
    CREATE_KIND_CHOICES = KIND_CHOICES[:4]

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.PROTECT,
                                  related_name="subject_requests")
    kind = models.CharField(max_length=16, choices=KIND_CHOICES)
    # A ``lift`` request: the restriction whose freezes it lifts.
    lifts = models.ForeignKey("self", null=True, blank=True, on_delete=models.PROTECT,
                              related_name="lift_requests")
    subject_key_id = models.CharField(max_length=32)
    subject_hash = models.CharField(max_length=64, db_index=True)
    # Dropped (set to NULL) once the request reaches completed, denied or cancelled.
    subject_id = models.CharField(max_length=256, null=True, blank=True)
    reason = models.CharField(max_length=2000)
    state = models.CharField(max_length=32, default="new")
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True,
                                     on_delete=models.SET_NULL, related_name="+")
    decided_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                   on_delete=models.SET_NULL, related_name="+")
    decision_reason = models.CharField(max_length=2000, blank=True)
    cancelled_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                     on_delete=models.SET_NULL, related_name="+")
    override_hold = models.BooleanField(default=False)
    override_reason = models.CharField(max_length=2000, blank=True)
    override_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                    on_delete=models.SET_NULL, related_name="+")
    # What the approval covered (``transitions.approval_digest``: kind, subject hash, override
    # and its reason, the providers); empty until approved. Any change voids the approval.
    approval_digest = models.CharField(max_length=64, blank=True)
    # Which run of the cascade this is (1 = the first; each retry adds one). Part of every
    # provider operation id, so a resumed run replays its own calls and a retry makes new ones.
    run_round = models.PositiveIntegerField(default=0)
    job = models.ForeignKey("jobs.Job", null=True, blank=True, on_delete=models.SET_NULL,
                            related_name="+")
    # The latest "Preview counts" job (its progress: providers answered so far).
    preview_job = models.ForeignKey("jobs.Job", null=True, blank=True,
                                    on_delete=models.SET_NULL, related_name="+")
    due_at = models.DateTimeField()
    # Art. 12(3): the due date moved on by up to two months in all, with a reason (audited).
    extension_months = models.PositiveSmallIntegerField(default=0)
    extension_reason = models.CharField(max_length=2000, blank=True)
    extended_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                    on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    decided_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    completed_at = models.DateTimeField(null=True, blank=True)
    verification = models.JSONField(default=dict, blank=True)
    receipt = models.JSONField(null=True, blank=True)
    receipt_key_id = models.CharField(max_length=32, blank=True)
    receipt_signature = models.CharField(max_length=128, blank=True)
    access_file = models.CharField(max_length=300, blank=True)
    access_file_expires_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(condition=models.Q(state__in=REQUEST_STATES),
                                   name="subjectrequest_state"),
            models.CheckConstraint(condition=models.Q(kind__in=REQUEST_KINDS),
                                   name="subjectrequest_kind"),
            models.CheckConstraint(condition=models.Q(kind="lift", lifts__isnull=False)
                                   | (~models.Q(kind="lift") & models.Q(lifts__isnull=True)),
                                   name="subjectrequest_lift_names_its_restriction"),
            models.CheckConstraint(
                condition=models.Q(state__in=REQUEST_OPEN_STATES)
                | models.Q(subject_id__isnull=True),
                name="subjectrequest_clear_id_dropped_when_closed",
            ),
        ]
        indexes = [models.Index(fields=["workspace", "state", "due_at"],
                                name="subjectrequest_queue")]

    @property
    def state_label(self) -> str:
        return REQUEST_STATE_LABELS.get(self.state, self.state)


class SubjectRequestStep(models.Model):
    """One provider's part of a request."""

    id = models.BigAutoField(primary_key=True)
    request = models.ForeignKey(SubjectRequest, on_delete=models.CASCADE, related_name="steps")
    provider = models.ForeignKey("providers.ProviderConfig", null=True,
                                 on_delete=models.SET_NULL, related_name="+")
    provider_label = models.CharField(max_length=200)
    state = models.CharField(max_length=12, default="pending")
    found = models.BigIntegerField(null=True, blank=True, help_text="Preview count; null = unknown")
    found_more = models.BooleanField(default=False, help_text="found is a lower bound")
    # When the latest preview saved this step's answer (None: not asked yet, or still asking).
    previewed_at = models.DateTimeField(null=True, blank=True)
    removed = models.BigIntegerField(default=0)
    held = models.BigIntegerField(default=0)
    exported = models.BigIntegerField(default=0)
    residue = models.BigIntegerField(null=True, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    error = models.CharField(max_length=1000, blank=True)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # A step compliance resolved by hand (state ``resolved``): who, when and why. Shown on
    # the receipt.
    resolution = models.CharField(max_length=2000, blank=True)
    resolved_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                    on_delete=models.SET_NULL, related_name="+")
    resolved_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["request", "provider"], name="subjectstep_unique"),
            models.CheckConstraint(condition=models.Q(state__in=STEP_STATES),
                                   name="subjectstep_state"),
        ]

    @property
    def state_label(self) -> str:
        return STEP_STATE_LABELS.get(self.state, self.state)


ITEM_STATES = ["frozen", "already_frozen", "lifted", "proposed", "applied", "failed"]
ITEM_STATE_LABELS = {
    "frozen": "frozen by this request", "already_frozen": "already on legal hold (left as is)",
    "lifted": "freeze lifted", "proposed": "correction proposed", "applied": "corrected",
    "failed": "not changed",
}


class SubjectRequestItem(models.Model):
    """One item a request touched on one provider: a freeze a restriction placed (which its
    lift takes off again), or a correction of a rectification (proposed, then applied through
    the provider's ``update_item``, i.e. a new revision).

    Only ids, revisions and SHA-256 hashes of content stay: ``content`` (a proposed correction)
    is emptied once it is applied or the request closes."""

    id = models.BigAutoField(primary_key=True)
    request = models.ForeignKey(SubjectRequest, on_delete=models.CASCADE, related_name="items")
    step = models.ForeignKey(SubjectRequestStep, on_delete=models.CASCADE, related_name="items")
    item_id = models.CharField(max_length=1024)
    partition = models.CharField(max_length=200)
    tier = models.CharField(max_length=16, blank=True)
    state = models.CharField(max_length=16)
    from_revision = models.PositiveIntegerField(null=True, blank=True)
    to_revision = models.PositiveIntegerField(null=True, blank=True)
    old_hash = models.CharField(max_length=64, blank=True)
    new_hash = models.CharField(max_length=64, blank=True)
    content = models.TextField(blank=True)
    note = models.CharField(max_length=1000, blank=True)
    proposed_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                    on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["request", "step", "partition", "item_id"],
                                    name="subjectitem_unique"),
            models.CheckConstraint(condition=models.Q(state__in=ITEM_STATES),
                                   name="subjectitem_state"),
        ]

    @property
    def state_label(self) -> str:
        return ITEM_STATE_LABELS.get(self.state, self.state)


class Tombstone(models.Model):
    """A keyed hash of an erased subject id: writes carrying it are refused until lifted."""

    id = models.BigAutoField(primary_key=True)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="tombstones")
    key_id = models.CharField(max_length=32)
    subject_hash = models.CharField(max_length=64)
    request = models.ForeignKey(SubjectRequest, null=True, blank=True, on_delete=models.SET_NULL,
                                related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    lifted_at = models.DateTimeField(null=True, blank=True)
    lifted_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                  on_delete=models.SET_NULL, related_name="+")
    lift_reason = models.CharField(max_length=2000, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["workspace", "key_id", "subject_hash"],
                                    condition=models.Q(lifted_at__isnull=True),
                                    name="tombstone_one_active"),
        ]
