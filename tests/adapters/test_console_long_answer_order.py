"""A long answer in the console reads top to bottom (issue 36 §15): a write's answer too
long for one message comes in parts, and its second part is printed after its first, never
above it; `/deploy page 2` of a plan that fits one page is a paging answer, not a
deployment."""

from __future__ import annotations

import io

from bot.runtime import console_for


async def test_the_second_part_of_a_long_answer_prints_after_the_first(core) -> None:
    out = io.StringIO()
    console = console_for(core, "control", stdout=out)
    # escaped for the platforms, "&<>" weighs 13 characters: this answer takes two messages
    d, why = "close gate B " + "&<> " * 240, "crowd at gate " + "&<> " * 240
    await console.say(f"/decision d={d} why={why}")
    text = out.getvalue()
    first = text.index("Logged D-1")
    cont = text.index("(continued, 1 of 2)")
    second = text.index("✉", first)
    assert first < cont < second, text[first - 200:first + 200]
    assert "crowd at gate" in text[second:], text[second:second + 300]  # the rest, in order


async def test_deploy_page_2_of_a_one_page_plan_is_not_a_deployment(core) -> None:
    out = io.StringIO()
    console = console_for(core, "control", stdout=out)
    await console.say("/deploy 14 stb_250_gangway Steward 14")
    assert "Deployed Steward 14 [14]" in out.getvalue(), out.getvalue()
    fx = await core.active_fixture()
    before = (await core.facades.stewarding.deployment(fx.id))[0]
    mark = out.tell()
    await console.say("/deploy page 2")
    said = out.getvalue()[mark:]
    assert "No page 2: this answer has 1 page." in said, said
    assert "steward id" not in said and "Deployed" not in said
    assert (await core.facades.stewarding.deployment(fx.id))[0] == before
