"""Accounts that workspace admins manage: create (with a one-time link to choose a password),
deactivate and reactivate, and reset two-factor enrolment. Each is audited in the workspace it
was done from.

An admin may act on an account only when every workspace that account has a role in is one
they administer (superusers: any account): an admin of one workspace cannot lock someone out of
another. Nobody deactivates or resets themselves here.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.tokens import default_token_generator
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.mail import send_mail
from django.db import transaction
from django.urls import reverse
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode
from django_otp.plugins.otp_static.models import StaticDevice
from django_otp.plugins.otp_totp.models import TOTPDevice

from memadmin.audit.services import Actor, audit_event_create
from memadmin.workspaces import access
from memadmin.workspaces.models import Workspace
from memadmin.workspaces.services import role_grant, tokens_suspend_for_lost_roles


def password_link_path(user: Any) -> str:
    """The one-time "choose your password" path (Django's token: it dies once the password
    changes, or after PASSWORD_RESET_TIMEOUT)."""
    uid = urlsafe_base64_encode(force_bytes(user.pk))
    token = default_token_generator.make_token(user)
    return reverse("accounts:set_password", args=[uid, token])


def may_manage_account(actor_user: Any, target: Any) -> bool:
    """Whether the actor administers every workspace the target belongs to (never themself,
    never a superuser unless the actor is one)."""
    return target.pk in manageable_accounts(actor_user, [target])


def manageable_accounts(actor_user: Any, targets: list[Any]) -> set[Any]:
    """The pks of ``targets`` that ``actor_user`` may manage (``may_manage_account`` for each),
    in a fixed number of queries: the people page lists everyone at once."""
    if actor_user.is_superuser:
        return {t.pk for t in targets if t.pk != actor_user.pk}
    candidates = [t for t in targets if not t.is_superuser and t.pk != actor_user.pk]
    theirs = access.member_workspace_ids(candidates)
    wanted = set().union(*theirs.values()) if theirs else set()
    access.prime_workspace_roles(actor_user, wanted)
    managed = {w.pk for w in Workspace.objects.filter(pk__in=wanted)
               if access.can(actor_user, "manage_members", w)}
    return {t.pk for t in candidates if theirs[t.pk] <= managed}


def _require(actor: Actor, target: Any) -> None:
    if actor.user is None or not may_manage_account(actor.user, target):
        raise PermissionDenied("That account also belongs to workspaces you do not administer.")


@transaction.atomic
def account_create(*, actor: Actor, workspace: Workspace, username: str, email: str,
                   roles: list[str], link_base: str) -> tuple[Any, str]:
    """A new account with no usable password, the given roles in ``workspace``, and a one-time
    link to choose a password (returned; e-mailed when an address is given)."""
    model = get_user_model()
    if model.objects.filter(username__iexact=username).exists():
        raise ValidationError({"username": "An account with that username exists already: "
                                           "add it as a member instead."})
    user = model(username=username, email=email)
    user.set_unusable_password()
    user.full_clean(exclude=["password"])
    user.save()
    for role in roles:
        role_grant(actor=actor, workspace=workspace, user=user, role=role)
    link = link_base + password_link_path(user)
    audit_event_create(workspace=workspace, actor=actor, action="account.create",
                       target_type="user", target_id=user.pk,
                       data={"username": username, "roles": sorted(roles),
                             "invited_by_email": bool(email)})
    if email:
        transaction.on_commit(lambda: send_mail(
            "Your memadmin account",
            f"An account was made for you on memadmin ({workspace.name}). Choose your password "
            f"with this link (it works once): {link}\n", None, [email], fail_silently=True))
    return user, link


@transaction.atomic
def account_set_active(*, actor: Actor, workspace: Workspace, user: Any, active: bool) -> None:
    """Deactivate (the account can no longer log in; the tokens it minted are suspended) or
    reactivate an account."""
    _require(actor, user)
    if user.is_active == active:
        return
    user.is_active = active
    user.save(update_fields=["is_active"])
    suspended = 0
    if not active:
        for place in access.member_workspaces(user):
            suspended += tokens_suspend_for_lost_roles(actor=actor, workspace=place, user=user)
    audit_event_create(workspace=workspace, actor=actor,
                       action="account.reactivate" if active else "account.deactivate",
                       target_type="user", target_id=user.pk,
                       data={"username": user.get_username(), "tokens_suspended": suspended})


@transaction.atomic
def account_reset_two_factor(*, actor: Actor, workspace: Workspace, user: Any) -> int:
    """Remove every authenticator and recovery code of the account: at the next login it
    enrols again (where two-factor is required). Returns how many devices went."""
    _require(actor, user)
    removed = (TOTPDevice.objects.filter(user=user).delete()[0]
               + StaticDevice.objects.filter(user=user).delete()[0])
    audit_event_create(workspace=workspace, actor=actor, action="account.reset_2fa",
                       target_type="user", target_id=user.pk,
                       data={"username": user.get_username(), "devices": removed})
    return removed
