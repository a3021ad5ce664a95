"""After a failover the old master can come back (a paused VM, a healed partition) still
believing it is master: the bot must leave it at the first refusal, not keep writing to it
through its pooled connections until someone demotes it."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import redis

from bot.app import build_core
from bot.sample import ensure_sample_fixture
from bot.settings import load_settings
from bot.store import Store
from rigs.topology import start_sentinel
from tests.conftest import Chat
from tests.support.failover import promote_a_replica


async def test_a_resumed_old_master_is_left_at_its_first_refusal(tmp_path: Path, clock):
    topo = start_sentinel(tmp_path / "redis", replicas=2, down_after_ms=60_000)
    store = None
    try:
        old = topo.master_port
        # an isolated master refuses writes (as deploy/compose.yaml sets it up)
        redis.Redis(port=old).config_set("min-replicas-to-write", 1)
        store = Store.from_url(topo.url)
        await store.gateway.configure_replication(timeout_ms=300)
        settings = load_settings(REDIS_URL=topo.url, MATCHDAY_DATA_DIR=str(tmp_path))
        core = build_core(store, settings, clock, cache_ttl=0)
        await ensure_sample_fixture(core)
        say = Chat(core)
        # several pooled connections to the first master, as a busy bot has
        await asyncio.gather(*(store.gateway.r.get(f"warm:{i}") for i in range(6)))
        assert (await say("/incident missile @seg_ne s4", as_="steward")).reply.ok

        os.kill(topo.pid(old), signal.SIGSTOP)  # the master pauses ...
        try:
            await promote_a_replica(topo, old)  # ... and the sentinels promote its replica
        finally:
            os.kill(topo.pid(old), signal.SIGCONT)  # ... and comes back, alone

        answers = [await say(f"/incident {kind} @away_upper s3", as_="steward")
                   for kind in ("pyro", "disorder", "antisocial")]
        texts = [a.reply.title or a.reply.text for a in answers]
        # at most the first is refused (it met the old master); the rest reach the new one
        assert all(a.reply.ok for a in answers[1:]), texts
        assert texts[1].startswith("Logged INC-"), texts
    finally:
        if store is not None:
            await store.close()
        topo.stop()
