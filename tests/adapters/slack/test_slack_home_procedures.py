# ruff: noqa: F811  (pytest fixtures imported from test_slack_adapter)
"""A procedure in force on the Slack Home tab through slack-bolt against the fake Web API
(#32): the EVACUATE stays on control's tab, counted against the rota and naming who to radio,
after a routine broadcast has gone out, until its all-clear."""

from __future__ import annotations

from tests.conftest import Chat
from tests.support.slack import (  # noqa: F401
    CONTROL,
    fake,
    slack,
)
from tests.support.slack_home import (
    home_text,
    open_home,
)

ROTA = ("/deploy import\nsteward id,name,post\n14,A. Smith,stb_250_gangway\n"
        "15,B. Jones,stb_256_gangway")


async def test_the_evacuation_stays_on_the_home_tab_after_a_broadcast(slack, fake, core):
    say = Chat(core)
    await say(ROTA, as_="admin")
    await say("/tabard 14", as_="steward")
    await say("/evacuate stb upper", as_="safety_officer")
    await say("yes", as_="safety_officer")
    await say("/broadcast all tea is on in the west concourse", as_="control")
    await open_home(slack, CONTROL, "Ev0PROC1")
    [shown] = await fake.wait_call("views.publish")
    text = home_text(shown)
    assert "EVACUATE" in text and "0/2 have it" in text, text
    assert "radio them: 15 B. Jones (Block 256 gangway)" in text
    assert "Broadcast" in text
