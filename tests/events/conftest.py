from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.events.receiver import Receiver


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    started = Receiver()
    yield started
    started.stop()
