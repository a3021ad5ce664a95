"""Retention: custody refs expire after the configured period, and the log says so."""

from datetime import timedelta

from bot.evidence.export import custody_refs
from bot.schedule.retention import sweep_retention
from tests.support.lifecycle import log_of


async def test_refs_expire_after_the_period_and_the_expiry_is_logged(say, core):
    await say("/incident disorder @stb_walkway s4", as_="steward")
    await say("/arrest violent_disorder inside home ref=CUS/1 inc=1", as_="police_liaison")
    await say("/arrest public_disorder inside home",
              as_="police_liaison")  # no ref: nothing to expire
    await say("/ban fbo_s14a ref=COURT/5", as_="police_liaison")
    fx = await core.active_fixture()
    assert await sweep_retention(core, core.store, core.facades.police,
                                 fx.kickoff + timedelta(days=364)) == []
    logged = await sweep_retention(core, core.store, core.facades.police,
                                   fx.kickoff + timedelta(days=366))
    assert [e.data["records"] for e in logged] == [["A-1"]]  # bans keep theirs longer
    refs = {r["record"]: r for r in await custody_refs(core.facades.police, fx.id)}
    assert refs["A-1"]["ref"] == "" and refs["A-1"]["expired_at"]
    assert refs["B-1"]["ref"] == "COURT/5"
    assert await sweep_retention(core, core.store, core.facades.police,
                                 fx.kickoff + timedelta(days=367)) == []  # once
    logged = await sweep_retention(core, core.store, core.facades.police,
                                   fx.kickoff + timedelta(days=5 * 365 + 2))
    assert [e.data["records"] for e in logged] == [["B-1"]]
    events = await log_of(core, "retention.expired")
    assert len(events) == 2 and "COURT/5" not in str(events[1].data)
    counts = await core.store.counts(fx.id)
    assert counts["arr:total"] == 2 and counts["ban:total"] == 1  # figures stay
