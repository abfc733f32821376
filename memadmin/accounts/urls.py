from __future__ import annotations

from django.urls import path

from memadmin.accounts import views

app_name = "accounts"

urlpatterns = [
    path("accounts/2fa/", views.verify, name="2fa_verify"),
    path("accounts/2fa/setup/", views.setup, name="2fa_setup"),
    path("accounts/2fa/recovery-codes/", views.recovery_codes, name="2fa_recovery_codes"),
]
