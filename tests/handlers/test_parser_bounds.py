"""Every parser is linear (or capped) in the input's length: a long line never stalls the bot
(issue 10 item 16). Work is bounded by counting calls, never by timing."""

from __future__ import annotations

from bot.domain.grounds import Ground


def _counting(monkeypatch) -> list[int]:
    calls = [0]
    real = Ground.resolve

    def resolve(self, word):
        calls[0] += 1
        return real(self, word)

    monkeypatch.setattr(Ground, "resolve", resolve)
    return calls


async def test_a_3000_character_methane_location_is_linear_work(say, core, monkeypatch):
    e_field = ("near the big yellow sign by the gangway " * 100)[:2900].strip()
    words = e_field.split()
    assert len(e_field) >= 2800
    calls = _counting(monkeypatch)
    r = await say(f"/methane m=yes e={e_field} t=fight h=none a=gate a n=0 s=police",
                  as_="safety_officer")
    assert not r.reply.ok and "not a place" in r.reply.text
    ground = next(iter(core.grounds.values()))
    # each word starts at most `max_words` runs (the longest name or alias), plus the whole
    assert calls[0] <= 2 * (ground.max_words * len(words) + 2), calls[0]


async def test_a_place_at_the_end_of_a_long_location_is_still_found(say, core, monkeypatch):
    filler = " ".join(["somewhere"] * 250)
    calls = _counting(monkeypatch)
    r = await say(f"/methane m=no e={filler} stb walkway t=fight h=none a=gate a n=0 s=police",
                  as_="safety_officer")
    assert r.reply.ok, r.reply.text
    fx = await core.active_fixture()
    assert (await core.store.incident(fx.id, 1)).location == "stb_walkway"
    assert calls[0] < 20 * 252


def test_suggestions_skip_enormous_words():
    from bot.domain.vocab import INCIDENT_TYPES

    assert INCIDENT_TYPES.suggest("missile" * 500) == []
