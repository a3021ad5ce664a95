"""Redis goes away mid-match: the bot says plainly it did NOT log (or, when a write was sent,
that it is NOT CONFIRMED), a resend is logged once, and it recovers by itself."""

from __future__ import annotations

from urllib.parse import urlparse

import handlers.incident.reporting
from bot.app import build_core
from bot.sample import ensure_sample_fixture
from bot.store import Store
from bot.store.choices import Choices
from rigs.fakes.flaky_link import FlakyLink
from tests.conftest import Chat


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
    fx_id = await Choices(store.gateway).active_fixture_id()
    assert (await store.incident(fx_id, 1)).type == "pyro"
    await store.close()


async def test_a_write_whose_reply_is_lost_is_not_confirmed_and_a_resend_logs_it_once(
        server, settings, clock):
    link = FlakyLink("127.0.0.1", urlparse(server.url).port or 6379, server.password)
    store = Store.from_url(await link.start())
    core = build_core(store, settings, clock, cache_ttl=0)
    await ensure_sample_fixture(core)
    say = Chat(core)
    assert (await say("/incident missile @seg_ne s4", as_="steward")).reply.ok

    link.lose_next_script_reply()  # Redis runs the report, then "dies" before answering
    r = await say("/incident disorder @stb_walkway s5 fight", as_="steward")
    assert not r.reply.ok and r.reply.text.startswith("NOT CONFIRMED"), r.reply.text
    assert "may or may not have been logged" in r.reply.text
    r = await say("/incident disorder @stb_walkway s5 fight", as_="steward")  # still down
    assert r.reply.text.startswith(("NOT logged", "NOT CONFIRMED")), r.reply.text

    link.restore()
    r = await say("/incident disorder @stb_walkway s5 fight", as_="steward")  # new message id
    assert r.reply.text == "Already logged as INC-2.", r.reply.text
    fx = await core.active_fixture()
    kinds = [e.kind for e in await store.events(fx.id)]
    assert kinds.count("incident.reported") == 2  # logged once, not twice

    # a repeat after a confirmed answer is a new command (two identical arrests are two)
    for _ in range(2):
        assert (await say("/arrest public_order x1 inside home", as_="police_liaison")).reply.ok
    assert (await store.counts(fx.id))["arr:total"] == 2
    await store.close()
    await link.stop()



async def test_a_handler_that_fails_after_writing_does_not_claim_nothing_was_logged(
        say, core, monkeypatch):
    real_announce = handlers.incident.reporting.announce

    def broken_announce(*args, **kwargs):  # rendering the card, after the write
        monkeypatch.setattr(handlers.incident.reporting, "announce", real_announce)  # fails once
        raise RuntimeError("card rendering failed")

    monkeypatch.setattr(handlers.incident.reporting, "announce", broken_announce)
    r = await say("/incident pyro @away_upper s3", as_="steward")
    assert not r.reply.ok and "may or may not have been logged" in r.reply.text
    assert "NOT logged" not in r.reply.text
    r = await say("/incident pyro @away_upper s3", as_="steward")  # the resend
    assert r.reply.text == "Already logged as INC-1.", r.reply.text
