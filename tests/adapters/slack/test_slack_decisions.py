"""The decision log over Slack's real Bolt path: the control loggist logs a decision with
/md-decision and reads it back with /md-decisions (issue 25 §1)."""

from __future__ import annotations

from bot.store.decision_keys import DecisionLog
from tests.support.slack import (  # noqa: F401 (fixtures)
    block_text,
    fake,
    slack,
    slash,
)


async def test_control_logs_a_decision_and_reads_the_log_on_slack(slack, fake, core):  # noqa: F811
    await slash(slack, fake, "/md-decision",
                "d=Close gate C why=Crowd density at the away turnstiles "
                "options=Hold the queue; open gate D")
    [answer] = await fake.wait_call("respond")
    assert "Logged D-1: Close gate C" in answer.params["text"]
    await slash(slack, fake, "/md-decisions")
    said = (await fake.wait_call("respond", count=2))[1].params
    listing = said["text"] + "\n" + block_text(said.get("blocks", []))
    assert "D-1" in listing and "Control loggist (Slack) (control)" in listing
    assert "Why: Crowd density at the away turnstiles" in listing
    fx = await core.active_fixture()
    [d] = (await DecisionLog(core.store.gateway).read(fx.id)).entries
    assert d.by == "slack:U0CONTROL1" and d.options == "Hold the queue; open gate D"
