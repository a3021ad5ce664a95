"""Redis goes away mid-match: the bot says plainly it did NOT log, then recovers by itself."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.app import build_core
from bot.sample import ensure_sample_fixture
from bot.store import Store
from bot.store.embedded import EmbeddedRedis
from tests.conftest import Chat


@pytest.fixture
def server(tmp_path: Path):
    srv = EmbeddedRedis(tmp_path / "redis", appendfsync="always")
    srv.start()
    yield srv
    srv.stop()


async def test_outage_answers_not_logged_and_reconnects(server, settings, clock):
    store = Store.from_url(server.url)
    core = build_core(store, settings, clock, cache_ttl=0)
    await ensure_sample_fixture(core)
    say = Chat(core)
    assert (await say("/incident missile @seg_ne s4", as_="steward")).reply.ok

    server.stop()
    r = await say("/incident disorder @stb_walkway s5", as_="steward")
    assert not r.reply.ok
    assert r.reply.text.startswith("NOT logged") and "radio control" in r.reply.text
    r = await say("/status", as_="control")
    assert not r.reply.ok and r.reply.text.startswith("The log store is not answering")

    server.start()  # same port, same data directory
    r = await say("/incident disorder @stb_walkway s5", as_="steward")
    assert r.reply.ok and r.reply.title == "Logged INC-2", r.reply.text
    fx = await core.active_fixture()
    kinds = [e.kind for e in await store.events(fx.id)]
    assert kinds.count("incident.reported") == 2  # nothing half-written, nothing lost
    await store.close()


async def test_acknowledged_report_survives_a_server_restart(server, settings, clock):
    store = Store.from_url(server.url)
    core = build_core(store, settings, clock, cache_ttl=0)
    await ensure_sample_fixture(core)
    await Chat(core)("/incident pyro @away_upper s3", as_="steward")
    await store.close()
    server.stop()
    server.start()
    store = Store.from_url(server.url)
    fx_id = await store.active_fixture_id()
    assert (await store.incident(fx_id, 1)).type == "pyro"
    await store.close()
