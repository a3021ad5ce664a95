"""Season-to-date figures per club in the Home Office shape, summed from fixture counters."""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from typing import Any

from bot.domain.fixture.fixture_model import Fixture
from bot.domain.vocab import BAN_STATUSES, BAN_TYPES, OFFENCES, norm
from bot.store import Store

IN_FORCE = "active"


def same_club(a: str, b: str) -> bool:
    """Two spellings of one club (case, spaces and dashes folded)."""
    return norm(a) == norm(b)


def resolve_club(word: str, fixtures: list[Fixture]) -> str | None:
    """The club a typed name means among fixtures' clubs: exact, else a unique partial match."""
    clubs = sorted({c for f in fixtures for c in (f.home, f.away)})
    for c in clubs:
        if same_club(c, word):
            return c
    hits = [c for c in clubs if norm(word) in norm(c)]
    return hits[0] if len(hits) == 1 else None


def club_fixtures(fixtures: list[Fixture], club: str, season: str,
                  before: datetime | None = None) -> list[Fixture]:
    """The season's played-or-scheduled fixtures of a club (not cancelled), by kick-off."""
    return [f for f in fixtures
            if f.season == season and f.status != "cancelled"
            and (same_club(f.home, club) or same_club(f.away, club))
            and (before is None or f.kickoff < before)]


def tally_club(rows: list[tuple[Fixture, dict[str, int]]], club: str) -> dict[str, Any]:
    """Sum per-fixture counters for one club's supporters (home side at home, away side away)."""
    by_offence: dict[str, Counter[str]] = {}
    io: Counter[str] = Counter()
    ha: Counter[str] = Counter()
    bans_new: Counter[str] = Counter()
    bans_force: Counter[str] = Counter()
    bans_status: Counter[str] = Counter()
    for fx, counts in rows:
        side = "home" if same_club(fx.home, club) else "away"
        for key, n in counts.items():
            parts = key.split(":")
            if parts[:2] == ["arr", "x"] and len(parts) == 5 and parts[4] == side:
                offence, place = parts[2], parts[3]
                by_offence.setdefault(offence, Counter())[side] += n
                io[place] += n
                ha[side] += n
            elif parts[:2] == ["ban", "x"] and len(parts) == 5 and parts[4] == side:
                btype, status = parts[2], parts[3]
                bans_new[btype] += n
                bans_status[status] += n
                if status == IN_FORCE:
                    bans_force[btype] += n
    offences = {o: {"home": c["home"], "away": c["away"], "total": c["home"] + c["away"]}
                for o in OFFENCES.keys() if (c := by_offence.get(o))}
    offences.update({o: {"home": c["home"], "away": c["away"], "total": c["home"] + c["away"]}
                     for o, c in by_offence.items() if o not in offences})
    return {
        "arrests": {"total": sum(ha.values()), "by_offence": offences,
                    "home_away": {"home": ha["home"], "away": ha["away"]},
                    "inside_outside": {"inside": io["inside"], "outside": io["outside"]}},
        "banning_orders": {"new": sum(bans_new.values()), "in_force": sum(bans_force.values()),
                           "by_type": {t: {"new": bans_new[t], "in_force": bans_force[t]}
                                       for t in BAN_TYPES.keys() if bans_new[t]},
                           "by_status": {s: bans_status[s] for s in BAN_STATUSES.keys()
                                         if bans_status[s]}},
    }


async def season_table(store: Store, club: str, season: str,
                       before: datetime | None = None) -> dict[str, Any]:
    """Season-to-date table for a club (fixtures kicking off before `before`, if given)."""
    fixtures = await store.fixtures()
    name = resolve_club(club, fixtures) or club
    mine = club_fixtures(fixtures, name, season, before)
    counts = await store.counts_many([f.id for f in mine])
    table = tally_club([(f, counts[f.id]) for f in mine], name)
    return {"club": name, "season": season, "fixtures": [f.id for f in mine], **table}


def season_text(table: dict[str, Any], limit: int = 13) -> str:
    """The season table as a few chat lines."""
    arr, ban = table["arrests"], table["banning_orders"]
    lines = [f"{len(table['fixtures'])} fixtures · arrests {arr['total']} "
             f"(home games {arr['home_away']['home']}, away games {arr['home_away']['away']}; "
             f"inside {arr['inside_outside']['inside']}, "
             f"outside {arr['inside_outside']['outside']})"]
    for o, row in list(arr["by_offence"].items())[:limit]:
        lines.append(f"  {OFFENCES.label(o)}: {row['total']} (home {row['home']}, "
                     f"away {row['away']})")
    lines.append(f"Banning orders: {ban['new']} new, {ban['in_force']} in force")
    for t, row in ban["by_type"].items():
        lines.append(f"  {BAN_TYPES.label(t)}: {row['new']} new, {row['in_force']} in force")
    return "\n".join(lines)
