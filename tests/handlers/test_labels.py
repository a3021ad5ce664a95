"""Labels never cut mid-word: tight spaces use each zone's short name (issue 10 item 11)."""

from __future__ import annotations

from bot.domain.grounds import load_grounds
from bot.settings import PROJECT_CONFIG
from tests.support.buttons import (
    press,
)


def _ground():
    return load_grounds(PROJECT_CONFIG)["london_stadium"]


def test_every_zone_has_a_distinct_short_name_that_fits():
    ground = _ground()
    shorts = [z.short for z in ground.zones.values()]
    assert all(shorts) and len(set(shorts)) == len(shorts)
    assert max(len(s) for s in shorts) <= 24


async def test_status_lines_tell_tiers_and_concourse_apart(say):
    for place, kind in (("stb_lower", "medical"), ("stb_upper", "pyro"),
                        ("stb_concourse", "alcohol")):  # different types: no merging
        await say(f"/incident {kind} @{place} s2", as_="control")
    r = await say("/status", as_="control")
    lines = [line for line in r.reply.text.splitlines() if line.startswith("INC-")]
    places = [line.split(" · ")[1] for line in lines]
    assert len(set(places)) == 3, places
    assert not any("…" in p for p in places)
    assert {"STB lower 101-112", "STB upper 250-262", "STB concourse"} == set(places)


async def test_location_buttons_are_whole_names(say):
    ground = _ground()
    r = await say("/incident", as_="steward")
    r = await say(press(r, "Disorder"), as_="steward")
    labels = [b.label for row in r.reply.buttons for b in row][:-2]  # all but Back, Cancel
    wholes = {z.name for z in ground.zones.values()} | {z.short for z in ground.zones.values()}
    assert labels and all(label in wholes for label in labels), labels
