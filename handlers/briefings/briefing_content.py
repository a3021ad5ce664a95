"""Briefing and summary content: the pre-match briefing (full and steward versions) and the
post-match summary with its chart, as Replies and Outbounds for the notifier."""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

from bot.core.dispatch import Core
from bot.domain.briefing.briefing_cadence import BriefingConfig, config_for
from bot.domain.fixture.fixture_model import Fixture
from bot.domain.fixture.key_timings import BY_KEY, latest
from bot.domain.messages import Outbound, Reply
from bot.domain.plurals import counted
from bot.domain.signoff import stamped
from bot.domain.vocab import INCIDENT_TYPES, OFFENCES, RISK_CATEGORIES, norm
from bot.evidence.match_chart import chart_data, chart_from_counts, draw_chart
from bot.evidence.season import same_club, tally_club
from bot.store import Store
from bot.store.facades import StoreFacades

log = logging.getLogger(__name__)
NOTE_LINES = (("travel", "Travel"), ("segregation", "Segregation"), ("gates", "Gates"),
              ("alcohol", "Alcohol"), ("pyro", "Pyrotechnics"), ("dispersal", "Dispersal"))


def _past(fx: Fixture, rows: list[Fixture]) -> list[Fixture]:
    return [f for f in rows if f.id != fx.id and f.kickoff < fx.kickoff
            and f.status != "cancelled"]


def _meeting(f: Fixture, counts: dict[str, int]) -> dict[str, Any]:
    types = {k[9:]: v for k, v in counts.items() if k.startswith("inc:type:")}
    return {"id": f.id, "title": f.title, "kickoff": f.kickoff, "category": f.category,
            "incidents": counts.get("inc:total", 0),
            "by_type": dict(sorted(types.items(), key=lambda kv: (-kv[1], kv[0]))),
            "arrests": counts.get("arr:total", 0), "bans": counts.get("ban:total", 0)}


async def briefing_data(store: Store, fx: Fixture, cfg: BriefingConfig) -> dict[str, Any]:
    """What the store knows that the briefing needs: history, the ground, the season so far."""
    rows = _past(fx, await store.fixtures())
    pair = {norm(fx.home), norm(fx.away)}
    history = [f for f in rows if {norm(f.home), norm(f.away)} == pair][-cfg.history_fixtures:]
    ground = [f for f in rows if f.ground == fx.ground][-cfg.recent_at_ground:]
    season = {c: [f for f in rows if f.season == fx.season
                  and (same_club(f.home, c) or same_club(f.away, c))] for c in (fx.home, fx.away)}
    ids = sorted({f.id for f in history + ground + season[fx.home] + season[fx.away]})
    counts = await store.counts_many(ids)
    return {
        "history": [_meeting(f, counts[f.id]) for f in history],
        "ground": [_meeting(f, counts[f.id]) for f in ground],
        "season": {c: {"fixtures": len(fs), **tally_club([(f, counts[f.id]) for f in fs], c)}
                   for c, fs in season.items()},
    }


def _n(n: int, word: str) -> str:
    return counted(n, word)


def _types(by_type: dict[str, int], n: int = 4) -> str:
    return ", ".join(f"{INCIDENT_TYPES.label(t).lower()} {v}" for t, v in
                     list(by_type.items())[:n]) or "none"


def briefing_text(fx: Fixture, data: dict[str, Any], cfg: BriefingConfig, ground_name: str,
                  *, intel: bool) -> str:
    """The briefing in IIMARCH order; intel=False is the steward version (no intelligence)."""
    tz = cfg.tz
    ko = fx.kickoff.astimezone(tz)
    cat = RISK_CATEGORIES.label(fx.category)
    lines = ["INFORMATION",
             f"• {fx.title}" + (f", {fx.competition}" if fx.competition else "")
             + f", {ground_name}",
             f"• Kick-off {ko:%a %d %b %H:%M} ({ko.tzname()})",
             f"• Risk: {cat}" + (f": {fx.category_why}" if intel and fx.category_why else ""),
             f"• Attendance {fx.attendance or 'n/k'} · away allocation "
             f"{fx.away_allocation or 'n/k'}"]
    lines.append("METHOD")
    method = [f"• {label}: {fx.notes[key]}" for key, label in NOTE_LINES if fx.notes.get(key)]
    lines += method or ["• No segregation, gate, alcohol or pyro notes recorded for this fixture."]
    if intel:
        lines.append("RISK ASSESSMENT (restricted)")
        if fx.notes.get("risk_groups"):
            lines.append(f"• Risk groups: {fx.notes['risk_groups']}")
        for key in sorted(cfg.intel_notes - {"risk_groups"}):
            if fx.notes.get(key):
                lines.append(f"• Intelligence: {fx.notes[key]}")
        lines.append("• History between the clubs:" if data["history"]
                     else "• History between the clubs: no earlier meeting on record.")
        for m in data["history"]:
            lines.append(f"   {m['kickoff'].astimezone(tz):%d %b %Y} {m['title']} (cat "
                         f"{m['category']}): {_n(m['incidents'], 'incident')} "
                         f"({_types(m['by_type'])}), {_n(m['arrests'], 'arrest')}, "
                         f"{_n(m['bans'], 'ban')}")
        lines.append("• Recent fixtures at this ground:" if data["ground"]
                     else "• Recent fixtures at this ground: none on record.")
        for m in data["ground"]:
            lines.append(f"   {m['kickoff'].astimezone(tz):%d %b} {m['title']}: "
                         f"{_n(m['incidents'], 'incident')} ({_types(m['by_type'], 3)}), "
                         f"{_n(m['arrests'], 'arrest')}")
        lines.append(f"• Season {fx.season} to date:")
        for club, t in data["season"].items():
            arr, ban = t["arrests"], t["banning_orders"]
            top = ", ".join(f"{OFFENCES.label(o).lower()} {r['total']}"
                            for o, r in list(arr["by_offence"].items())[:5]) or "none"
            lines.append(f"   {club} ({t['fixtures']} fixtures): arrests {arr['total']} "
                         f"({top}); banning orders {ban['new']} new, {ban['in_force']} in force")
    lines.append("COMMUNICATIONS")
    lines.append(f"• Key contacts: {fx.notes.get('contacts') or cfg.contacts or 'via control'}")
    return "\n".join(lines)


