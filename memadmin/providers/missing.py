"""The stand-in for a provider kind whose optional library is not installed: its health says
"not installed" with the install command and every other operation answers ``Unavailable``
with the same words, so every page shows it instead of failing."""

from __future__ import annotations

from functools import cache
from typing import Any

from django.utils import timezone

from memadmin.providers import contract as c


class NotInstalledProvider(c.Provider):
    kind = ""
    install: str = ""

    def _refuse(self) -> c.Unavailable:
        return c.Unavailable(f"the {self.kind} provider is not installed: {self.install}",
                             {"install": self.install})

    def health(self, *, deadline: float) -> c.HealthStatus:
        return c.HealthStatus(ok=False, message=f"not installed: {self.install}",
                              checked_at=timezone.now(), latency_ms=0.0)

    def capabilities(self, *, deadline: float) -> frozenset[str]:
        return frozenset({"health", "capabilities"})

    def retain(self, *args: Any, **kwargs: Any) -> c.RetainResult:
        raise self._refuse()

    def recall(self, *args: Any, **kwargs: Any) -> c.RecallResult:
        raise self._refuse()

    def list_items(self, *args: Any, **kwargs: Any) -> c.ItemPage:
        raise self._refuse()

    def count(self, *args: Any, **kwargs: Any) -> int | None:
        raise self._refuse()

    def get_item(self, *args: Any, **kwargs: Any) -> c.ItemDetail:
        raise self._refuse()

    def update_item(self, *args: Any, **kwargs: Any) -> c.RetainResult:
        raise self._refuse()

    def delete_items(self, *args: Any, **kwargs: Any) -> c.DeleteResult:
        raise self._refuse()

    def forget(self, *args: Any, **kwargs: Any) -> c.ForgetResult:
        raise self._refuse()

    def freeze(self, *args: Any, **kwargs: Any) -> None:
        raise self._refuse()

    def lift_freeze(self, *args: Any, **kwargs: Any) -> None:
        raise self._refuse()

    def set_quarantine(self, *args: Any, **kwargs: Any) -> None:
        raise self._refuse()

    def export(self, *args: Any, **kwargs: Any) -> Any:
        raise self._refuse()


@cache
def not_installed_class(kind: str, command: str) -> type[c.Provider]:
    return type(f"NotInstalled_{kind}", (NotInstalledProvider,),
                {"kind": kind, "install": command})
