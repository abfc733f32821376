"""Two-factor pages: enrol a TOTP authenticator (QR code as an SVG image, no inline script or
style), enter a code after the password, and recovery codes (django-otp's static device)."""

from __future__ import annotations

import base64
from typing import Any

import segno
from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_http_methods, require_POST
from django_otp import login as otp_login
from django_otp import match_token
from django_otp.plugins.otp_static.models import StaticDevice, StaticToken
from django_otp.plugins.otp_totp.models import TOTPDevice

from memadmin.lib.http import AuthenticatedHttpRequest

RECOVERY_CODES = 10
ISSUER = "memadmin"


class CodeForm(forms.Form):
    code = forms.CharField(max_length=16, label="Code",
                           widget=forms.TextInput(attrs={"autocomplete": "one-time-code",
                                                         "inputmode": "numeric",
                                                         "autofocus": True}))


def _next(request: AuthenticatedHttpRequest) -> str:
    target = request.POST.get("next") or request.GET.get("next") or ""
    if target and url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()},
                                                  require_https=request.is_secure()):
        return target
    return "/"


def _recovery_codes(user: Any) -> list[str]:
    """New recovery codes for ``user`` (the old ones stop working); shown once."""
    device, _ = StaticDevice.objects.get_or_create(user=user, name="recovery",
                                                   defaults={"confirmed": True})
    device.token_set.all().delete()
    codes = [StaticToken.random_token() for _ in range(RECOVERY_CODES)]
    StaticToken.objects.bulk_create([StaticToken(device=device, token=code) for code in codes])
    return codes


@require_http_methods(["GET", "POST"])
@login_required
def verify(request: AuthenticatedHttpRequest) -> HttpResponse:
    """The second step of a login: a code from the authenticator, or a recovery code."""
    if request.user.is_verified():  # type: ignore[attr-defined]  # added by OTPMiddleware
        return redirect(_next(request))
    form = CodeForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        device = match_token(request.user, form.cleaned_data["code"].replace(" ", ""))
        if device is not None and device.confirmed:
            otp_login(request, device)
            if isinstance(device, StaticDevice):
                left = device.token_set.count()
                messages.warning(request, f"Recovery code used; {left} left.")
            return redirect(_next(request))
        form.add_error("code", "That code is not valid (or was already used).")
    return render(request, "accounts/2fa_verify.html", {"form": form, "next": _next(request)},
                  status=400 if form.errors else 200)


def _qr_data_uri(device: TOTPDevice, username: str) -> str:
    secret = base64.b32encode(device.bin_key).decode("ascii").rstrip("=")
    uri = (f"otpauth://totp/{ISSUER}:{username}?secret={secret}&issuer={ISSUER}"
           f"&digits={device.digits}&period={device.step}")
    return segno.make(uri, error="m").svg_data_uri(scale=4)


@require_http_methods(["GET", "POST"])
@login_required
def setup(request: AuthenticatedHttpRequest) -> HttpResponse:
    """Enrol an authenticator: scan the QR code (or type the key), confirm with one code; the
    recovery codes are shown once."""
    if TOTPDevice.objects.filter(user=request.user, confirmed=True).exists() and not (
            request.user.is_verified()):  # type: ignore[attr-defined]  # added by OTPMiddleware
        return redirect("accounts:2fa_verify")
    device = (TOTPDevice.objects.filter(user=request.user, confirmed=False).first()
              or TOTPDevice.objects.create(user=request.user, name="authenticator",
                                           confirmed=False))
    form = CodeForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        if device.verify_token(form.cleaned_data["code"].replace(" ", "")):
            with transaction.atomic():
                TOTPDevice.objects.filter(user=request.user).exclude(pk=device.pk).delete()
                device.confirmed = True
                device.save(update_fields=["confirmed"])
                codes = _recovery_codes(request.user)
            otp_login(request, device)
            return render(request, "accounts/2fa_codes.html",
                          {"codes": codes, "next": _next(request)})
        form.add_error("code", "That code does not match; check the time on your device.")
    secret = base64.b32encode(device.bin_key).decode("ascii").rstrip("=")
    return render(request, "accounts/2fa_setup.html", {
        "form": form, "qr": _qr_data_uri(device, request.user.get_username()),
        "secret": secret, "next": _next(request),
        "enrolled": TOTPDevice.objects.filter(user=request.user, confirmed=True).exists(),
    }, status=400 if form.errors else 200)


@require_POST
@login_required
def recovery_codes(request: AuthenticatedHttpRequest) -> HttpResponse:
    """New recovery codes (needs a session verified with a second factor)."""
    if not request.user.is_verified():  # type: ignore[attr-defined]  # added by OTPMiddleware
        return redirect("accounts:2fa_verify")
    codes = _recovery_codes(request.user)
    return render(request, "accounts/2fa_codes.html", {"codes": codes, "next": "/"})
