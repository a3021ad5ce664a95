"""A master that has lost its replicas refuses writes (min-replicas-to-write): the steward is
told plainly it was NOT logged, never "Logged" and never a traceback."""

from __future__ import annotations

from pathlib import Path

from bot.app import build_core
from bot.embedded_redis.supervisor import EmbeddedRedis
from bot.sample import ensure_sample_fixture
from bot.settings import load_settings
from bot.store import Store
from tests.conftest import Chat


async def test_noreplicas_answers_not_logged(tmp_path: Path, clock):
    server = EmbeddedRedis(tmp_path / "redis", persistent=False)
    url = server.start()
    store = Store.from_url(url)
    try:
        settings = load_settings(REDIS_URL=url, MATCHDAY_DATA_DIR=str(tmp_path))
        core = build_core(store, settings, clock, cache_ttl=0)
        await ensure_sample_fixture(core)
        await store.gateway.r.config_set("min-replicas-to-write", 1)  # and it has none
        r = await Chat(core)("/incident missile @seg_ne s4", as_="steward")
        assert not r.reply.ok and r.reply.text.startswith("NOT logged")
        await store.gateway.r.config_set("min-replicas-to-write", 0)
        r = await Chat(core)("/incident missile @seg_ne s4", as_="steward")
        assert r.reply.ok and r.reply.title == "Logged INC-1"
    finally:
        await store.close()
        server.stop()


async def test_a_fixed_url_to_a_replica_answers_not_logged_not_a_failure(replicated, clock,
                                                                          tmp_path: Path):
    url = f"redis://127.0.0.1:{replicated.replica_ports[0]}"  # e.g. a demoted old master
    store = Store.from_url(url)
    try:
        settings = load_settings(REDIS_URL=url, MATCHDAY_DATA_DIR=str(tmp_path))
        core = build_core(store, settings, clock, cache_ttl=0)
        r = await Chat(core)("/fixture add Arsenal v Spurs 2026-12-05 12:30", as_="admin")
        assert not r.reply.ok and r.reply.text.startswith("NOT logged"), r.reply.text
    finally:
        await store.close()
