"""/briefing on demand (the version your role may see), the stewards' one-tap sign-off of
its version (/briefed) and who has signed it off (/signoff), and /season tables."""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.core.dispatch import Ctx, Registry, Spec, UsageError
from bot.domain.clock import iso, parse_iso
from bot.domain.fixture.fixture_model import Fixture, season_of
from bot.domain.fixture.key_timings import latest
from bot.domain.messages import Button, Reply, Result
from bot.domain.outcomes import Reason
from bot.domain.procedures import STEWARD_ROLES, Target
from bot.domain.signoff import SignOff, percent, stamped
from bot.domain.unreached import Unreached, radio_list
from bot.evidence.season import resolve_club, season_table, season_text
from bot.store import Refused
from handlers.briefings.briefing_content import briefing_replies, briefing_send
from handlers.stewarding.broadcasts import plan_reach

SEASON_RE = re.compile(r"^\d{4}-\d{2}$")
VERSION_RE = re.compile(r"^v[0-9a-f]{6}$")
NAMES_SHOWN = 4  # stewards named in the /status line (all of them in /signoff)


async def briefing_cmd(ctx: Ctx) -> Result:
    """/briefing [send]: the briefing for the active fixture; 'send' posts it to the channels
    (the steward version with its sign-off button)."""
    fx = await ctx.fixture()
    if ctx.spec.subcommand(ctx.rest) == "send":  # who may: roles.toml "briefing send"
        outs, version = await briefing_send(ctx.core, ctx.store, fx, "on demand")
        await ctx.facades.stewarding.briefing_shown(fx.id, version, iso(ctx.now))
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
    await ctx.facades.stewarding.briefing_shown(fx.id, version, iso(ctx.now))
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
        current = await ctx.facades.stewarding.signoff(fx.id)
        if current is None:
            return Result(Reply("No briefing has gone to stewards yet; nothing to sign off.",
                                ok=False, buttons=[[Button("Show the briefing", "/briefing")]]))
        version = current.version
    try:
        await ctx.facades.stewarding.briefed(
            fx.id, version, ctx.who, iso(ctx.now),
            ctx.event("briefing.acknowledged", {"version": version}))
    except Refused as exc:
        if exc.reason is not Reason.BRIEFING_CHANGED:
            raise
        return Result(Reply(f"The briefing has changed since {version}: read the new one "
                            "and sign it off.", ok=False,
                            buttons=[[Button("Show the briefing", "/briefing")]]))
    await ctx.core.changed("briefed", fx.id)
    return Result(Reply(f"✅ Briefing {version} signed off. Thank you."))


@dataclass(frozen=True)
class Counts:
    """A briefing's sign-off against the plan: the record, tonight's stewards on the bot
    (who -> rota name), who signed, the turnstiles-open time ('' before), and the rota's
    stewards the bot cannot reach (counted, never signed off)."""

    got: SignOff
    names: dict[str, str]
    done: list[str]
    opened: str
    unreached: tuple[Unreached, ...]

    @property
    def of(self) -> int:
        """The denominator: every planned steward, on the bot or not."""
        return len(self.names) + len(self.unreached)

    def share(self, n: int, noun: str = "") -> str:
        """'2/8 (25%)', or with a noun '2/8 stewards (25%)'."""
        return f"{n}/{self.of}{' ' + noun if noun else ''} ({percent(n, self.of)}%)"


async def _signoff_counts(ctx: Ctx, fx: Fixture) -> Counts | None:
    """The sign-off of the current briefing against every steward planned tonight: the
    roster's, the accounts linked to a tabard on the rota, and the rota's not on the bot."""
    got = await ctx.facades.stewarding.signoff(fx.id)
    if got is None:
        return None
    plan = await plan_reach(ctx, fx, Target("all"))
    names = {s.who: s.name for s in plan.to}
    opened = next((t for t in latest(await ctx.facades.timings.read(fx.id))
                   if t.key == "turnstiles_open"), None)
    return Counts(got, names, got.signed(list(names)), iso(opened.at) if opened else "",
                  plan.unreached)


async def signoff_lines(ctx: Ctx, fx: Fixture) -> list[str]:
    """One /status line: the share of planned stewards who signed off the current briefing
    (and, once the turnstiles opened, the share that had by then), naming a few who have
    not, and who the bot cannot reach."""
    c = await _signoff_counts(ctx, fx)
    if c is None:
        return []
    n = len(c.done)
    line = f"Briefing {c.got.version}: {n}/{c.of} stewards signed off ({percent(n, c.of)}%)"
    if c.opened:
        before = c.got.signed(list(c.names), c.opened)
        line += f", {percent(len(before), c.of)}% before turnstiles opened"
    missing = [n for w, n in c.names.items() if w not in c.got.acks]
    if missing:
        more = len(missing) - NAMES_SHOWN
        line += " · not yet: " + ", ".join(missing[:NAMES_SHOWN]) + (
            f" (+{more})" if more > 0 else "")
    if c.unreached:
        line += (f" · {len(c.unreached)} not on the bot: "
                 f"{radio_list(c.unreached, NAMES_SHOWN)}")
    return [line]


async def signoff_cmd(ctx: Ctx) -> Result:
    """/signoff: the current briefing version, the share of planned stewards who have read
    it (before the turnstiles opened, too), every steward who has not, and every planned
    steward the bot cannot reach (brief them in person)."""
    fx = await ctx.fixture()
    c = await _signoff_counts(ctx, fx)
    if c is None:
        return Result(Reply("No briefing has gone to stewards yet: /briefing send posts it "
                            "(scheduled briefings carry the sign-off button too)."))
    tz = ctx.core.settings.zone
    sent = f", first sent {parse_iso(c.got.shown_at).astimezone(tz):%H:%M}" \
        if c.got.shown_at else ""
    lines = [f"Version {c.got.version}{sent}",
             f"Signed off: {c.share(len(c.done), 'stewards')}"]
    if c.opened:
        before = c.got.signed(list(c.names), c.opened)
        lines.append(f"Before the turnstiles opened "
                     f"({parse_iso(c.opened).astimezone(tz):%H:%M}): {c.share(len(before))}")
    missing = sorted(n for w, n in c.names.items() if w not in c.got.acks)
    lines.append("Not yet: " + ", ".join(missing) if missing or c.unreached
                 else "Every steward has read it.")
    if c.unreached:
        lines.append(f"Not on the bot ({len(c.unreached)}), brief them in person: "
                     f"{radio_list(c.unreached)}")
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
