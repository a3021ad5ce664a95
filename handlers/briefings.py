"""/briefing on demand (the version your role may see) and /season tables."""

from __future__ import annotations

import hashlib
import re

from bot.core.dispatch import Ctx, Registry, Spec, UsageError
from bot.domain.clock import iso
from bot.domain.fixture.fixture_model import Fixture, season_of
from bot.domain.messages import Button, Reply, Result
from bot.domain.procedures import STEWARD_ROLES
from bot.evidence.season import resolve_club, season_table, season_text
from bot.schedule.briefing_content import briefing_outbounds, briefing_replies

SEASON_RE = re.compile(r"^\d{4}-\d{2}$")


async def briefing_cmd(ctx: Ctx) -> Result:
    """/briefing [send]: the briefing for the active fixture; 'send' posts it to the channels."""
    fx = await ctx.fixture()
    if ctx.spec.subcommand(ctx.rest) == "send":  # who may: roles.toml "briefing send"
        ctx.outbound.extend(await briefing_outbounds(ctx.core, fx, "on demand"))
        return Result(Reply(f"Briefing for {fx.title} posted to the command and steward "
                            "channels."))
    if ctx.args:
        raise UsageError(f"Unknown option '{ctx.args[0]}'.")
    full, stewards = await briefing_replies(ctx.core, fx)
    if ctx.core.roles.allowed(ctx.role, "intel"):
        return Result(full)
    if ctx.role not in STEWARD_ROLES:
        return Result(stewards)
    version = briefing_version(stewards)  # a steward signs off the version they read
    await ctx.store.stewarding.briefing_shown(fx.id, version)
    stewards.text += f"\nVersion {version}"
    stewards.buttons = [[Button(f"✅ I have read it ({version})", f"/briefed {version}",
                                "primary")]]
    return Result(stewards)


def briefing_version(reply: Reply) -> str:
    """A short stamp of a briefing's text: a changed briefing has a new one."""
    return "v" + hashlib.sha256(reply.text.encode()).hexdigest()[:6]


async def briefed_cmd(ctx: Ctx) -> Result:
    """/briefed <version>: a steward's sign-off of the briefing they read."""
    if len(ctx.args) != 1:
        raise UsageError("Which version?")
    fx = await ctx.fixture()
    _full, stewards = await briefing_replies(ctx.core, fx)
    current = briefing_version(stewards)
    if ctx.args[0] != current:
        return Result(Reply(f"The briefing has changed since {ctx.args[0][:8]}: read the new "
                            "one and sign it off.", ok=False,
                            buttons=[[Button("Show the briefing", "/briefing")]]))
    state = ctx.store.stewarding
    await state.briefing_shown(fx.id, current)
    await state.briefed(fx.id, current, ctx.who, iso(ctx.now),
                        ctx.event("briefing.acknowledged", {"version": current}),
                        ctx.cmd.dedupe_key)
    await ctx.core.changed("briefed", fx.id)
    return Result(Reply(f"✅ Briefing {current} signed off. Thank you."))


async def signoff_lines(ctx: Ctx, fx: Fixture) -> list[str]:
    """One /status line: the share of stewards who signed off the current briefing."""
    version, acks = await ctx.store.stewarding.briefing_acks(fx.id)
    if not version:
        return []
    names = {m.who: m.name or m.user for m in ctx.core.roster.values()
             if m.role in STEWARD_ROLES}
    done = [w for w in names if w in acks]
    pct = round(100 * len(done) / len(names)) if names else 0
    line = f"Briefing {version}: {len(done)}/{len(names)} stewards signed off ({pct}%)"
    missing = [n for w, n in names.items() if w not in acks]
    if missing:
        more = len(missing) - 4
        line += " · not yet: " + ", ".join(missing[:4]) + (f" (+{more})" if more > 0 else "")
    return [line]


async def season_cmd(ctx: Ctx) -> Result:
    """/season [club] [YYYY-YY]: season-to-date arrests and banning orders for a club."""
    words = list(ctx.args)
    season = words.pop() if words and SEASON_RE.match(words[-1]) else ""
    fx = await ctx.core.fixture_for(ctx.cmd)  # the sender's fixture names the default club
    club_word = " ".join(words) or (fx.home if fx else "")
    if not club_word:
        raise UsageError("Which club?")
    fixtures = await ctx.store.fixtures()
    club = resolve_club(club_word, fixtures)
    if club is None:
        raise UsageError(f"No fixtures on record for a club called '{club_word}'.")
    season = season or (fx.season if fx else season_of(ctx.now))
    table = await season_table(ctx.store, club, season)
    return Result(Reply(season_text(table), title=f"Season {season} · {club}"))


def register(registry: Registry) -> None:
    """Add /briefing and /season."""
    registry.add(Spec("briefing", "/briefing [send]", "The pre-match briefing", briefing_cmd,
                      aliases=("brief",), reads_only=True,
                      subcommands={"send": "send", "post": "send"}))
    registry.add(Spec("briefed", "/briefed <version>", "Sign off the briefing you read",
                      briefed_cmd, hidden=True))
    registry.add(Spec("season", "/season [club] [YYYY-YY]",
                      "Season-to-date arrests and bans for a club", season_cmd,
                      reads_only=True))
