"""Fixtures of the control-room tests: the Telegram adapter against the fake Bot API; the
`browser` marker's rule (left out unless `-m` names it) and where the browsers are found."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from aiohttp.test_utils import TestServer
from pydantic import SecretStr

from bot.core.dispatch import Core
from bot.runtime import control_room_for, telegram_for
from bot.settings import Settings
from rigs.fakes.telegram_api import TOKEN, FakeTelegram
from rigs.net import free_port
from tests.support.optional_marker import OptionalMarker
from tests.support.wall import Restartable
from tests.support.web import client, room  # noqa: F401 (fixtures)
from tests.web.browser_screen import Browsers, Screen

TG_CONTROL = -1001000000001  # channels.toml: control audience on Telegram
BROWSERS = "chromium, chromium-driver and firefox-esr"
INSTALL = "sudo apt-get install chromium chromium-driver firefox-esr"
MARKER = OptionalMarker("browser", BROWSERS, INSTALL)
RUN = MARKER.run


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Browser tests need system packages the Quick start does not install: they run only
    when the -m expression names `browser` (`-m browser`), never in a plain run."""
    MARKER.leave_out(config, items)



def browser_binary(names: tuple[str, ...], what: str) -> str:
    """The first of these programs on PATH; a browser test without it fails with one line."""
    for name in names:
        if found := shutil.which(name):
            return found
    pytest.fail(f"{what} not found on PATH (none of {', '.join(names)}): install the browsers "
                f"with `{INSTALL}`, then {RUN}", pytrace=False)


@pytest_asyncio.fixture
async def telegram(core: Core, settings: Settings) -> AsyncIterator[FakeTelegram]:
    fake = FakeTelegram()
    await fake.start()
    adapter = telegram_for(core, settings.model_copy(update={
        "telegram_bot_token": SecretStr(TOKEN), "telegram_base_url": fake.base_url}),
        poll_timeout=1)
    await adapter.start()
    yield fake
    await adapter.stop()
    await fake.stop()


@pytest_asyncio.fixture
async def control_url(core: Core) -> AsyncIterator[str]:
    """The control room served on a local port (its base URL)."""
    served = control_room_for(core, "http://127.0.0.1")
    server = TestServer(served.web_app(), host="127.0.0.1")
    await server.start_server()
    yield str(server.make_url("")).rstrip("/")
    await served.live.close()
    await server.close()


@pytest_asyncio.fixture(scope="module")
async def browsers(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Browsers]:
    """The module's Chromium and Firefox (each started on first use)."""
    b = Browsers(tmp_path_factory.mktemp("firefox-profile"))
    yield b
    await b.close()


@pytest_asyncio.fixture(params=["chromium", "firefox"])
async def screen(request: pytest.FixtureRequest, browsers: Browsers,
                 control_url: str) -> AsyncIterator[Screen]:
    """A screen on the control room, in Chromium and (a second run) in Firefox."""
    s = await browsers.screen(request.param, control_url)
    yield s
    await s.reset()


@pytest_asyncio.fixture
async def restartable(core: Core) -> AsyncIterator[Restartable]:
    """The control room on a fixed port, to stop and start again as a crashed server would."""
    r = Restartable(core, free_port())
    await r.start()
    yield r
    await r.stop()
