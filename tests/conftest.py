"""Shared test fixtures: a real Redis server for the session, a virtual clock, a core."""

from __future__ import annotations

import atexit
import itertools
import os
import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
import pytest_asyncio

from bot.app import build_core
from bot.core.dispatch import Core
from bot.domain.clock import VirtualClock
from bot.domain.messages import Attachment, Command, Result
from bot.embedded_redis.supervisor import EmbeddedRedis
from bot.sample import ensure_sample_fixture
from bot.settings import Settings, load_settings
from bot.store import Store

# one xdist worker per core, serial when REDIS_URL is given; the optional markers' summary
pytest_plugins = ("tests.support.parallel",)

START = datetime(2026, 11, 25, 18, 0, tzinfo=UTC)  # 18:00 GMT, kick-off 19:45 local

# No test reads or writes the user's own data dir: the README's first command makes this
# installation's signing key there, and a `matchday verify` run by a test would then judge the
# test's export against it. Every process of the session (xdist workers, the bots and CLIs the
# tests start) inherits a throwaway dir instead, unless a test names its own.
DATA_DIR = tempfile.mkdtemp(prefix="matchday-tests-")
os.environ["MATCHDAY_DATA_DIR"] = DATA_DIR
atexit.register(shutil.rmtree, DATA_DIR, True)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests that touch Redis carry the `redis` marker (CI re-runs them on REDIS_URL)."""
    for item in items:
        if "redis_url" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.redis)


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """REDIS_URL when given, else a real server this session starts and stops."""
    url = os.environ.get("REDIS_URL")
    if url:
        yield url
        return
    server = EmbeddedRedis(tmp_path_factory.mktemp("redis"), persistent=False)
    yield server.start()
    server.stop()


@pytest_asyncio.fixture
async def store(redis_url: str) -> AsyncIterator[Store]:
    """A store over an empty database."""
    s = Store.from_url(redis_url)
    await s.reset_for_tests()
    await s.gateway.configure_replication()  # WAIT for a replica when the server has one
    yield s
    await s.close()


@pytest.fixture
def clock() -> VirtualClock:
    """A clock that moves only when the test moves it."""
    return VirtualClock(START)


@pytest.fixture
def settings(redis_url: str, tmp_path: Path) -> Settings:
    """Settings pointing at the test Redis and a temp data dir."""
    return load_settings(REDIS_URL=redis_url, MATCHDAY_DATA_DIR=str(tmp_path))


@pytest_asyncio.fixture
async def core(store: Store, settings: Settings, clock: VirtualClock) -> Core:
    """A core with the project's config and the sample fixture active."""
    c = build_core(store, settings, clock, cache_ttl=0)
    await ensure_sample_fixture(c)
    return c


_ids = itertools.count(1)


class Chat:
    """Talk to a core as any roster member of the console platform."""

    def __init__(self, core: Core) -> None:
        self.core = core

    async def __call__(self, text: str, as_: str = "control", *, platform: str = "console",
                       private: bool = True, dedupe: str | None = None,
                       attachments: tuple[Attachment, ...] = ()) -> Result | None:
        cmd = Command(platform=platform, chat=as_, user=as_, text=text,
                      dedupe_key=dedupe or f"test:{next(_ids)}", private=private,
                      attachments=attachments)
        return await self.core.handle(cmd)


@pytest.fixture
def say(core: Core) -> Chat:
    """say('/status', as_='police_commander') -> Result."""
    return Chat(core)


@pytest.fixture
def server(tmp_path: Path):
    """A persistent embedded server of the test's own, to stop and restart (outage tests)."""
    srv = EmbeddedRedis(tmp_path / "redis", appendfsync="always")
    srv.start()
    yield srv
    srv.stop()
