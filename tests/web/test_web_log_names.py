"""The live log names who did what (issue #37 item 8): a member's name, else their role, never
a raw platform id, on the first paint and on the live feed alike; the bot's own entries say
so."""

from __future__ import annotations

from datetime import timedelta

from bot.core.dispatch import Core
from handlers import sweep_escalations
from tests.support.web_session import (
    read_events,
    sign_in,
    state_of,
)


async def test_log_rows_name_the_member_not_their_platform_id(client, core: Core, say,
                                                              clock) -> None:
    await say("/incident pyro @away_upper s3 flare lit", as_="steward")
    steward = await core.member("console:steward")
    assert steward is not None and steward.name
    await sign_in(client, say, "control")
    state = state_of(await (await client.get("/control/")).text())
    [row] = [r for r in state["log"] if r["kind"] == "incident.reported"]
    assert row["who"] == steward.name
    resp = await client.get("/control/events")
    await say("/incident missile @seg_ne s4 coins", as_="steward")
    [(_, data)] = await read_events(resp, 1)
    assert data["event"]["who"] == steward.name  # live, too
    await sweep_escalations(core, core.store, clock.now() + timedelta(minutes=30))
    state = state_of(await (await client.get("/control/")).text())
    whos = {r["who"] for r in state["log"] if r["kind"] == "incident.escalated"}
    assert whos == {"bot"}, whos  # not "escalation"
    resp.close()
