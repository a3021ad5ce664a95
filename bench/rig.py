"""What the in-process benches share: a Redis (REDIS_URL or an embedded one), a core on it
with the sample fixture on a virtual clock, and the one-line report they time."""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.app import build_core  # noqa: E402
from bot.core.dispatch import Core  # noqa: E402
from bot.core.drill import Drill  # noqa: E402
from bot.domain.clock import VirtualClock  # noqa: E402
from bot.domain.messages import Command, ReplyVia  # noqa: E402
from bot.embedded_redis.supervisor import EmbeddedRedis  # noqa: E402
from bot.sample import ensure_sample_fixture  # noqa: E402
from bot.settings import load_settings  # noqa: E402
from bot.store import Store  # noqa: E402

TEXT = "/incident missile @stb_walkway s3 coins thrown from the upper tier"
# Identical reports within the merge window (10 min) would join one incident; the virtual
# clock moves on between reports so each is a new incident (the merge search still runs).
STEP = timedelta(minutes=11)
START = datetime(2026, 12, 2, 21, tzinfo=UTC)
SEND = ReplyVia()  # the answer queued in the outbox as a new message


def cmd(i: int, text: str = TEXT, user: str = "steward", *, tag: str = "bench",
        reply_via: ReplyVia | None = SEND) -> Command:
    """A console command, deduplicated as `<tag>:<i>`."""
    return Command(platform="console", chat=user, user=user, text=text,
                   dedupe_key=f"{tag}:{i}", reply_via=reply_via)


async def reports(core: Any, n: int, start: int, *, tag: str = "bench",
                  reply_via: ReplyVia | None = SEND) -> float:
    """Reports per second, one at a time, each a new incident."""
    t = time.perf_counter()
    for i in range(start, start + n):
        core.clock.advance(STEP)
        r = await core.handle(cmd(i, tag=tag, reply_via=reply_via))
        assert r is not None and r.reply.ok, r.reply.text if r else None
    return n / (time.perf_counter() - t)


async def beside(task: asyncio.Task[Any], event: asyncio.Event, timeout: float,
                 what: str) -> None:
    """Wait for `event`, which background `task` sets: its exception if it dies first, a
    TimeoutError after `timeout` seconds; a bench never waits on a dead watcher."""
    waiter = asyncio.ensure_future(event.wait())
    try:
        await asyncio.wait({task, waiter}, timeout=timeout,
                           return_when=asyncio.FIRST_COMPLETED)
    finally:
        waiter.cancel()
    if event.is_set():
        return
    if task.done():
        task.result()  # its exception, if it raised
        raise RuntimeError(f"{what}: the task ended without it")
    task.cancel()
    raise TimeoutError(f"{what}: not within {timeout:g} s")


@asynccontextmanager
async def bench_core(drill: Drill | None = None,
                     **settings: Any) -> AsyncIterator[tuple[Core, str, str]]:
    """(core, Redis URL, temp dir): an empty database (REDIS_URL, else an embedded server
    started here), the sample fixture active (a `drill` core: none, the replay makes its
    own); emptied and stopped after."""
    url = os.environ.get("REDIS_URL")
    server = None
    tmp = tempfile.TemporaryDirectory()
    if not url:
        server = EmbeddedRedis(Path(tmp.name) / "redis", persistent=False)
        url = server.start()
    try:
        store = Store.from_url(url)
        await store.reset_for_tests()
        core = build_core(store, load_settings(REDIS_URL=url, MATCHDAY_DATA_DIR=tmp.name,
                                               **settings), VirtualClock(START), drill=drill)
        if drill is None:
            await ensure_sample_fixture(core)
        yield core, url, tmp.name
        await store.reset_for_tests()
        await store.close()
    finally:
        if server:
            server.stop()
        tmp.cleanup()