async def briefing_replies(core: Core, store: Store, fx: Fixture, label: str = "",
                           late_due: datetime | None = None) -> tuple[Reply, Reply]:
    """(full, stewards) briefings of a fixture; late_due marks a late send."""
    cfg = config_for(core.settings)
    data = await briefing_data(store, fx, cfg)
    ground = core.grounds.get(fx.ground)
    gname = ground.name if ground else fx.ground
    title = f"Briefing {label + ' ' if label else ''}· {fx.title}"
    if late_due is not None:
        title += f" · LATE (was due {late_due.astimezone(cfg.tz):%H:%M})"
    return (Reply(briefing_text(fx, data, cfg, gname, intel=True), title=title),
            Reply(briefing_text(fx, data, cfg, gname, intel=False), title=title + " · stewards"))


def reads_intel(core: Core, audience: str, fixture: str = "") -> bool:
    """Does every role reading this audience's chats (channels.toml `readers`; a fixture's
    own chats when given) have the `intel` right? A chat whose readers are not all declared
    does not."""
    readers = core.notifier.readers_of(audience, fixture)
    return bool(readers) and all(core.roles.allowed(r, "intel") for r in readers)


async def briefing_outbounds(core: Core, store: Store, fx: Fixture, label: str = "",
                             late_due: datetime | None = None) -> list[Outbound]:
    """The briefing for every configured audience (see briefing_send)."""
    return (await briefing_send(core, store, fx, label, late_due))[0]


async def briefing_send(core: Core, store: Store, fx: Fixture, label: str = "",
                        late_due: datetime | None = None) -> tuple[list[Outbound], str]:
    """(the briefing for every configured audience, the steward version's stamp): full to
    command (where everyone reading may see intelligence), redacted to stewards and anyone
    else; the steward version carries its version and the one-tap sign-off."""
    cfg = config_for(core.settings)
    full, stewards = await briefing_replies(core, store, fx, label, late_due)
    version, signed = stamped(stewards)
    outs = []
    await core.notifier.learn_grounds([fx.id])
    for a in cfg.full_audiences:
        if not reads_intel(core, a, fx.id):
            log.warning("briefing: audience %s gets the version without intelligence "
                        "(its readers in channels.toml may not all read it)", a)
        outs.append(Outbound(a, full if reads_intel(core, a, fx.id) else signed,
                             fixture=fx.id))
    return outs + [Outbound(a, signed, fixture=fx.id) for a in cfg.steward_audiences], version


async def summary_chart(core: Core, store: Store, facades: StoreFacades,
                        fx: Fixture) -> bytes | None:
    """The incidents-per-15-minutes chart of a fixture, or None when nothing happened."""
    data = chart_from_counts(await facades.views.chart_counts(fx.id))
    if data is None:  # nothing counted: a quiet fixture, or one logged before the counters
        data = chart_data(await store.events(fx.id))
    if data is None:
        return None
    timings = latest(await facades.timings.read(fx.id))
    marks = tuple((t.at, BY_KEY[t.key].short) for t in timings)
    # the recorded kick-off, when there is one, instead of the planned one
    kickoff = None if any(t.key == "kick_off" for t in timings) else fx.kickoff
    return await draw_chart(data, f"{fx.title}: incidents per 15 min",
                            config_for(core.settings).tz, kickoff, marks=marks)


async def summary_reply(core: Core, store: Store, facades: StoreFacades, fx: Fixture,
                        late_due: datetime | None = None) -> Reply:
    """The post-match summary from the derived counters, with the chart attached."""
    from bot.evidence.summary import summary_figures, summary_text  # handlers import this module

    fig = await summary_figures(store, facades, fx)
    ground = core.grounds.get(fx.ground) or next(iter(core.grounds.values()))
    png = await summary_chart(core, store, facades, fx)
    title = f"Summary · {fx.title}"
    if late_due is not None:
        title += f" · LATE (was due {late_due.astimezone(config_for(core.settings).tz):%H:%M})"
    return Reply(summary_text(fig, ground, config_for(core.settings).tz), title=title,
                 images=[png] if png else [])


async def summary_outbounds(core: Core, store: Store, facades: StoreFacades, fx: Fixture,
                            late_due: datetime | None = None) -> list[Outbound]:
    """The summary for every configured summary audience."""
    reply = await summary_reply(core, store, facades, fx, late_due)
    return [Outbound(a, reply, fixture=fx.id) for a in config_for(core.settings).summary_audiences]


class BriefingSlotContent:
    """What the scheduler's briefing and summary slots say (its `SlotContent`)."""

    async def briefing(self, core: Core, store: Store, fx: Fixture, label: str,
                       late_due: datetime | None) -> tuple[list[Outbound], str]:
        """The briefing for every audience, and the steward version's stamp."""
        return await briefing_send(core, store, fx, label, late_due)

    async def summary(self, core: Core, store: Store, fx: Fixture,
                      late_due: datetime | None) -> list[Outbound]:
        """The summary for every summary audience."""
        return await summary_outbounds(core, store, core.facades, fx, late_due)
