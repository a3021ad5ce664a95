"""The control room over a test HTTP client (fixtures `room` and `client`)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest_asyncio
from aiohttp.test_utils import TestClient, TestServer

from bot.core.dispatch import Core
from bot.runtime import control_room_for
from bot.web.server import ControlRoom


@pytest_asyncio.fixture
async def room(core: Core) -> AsyncIterator[ControlRoom]:
    """The control-room web view over the test's core."""
    r = control_room_for(core, "http://127.0.0.1:8080")
    yield r
    await r.live.close()


@pytest_asyncio.fixture
async def client(room: ControlRoom) -> AsyncIterator[TestClient]:
    """An HTTP client of the control room."""
    c = await new_client(room)
    yield c
    await c.close()


# what every browser sends with a request from the site's own page (and alone, without
# Origin, on some same-origin requests); the control room refuses POSTs that lack both
BROWSER = {"Sec-Fetch-Site": "same-origin"}


async def new_client(room: ControlRoom) -> TestClient:
    """Another HTTP client of the same control room (another screen): a browser on the
    room's own pages."""
    c = TestClient(TestServer(room.web_app()), headers=BROWSER)
    await c.start_server()
    return c
