"""First end-to-end checks of the core on a real Redis."""

from bot.domain.ledger import recount
from bot.evidence.summary import figures_from_counts


async def test_report_ack_resolve(say, core):
    r = await say("/incident missile @stb_walkway s4 coins thrown from away end", as_="steward")
    assert r.reply.ok, r.reply.text
    assert "INC-1" in r.reply.title
    r = await say("/ack 1", as_="control")
    assert r.reply.ok, r.reply.text
    r = await say("/ack 1", as_="control")
    assert not r.reply.ok and "already acknowledged" in r.reply.text
    r = await say("/resolve INC-1 crowd calmed", as_="supervisor")
    assert r.reply.ok, r.reply.text
    r = await say("/status", as_="police_commander")
    assert "Open: 0" in r.reply.text, r.reply.text
    fx = await core.active_fixture()
    counts = await core.store.counts(fx.id)
    tally = recount(await core.store.events(fx.id))
    assert figures_from_counts(counts) == figures_from_counts(dict(tally.counts))
