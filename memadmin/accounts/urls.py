from __future__ import annotations

from django.urls import path

from memadmin.accounts import views

app_name = "accounts"

urlpatterns = [
    path("accounts/2fa/", views.verify, name="2fa_verify"),
    path("accounts/2fa/setup/", views.setup, name="2fa_setup"),
    path("accounts/2fa/recovery-codes/", views.recovery_codes, name="2fa_recovery_codes"),
]

from memadmin.accounts import people  # noqa: E402

urlpatterns += [
    path("w/<slug:slug>/members/people/", people.people, name="people"),
    path("w/<slug:slug>/members/people/new/", people.account_create, name="account_create"),
    path("w/<slug:slug>/members/people/<str:username>/active/", people.account_active,
         name="account_active"),
    path("w/<slug:slug>/members/people/<str:username>/reset-2fa/", people.account_reset_2fa,
         name="account_reset_2fa"),
    path("accounts/set-password/<uidb64>/<token>/", people.set_password, name="set_password"),
]

from memadmin.accounts import sso  # noqa: E402

urlpatterns += [
    path("accounts/sso/", sso.start, name="sso_start"),
    path("accounts/sso/callback/", sso.callback, name="sso_callback"),
]
