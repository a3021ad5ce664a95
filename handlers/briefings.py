"""/briefing on demand (the version your role may see) and /season tables."""

from __future__ import annotations

import re

from bot.core.dispatch import Ctx, Registry, Spec, UsageError
from bot.domain.messages import Reply, Result
from bot.domain.models import season_of
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
    return Result(full if ctx.core.roles.allowed(ctx.role, "intel") else stewards)


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
    registry.add(Spec("season", "/season [club] [YYYY-YY]",
                      "Season-to-date arrests and bans for a club", season_cmd,
                      reads_only=True))
