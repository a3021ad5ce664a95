"""The wall screen keeps every procedure in force until its all-clear beside the newest
broadcast, each counted against the rota and naming who the bot cannot reach, over HTTP."""

from __future__ import annotations

from tests.support.web_session import (
    sign_in,
    state_of,
)

ROTA = ("/deploy import\nsteward id,name,post\n14,A. Smith,stb_250_gangway\n"
        "15,B. Jones,stb_256_gangway")


async def test_an_evacuation_stays_on_the_wall_with_who_to_radio(client, say) -> None:
    await say(ROTA, as_="admin")
    await say("/tabard 14", as_="steward")
    await say("/evacuate stb upper", as_="safety_officer")
    await say("yes", as_="safety_officer")
    await say("/broadcast all tea is on in the west concourse", as_="control")
    await sign_in(client, say, "control")
    view = state_of(await (await client.get("/control/")).text())["stewarding"]
    assert view["ack"]["word"] == "Broadcast"
    [evac] = view["procedures"]
    assert (evac["word"], evac["have"], evac["sent"]) == ("EVACUATE", 0, 2)
    assert evac["unreached"] == ["15 B. Jones (Block 256 gangway)"]
