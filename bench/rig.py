"""The bot under a benchmark: Redis (REDIS_URL, else an embedded server in a temp dir) and a
core on a virtual clock with the sample fixture, its report path wired as `matchday run`
wires it (cards and answers into the durable outbox inside the report's own script)."""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bot.app import build_core
from bot.core.dispatch import Core
from bot.domain.clock import VirtualClock
from bot.sample import ensure_sample_fixture
from bot.settings import load_settings
from bot.store import Store
from bot.store.embedded import EmbeddedRedis
from bot.store.outbox import Outbox


@dataclass
class Rig:
    """A running bench setup: the core, its Redis URL and its scratch directory."""

    core: Core
    url: str
    tmp: str
    _dir: tempfile.TemporaryDirectory[str]
    _server: EmbeddedRedis | None

    async def stop(self) -> None:
        """Empty the database, close the store, stop the embedded server."""
        try:
            await self.core.store.reset_for_tests()
            await self.core.store.close()
        finally:
            if self._server:
                self._server.stop()
            self._dir.cleanup()


async def start_rig(**settings: Any) -> Rig:
    """Start Redis and a core on an empty database (settings as environment names)."""
    url = os.environ.get("REDIS_URL")
    server = None
    tmp = tempfile.TemporaryDirectory()
    if not url:
        server = EmbeddedRedis(Path(tmp.name) / "redis", persistent=False)
        url = server.start()
    try:
        store = Store.from_url(url)
        await store.reset_for_tests()
        config = load_settings(REDIS_URL=url, MATCHDAY_DATA_DIR=tmp.name, **settings)
        core = build_core(store, config, VirtualClock(datetime(2026, 12, 2, 21, tzinfo=UTC)))
        core.notifier.outbox = Outbox(store)
        await ensure_sample_fixture(core)
    except BaseException:
        if server:
            server.stop()
        tmp.cleanup()
        raise
    return Rig(core, url, tmp.name, tmp, server)
