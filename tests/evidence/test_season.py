"""Season-to-date tables: sums of per-fixture counters for a club's own supporters."""

from __future__ import annotations

from bot.evidence.season import season_table
from tests.support.briefings import (
    history,
)


async def test_season_table_home_office_shape(core, say):
    await history(say, core)
    t = await season_table(core.store, "west ham", "2026-27")
    assert t["club"] == "West Ham United" and len(t["fixtures"]) == 3  # tonight included
    arr = t["arrests"]
    assert arr["total"] == 3
    assert arr["by_offence"] == {"throwing_missiles": {"home": 0, "away": 2, "total": 2},
                                 "possession_pyrotechnics": {"home": 1, "away": 0, "total": 1}}
    assert arr["home_away"] == {"home": 1, "away": 2}
    assert arr["inside_outside"] == {"inside": 3, "outside": 0}
    bans = t["banning_orders"]
    assert bans["new"] == 4 and bans["in_force"] == 3
    assert bans["by_type"]["club_lifetime"] == {"new": 3, "in_force": 3}
    chelsea = await season_table(core.store, "Chelsea", "2026-27")
    assert chelsea["arrests"]["by_offence"] == {
        "public_disorder": {"home": 1, "away": 0, "total": 1}}
    last = await season_table(core.store, "West Ham United", "2025-26")
    assert last["arrests"]["by_offence"] == {}  # the away fans' arrests were Chelsea's
    assert (await season_table(core.store, "Chelsea", "2025-26"))["arrests"]["home_away"] \
        == {"home": 0, "away": 5}


async def test_season_command(core, say):
    await history(say, core)
    r = await say("/season chelsea", as_="police_commander")
    assert r.reply.ok and r.reply.title == "Season 2026-27 · Chelsea", r.reply.text
    assert "Public disorder: 1 (home 1, away 0)" in r.reply.text
    r = await say("/season", as_="viewer")
    assert "West Ham United" in r.reply.title and "Throwing missiles: 2" in r.reply.text
    r = await say("/season Chelsea 2025-26", as_="control")
    assert "Violent disorder: 5 (home 0, away 5)" in r.reply.text
    r = await say("/season Nowhere Rovers", as_="control")
    assert not r.reply.ok
    r = await say("/season chelsea", as_="steward")
    assert not r.reply.ok


def test_cli_season_json(redis_url, tmp_path, monkeypatch, capsys):
    import json

    from bot.cli import main

    monkeypatch.setenv("REDIS_URL", redis_url)
    monkeypatch.setenv("MATCHDAY_DATA_DIR", str(tmp_path))
    assert main(["season", "--club", "Nowhere Rovers", "--season", "2026-27", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["season"] == "2026-27" and out["arrests"]["total"] == 0
    assert set(out["banning_orders"]) == {"new", "in_force", "by_type", "by_status"}
