"""Splitting a merged report out again lowers the severity it raised: recomputed from the
reports still merged, recorded as an amendment, escalation re-planned (issue 22 item 11)."""

from __future__ import annotations

from datetime import timedelta

from bot.domain.ledger import recount
from tests.conftest import START
from tests.support.lifecycle import log_of

TG = {"as_": "100000001", "platform": "telegram"}  # a second steward, on Telegram


def split_button(result) -> str:
    return next(b.command for row in result.reply.buttons for b in row
                if b.command.startswith("/merge "))


async def test_splitting_out_the_raising_report_lowers_the_severity_again(say, core, clock):
    await say("/incident missile @stb_walkway s3 coins", as_="steward")
    clock.advance(timedelta(seconds=30))
    joined = await say("/incident missile @stb_upper s4 bottles now", **TG)
    fx = await core.active_fixture()
    assert (await core.store.incident(fx.id, 1)).severity == 4
    assert (await core.facades.deadlines.deadlines(fx.id))["1:ack"] == int(START.timestamp()) + 60

    r = await say(split_button(joined), **TG)
    assert r.reply.title == "Logged INC-2"
    inc = await core.store.incident(fx.id, 1)
    assert inc.severity == 3 and inc.merged == 0
    amends = [e.data for e in await log_of(core, "incident.amended")]
    assert [(a["old"], a["new"]) for a in amends] == [
        ({"severity": "3"}, {"severity": "4"}), ({"severity": "4"}, {"severity": "3"})]
    assert amends[1]["why"] == "a merged report was split out"
    counts = await core.store.counts(fx.id)
    assert counts == dict(recount(await core.store.events(fx.id)).counts)
    assert counts.get("inc:sev:3") == 1 and counts.get("inc:sev:4") == 1  # INC-1, INC-2
    # escalation back on severity 3's timers: two minutes from the report, not one
    assert (await core.facades.deadlines.deadlines(fx.id))["1:ack"] == int(START.timestamp()) + 120
    assert "severity 4 → 3" in (await say("/incident 1", as_="control")).reply.text


async def test_a_split_keeps_the_severity_another_merged_report_supports(say, core, clock):
    await say("/incident missile @stb_walkway s3 coins", as_="steward")
    first = await say("/incident missile @stb_upper s4 bottles", **TG)
    await say("/incident missile @stb_upper s4 more bottles", as_="supervisor")
    await say(split_button(first), **TG)
    fx = await core.active_fixture()
    inc = await core.store.incident(fx.id, 1)
    assert inc.severity == 4 and inc.merged == 1
    assert len(await log_of(core, "incident.amended")) == 1  # only the raise
