"""/briefing on demand (the version your role may see), the stewards' one-tap sign-off of
its version (/briefed) and who has signed it off (/signoff), and /season tables."""

from __future__ import annotations

import re

from bot.core.dispatch import Ctx, Registry, Spec, UsageError
from bot.domain.clock import iso, parse_iso
from bot.domain.fixture.fixture_model import Fixture, season_of
from bot.domain.fixture.key_timings import latest
from bot.domain.messages import Button, Reply, Result
from bot.domain.procedures import STEWARD_ROLES
from bot.domain.signoff import SignOff, percent, stamped
from bot.evidence.season import resolve_club, season_table, season_text
from bot.schedule.briefing_content import briefing_replies, briefing_send
from bot.store import Refused
from bot.store.stewarding_keys import STALE
from handlers.stewarding import stewards

SEASON_RE = re.compile(r"^\d{4}-\d{2}$")
VERSION_RE = re.compile(r"^v[0-9a-f]{6}$")
NAMES_SHOWN = 4  # stewards named in the /status line (all of them in /signoff)


async def briefing_cmd(ctx: Ctx) -> Result:
    """/briefing [send]: the briefing for the active fixture; 'send' posts it to the channels
    (the steward version with its sign-off button)."""
    fx = await ctx.fixture()
    if ctx.spec.subcommand(ctx.rest) == "send":  # who may: roles.toml "briefing send"
        outs, version = await briefing_send(ctx.core, ctx.store, fx, "on demand")
        await ctx.store.stewarding.briefing_shown(fx.id, version, iso(ctx.now))
        ctx.outbound.extend(outs)
        return Result(Reply(f"Briefing for {fx.title} posted to the command and steward "
                            f"channels (steward version {version}: /signoff counts who has "
                            "read it)."))
    if ctx.args:
        raise UsageError(f"Unknown option '{ctx.args[0]}'.")
    full, stewards = await briefing_replies(ctx.core, ctx.store, fx)
    if ctx.core.roles.allowed(ctx.role, "intel"):
        return Result(full)
    if ctx.role not in STEWARD_ROLES:
        return Result(stewards)
    version, signed = stamped(stewards)  # a steward signs off the version they read
    await ctx.store.stewarding.briefing_shown(fx.id, version, iso(ctx.now))
    return Result(signed)


async def briefed_cmd(ctx: Ctx) -> Result:
    """/briefed <version>: a steward's one-tap sign-off of the briefing version they read
    (one write; a second tap is not counted again); /briefed alone: the current version."""
    if len(ctx.args) > 1 or (ctx.args and not VERSION_RE.match(ctx.args[0])):
        raise UsageError("Which version? (the button under the briefing says it)")
    fx = await ctx.fixture()
    if ctx.args:
        version = ctx.args[0]
    else:
        current = await ctx.store.stewarding.signoff(fx.id)
        if current is None:
            return Result(Reply("No briefing has gone to stewards yet; nothing to sign off.",
                                ok=False, buttons=[[Button("Show the briefing", "/briefing")]]))
        version = current.version
    try:
        await ctx.store.stewarding.briefed(
            fx.id, version, ctx.who, iso(ctx.now),
            ctx.event("briefing.acknowledged", {"version": version}))
    except Refused as exc:
        if exc.reason is not STALE:
            raise
        return Result(Reply(f"The briefing has changed since {version}: read the new one "
                            "and sign it off.", ok=False,
                            buttons=[[Button("Show the briefing", "/briefing")]]))
    await ctx.core.changed("briefed", fx.id)
    return Result(Reply(f"✅ Briefing {version} signed off. Thank you."))


async def _signoff_counts(ctx: Ctx, fx: Fixture) -> tuple[SignOff, dict[str, str],
                                                          list[str], str] | None:
    """(sign-off, steward who -> rota name, who signed, turnstiles-open time or ''): every
    steward on duty tonight, the roster's and the accounts linked to a tabard on the rota."""
    got = await ctx.store.stewarding.signoff(fx.id)
    if got is None:
        return None
    names = {s.who: s.name for s in await stewards(ctx, fx) if s.role in STEWARD_ROLES}
    opened = next((t for t in latest(await ctx.store.timings.read(fx.id))
                   if t.key == "turnstiles_open"), None)
    return got, names, got.signed(list(names)), iso(opened.at) if opened else ""


async def signoff_lines(ctx: Ctx, fx: Fixture) -> list[str]:
    """One /status line: the share of stewards who signed off the current briefing (and,
    once the turnstiles opened, the share that had by then), naming a few who have not."""
    counts = await _signoff_counts(ctx, fx)
    if counts is None:
        return []
    got, names, done, opened = counts
    line = (f"Briefing {got.version}: {len(done)}/{len(names)} stewards signed off "
            f"({percent(len(done), len(names))}%)")
    if opened:
        before = got.signed(list(names), opened)
        line += f", {percent(len(before), len(names))}% before turnstiles opened"
    missing = [n for w, n in names.items() if w not in got.acks]
    if missing:
        more = len(missing) - NAMES_SHOWN
        line += " · not yet: " + ", ".join(missing[:NAMES_SHOWN]) + (
            f" (+{more})" if more > 0 else "")
    return [line]


async def signoff_cmd(ctx: Ctx) -> Result:
    """/signoff: the current briefing version, the share of stewards who have read it (before
    the turnstiles opened, too) and every steward who has not."""
    fx = await ctx.fixture()
    counts = await _signoff_counts(ctx, fx)
    if counts is None:
        return Result(Reply("No briefing has gone to stewards yet: /briefing send posts it "
                            "(scheduled briefings carry the sign-off button too)."))
    got, names, done, opened = counts
    tz = ctx.core.settings.zone
    sent = f", first sent {parse_iso(got.shown_at).astimezone(tz):%H:%M}" if got.shown_at \
        else ""
    lines = [f"Version {got.version}{sent}",
             f"Signed off: {len(done)}/{len(names)} stewards "
             f"({percent(len(done), len(names))}%)"]
    if opened:
        before = got.signed(list(names), opened)
        lines.append(f"Before the turnstiles opened ({parse_iso(opened).astimezone(tz):%H:%M}):"
                     f" {len(before)}/{len(names)} ({percent(len(before), len(names))}%)")
    missing = sorted(n for w, n in names.items() if w not in got.acks)
    lines.append("Not yet: " + ", ".join(missing) if missing else "Every steward has read it.")
    return Result(Reply("\n".join(lines), title=f"Briefing sign-off · {fx.title}"))


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
    registry.add(Spec("briefed", "/briefed [version]", "Sign off the briefing you read",
                      briefed_cmd, hidden=True))
    registry.add(Spec("signoff", "/signoff", "Who has signed the steward briefing off",
                      signoff_cmd, reads_only=True, aliases=("signoffs",)))
    registry.add(Spec("season", "/season [club] [YYYY-YY]",
                      "Season-to-date arrests and bans for a club", season_cmd,
                      reads_only=True))
