"""Fixtures of the security tests of the control-room web view: a room on a local port."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest_asyncio
from aiohttp.test_utils import TestClient, TestServer

from bot.core.dispatch import Core
from bot.web.server import ControlRoom


@pytest_asyncio.fixture
async def room(core: Core) -> AsyncIterator[ControlRoom]:
    r = ControlRoom(core, "http://127.0.0.1:8080")
    yield r
    await r.live.close()


@pytest_asyncio.fixture
async def client(room: ControlRoom) -> AsyncIterator[TestClient]:
    c = TestClient(TestServer(room.web_app()))
    await c.start_server()
    yield c
    await c.close()
