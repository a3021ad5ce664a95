"""Many clubs on one fake of each platform (tests/support/clubs.py); each test's clubs gone
after it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import redis

from tests.support.clubs import slack_clubs, telegram_clubs  # noqa: F401 (fixtures)


@pytest.fixture(autouse=True)
def no_clubs_left(request: pytest.FixtureRequest) -> Iterator[None]:
    """Empty the test Redis after a test that registered clubs in it: with enabled clubs
    registered, a later test's `matchday run` on the same server runs them (a deployment)
    instead of the one-club bot it expects."""
    yield
    if "redis_url" in request.fixturenames:
        url = request.getfixturevalue("redis_url")
        with redis.Redis.from_url(url) as r:
            r.flushdb()
