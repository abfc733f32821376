from __future__ import annotations

from django.urls import path

from memadmin.memory import views

app_name = "memory"

W = "w/<slug:slug>/"

urlpatterns = [
    path(W + "tokens/", views.token_list, name="tokens"),
    path(W + "tokens/new/", views.token_mint, name="token_mint"),
    path(W + "tokens/<uuid:token_id>/revoke/", views.token_revoke, name="token_revoke"),
]
