"""A long METHANE exact-location (E) field costs work in proportion to its length: place
matching used to try every run of words (O(W^3)) and stalled the whole bot for seconds."""

from __future__ import annotations

import pytest

from handlers.incident.methane import zone_in

FILLER = "by the big screen near the far end of the concourse with crowds all round "


@pytest.fixture
def counted(core):
    """The ground with resolve() wrapped: (ground, counts) where counts holds calls and the
    characters looked up, the work a place match does."""
    ground = core.grounds["london_stadium"]
    counts = {"calls": 0, "chars": 0}
    resolve = ground.resolve

    def counting(word: str) -> str | None:
        counts["calls"] += 1
        counts["chars"] += len(word)
        return resolve(word)

    ground.resolve = counting  # type: ignore[method-assign]
    yield ground, counts
    del ground.resolve


def work(counted, text: str) -> dict[str, int]:
    ground, counts = counted
    counts.update(calls=0, chars=0)
    zone_in(ground, text)
    return dict(counts)


def test_place_matching_is_linear_in_the_length_of_the_text(counted):
    small = work(counted, (FILLER * 20)[:1500])
    big = work(counted, (FILLER * 40)[:3000])
    words = len((FILLER * 40)[:3000].split())
    assert big["calls"] <= 12 * words  # a bounded number of look-ups per word
    assert big["chars"] <= 120 * 3000
    assert big["calls"] <= 2.2 * small["calls"] and big["chars"] <= 2.2 * small["chars"]


def test_a_place_at_the_end_of_a_long_text_is_still_found(counted):
    ground, _ = counted
    text = (FILLER * 40)[:2900] + " walkway at the top of the sir trevor brooking stand"
    assert zone_in(ground, text) == "stb_walkway"
    assert zone_in(ground, "stb walkway") == "stb_walkway"
    assert zone_in(ground, FILLER) is None


async def test_methane_with_a_3000_character_e_field_is_answered(say, counted):
    _, counts = counted
    e = (FILLER * 40)[:2800]
    r = await say(f"/methane m=yes e={e} stb walkway t=crush h=surge a=gate a n=12 s=LAS",
                  as_="control")
    assert r.reply.ok and r.reply.title == "METHANE INC-1", r.reply.text
    assert counts["calls"] <= 12 * 3 * len(e.split())  # checked, then used: a few passes
