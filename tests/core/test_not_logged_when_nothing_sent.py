"""Redis fully down (connection refused): a report's write never left, so the answer is the
plain "NOT logged", not "NOT CONFIRMED" (#22 item 18)."""

from __future__ import annotations

from bot.app import build_core
from bot.sample import ensure_sample_fixture
from bot.store import Store
from tests.conftest import Chat


async def test_a_report_while_redis_refuses_connections_is_not_logged(server, settings, clock):
    store = Store.from_url(server.url)
    core = build_core(store, settings, clock)  # member and fixture cached: the write goes first
    await ensure_sample_fixture(core)
    say = Chat(core)
    assert (await say("/incident missile @seg_ne s4", as_="steward")).reply.ok

    server.stop()  # connection refused from now on
    for text in ("/incident disorder @stb_walkway s5", "/incident pyro @away_upper s3"):
        r = await say(text, as_="steward")
        assert not r.reply.ok
        assert r.reply.text.startswith("NOT logged"), (text, r.reply.text)

    server.start()
    r = await say("/incident pyro @away_upper s3", as_="steward")  # a resend is a new report
    assert r.reply.ok and r.reply.title == "Logged INC-2", r.reply.text
    await store.close()
