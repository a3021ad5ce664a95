"""Acknowledged means replicated: with a replica, "Logged" only after the replica has the
report; when it cannot confirm in time the steward is told it is held, and a resend (same
dedupe key) confirms it without logging it twice."""

from __future__ import annotations

import os
import signal
from pathlib import Path

from bot.app import build_core
from bot.core.dispatch import HELD
from bot.embedded_redis.supervisor import EmbeddedRedis
from bot.sample import ensure_sample_fixture
from bot.settings import load_settings
from bot.store import Store
from tests.conftest import Chat


async def test_a_report_the_replica_cannot_confirm_is_held_and_a_resend_confirms_it(
        replicated, clock, tmp_path: Path):
    store = Store.from_url(replicated.url)  # through the sentinels
    await store.reset_for_tests()
    assert await store.gateway.configure_replication(timeout_ms=300) == 1  # has a replica
    settings = load_settings(REDIS_URL=replicated.url, MATCHDAY_DATA_DIR=str(tmp_path))
    core = build_core(store, settings, clock, cache_ttl=0)
    fx = await ensure_sample_fixture(core)
    say = Chat(core)
    assert (await say("/incident missile @seg_ne s4", as_="steward")).reply.title == \
        "Logged INC-1"

    replica = replicated.pid(replicated.replica_ports[0])
    os.kill(replica, signal.SIGSTOP)
    try:
        r = await say("/incident pyro @away_upper s3", as_="steward", dedupe="tg:77")
    finally:
        os.kill(replica, signal.SIGCONT)
    assert not r.reply.ok and r.reply.text == HELD
    assert "Logged" not in r.reply.text

    store.gateway.replica_timeout_ms = 5000  # the replica is back: give it time to catch up
    again = await say("/incident pyro @away_upper s3", as_="steward", dedupe="tg:77")
    assert again.reply.ok and again.reply.text == "Already logged as INC-2."
    kinds = [e.kind for e in await store.events(fx.id)]
    assert kinds.count("incident.reported") == 2  # the resend logged nothing twice
    await store.close()


async def test_a_lone_server_needs_no_replica(tmp_path: Path):
    server = EmbeddedRedis(tmp_path / "redis", persistent=False)
    store = Store.from_url(server.start())
    try:
        assert await store.gateway.configure_replication() == 0  # "Logged" costs no WAIT
    finally:
        await store.close()
        server.stop()
