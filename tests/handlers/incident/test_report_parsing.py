"""One-line reports: anything out of range is refused with the usage line and writes nothing;
places resolve exactly, by alias, or by a declared block range (issue 10 items 5, 8)."""

from __future__ import annotations

import pytest

from bot.domain.grounds import load_grounds
from bot.settings import PROJECT_CONFIG


async def _log_size(core) -> int:
    fx = await core.active_fixture()
    return len(await core.store.events(fx.id))


@pytest.mark.parametrize("text", [
    "/incident missile @stb_walkway s9 coins",
    "/incident missile @stb_walkway s0 coins",
    "/incident missile @stb_walkway s6",
    "/incident missile @stb_walkway sev=12",
    "/incident missile @nowhere s3",
    "/incident missiel @stb_walkway s3",
    "/incident missile @stb_walkway x99999999",
    "/incident missile @stb_walkway x0",
    "/incident missile @stb_walkway @gate_a s3",
    "/incident missile @block_999 s3",
])
async def test_out_of_range_reports_are_refused_with_usage(say, core, text):
    before = await _log_size(core)
    r = await say(text, as_="steward")
    assert not r.reply.ok
    assert "Usage: /incident" in r.reply.text
    assert await _log_size(core) == before


async def test_a_plausible_crowd_count_is_kept(say, core):
    r = await say("/incident disorder @stb_walkway s4 x40 fighting", as_="steward")
    assert r.reply.ok
    fx = await core.active_fixture()
    inc = await core.store.incident(fx.id, 1)
    assert (inc.people, inc.description) == ("40", "fighting")


@pytest.mark.parametrize("word, zone", [
    ("gate a", "gate_a"), ("gate_a", "gate_a"), ("Gate A", "gate_a"), ("gate b", "gate_away"),
    ("block 112", "stb_lower"), ("block 101", "stb_lower"), ("b113", "bbs_lower"),
    ("block 249", "ws_upper"), ("block_262", "stb_upper"),
])
def test_places_resolve_exactly_and_by_block_range(word, zone):
    ground = load_grounds(PROJECT_CONFIG)["london_stadium"]
    assert ground.resolve(word) == zone
    assert ground.search(word) == [zone]


def test_block_out_of_every_range_is_not_a_place():
    ground = load_grounds(PROJECT_CONFIG)["london_stadium"]
    assert ground.resolve("block 999") is None
    assert ground.resolve("block 126") is None  # between two stands' ranges


async def test_block_number_in_a_one_line_report(say, core):
    r = await say("/incident pyro @block_112 s3", as_="steward")
    assert r.reply.ok
    fx = await core.active_fixture()
    assert (await core.store.incident(fx.id, 1)).location == "stb_lower"
    r = await say("/incident pyro @block_999 s3", as_="steward")
    assert "No block 999" in r.reply.text and "101-112" in r.reply.text
