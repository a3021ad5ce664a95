"""A scheduler outage (fixture `outage`)."""

from __future__ import annotations

import pytest

from bot.app import build_core
from bot.store import Store
from tests.conftest import Chat
from tests.support.scheduler import add


@pytest.fixture
async def outage(server, settings, clock):
    """(core, server) on a server the test can stop and start, Arsenal v Spurs planned."""
    store = Store.from_url(server.url)
    core = build_core(store, settings, clock, cache_ttl=0)
    await add(Chat(core))  # Sat 28 Nov 15:00 GMT, category B: T-3h briefing at 12:00
    yield core
    await store.close()
