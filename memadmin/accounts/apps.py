from __future__ import annotations

from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "memadmin.accounts"
    label = "memadmin_accounts"

    def ready(self) -> None:
        from django.contrib.auth.signals import user_logged_in

        from memadmin.accounts.twofactor import note_enrolment

        user_logged_in.connect(note_enrolment, dispatch_uid="memadmin_2fa_enrolment")
