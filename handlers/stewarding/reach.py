"""Reach first, then chase: which one-to-many chat a broadcast is posted in (a ground's
stewards' alert channel, or a zone's group, declared in channels.toml as the audiences
`alert` and `alert_<zone>`), and which targeted stewards that one post reaches (their
membership as the platform's member updates told it)."""

from __future__ import annotations

from bot.core.dispatch import Core, Ctx
from bot.domain.fixture.fixture_model import Fixture
from bot.domain.incident.escalation_policy import policy_for
from bot.domain.procedures import Steward, Target
from bot.store.facades import StoreFacades

ALERT = "alert"  # the whole ground's stewards' one-to-many chat


async def roster_here(core: Core, facades: StoreFacades, fx: Fixture) -> list[Steward]:
    """The roster's people at this fixture: all but those who chose another fixture tonight
    (a club with two matches at once: an EVACUATE at one ground never goes to, nor counts,
    its stewards at the other)."""
    members = list(core.roster.values())
    away = await facades.choices.elsewhere([m.who for m in members], fx.id)
    return [Steward(m.who, m.name or m.user, m.role, m.zone) for m in members
            if m.who not in away]


def alert_audience(target: Target) -> str:
    """The audience of the one-to-many chat for a target ('' for supervisors and exits,
    who are reached one by one)."""
    if target.kind == "all":
        return ALERT
    return f"{ALERT}_{target.zone}" if target.kind == "zone" else ""


async def one_post(ctx: Ctx, fx: Fixture, target: Target) -> tuple[str, frozenset[str]]:
    """The audience to post a broadcast to once ('' when none is declared for the target on
    a running platform) and everyone (platform:user) that post reaches."""
    audience = alert_audience(target)
    notifier = ctx.core.notifier
    if not audience:
        return "", frozenset()
    await notifier.learn_grounds([fx.id])
    chats = {p: cs for p, cs in notifier.targets(audience, fx.id).items()
             if p in notifier.sinks and cs}
    if not chats:
        return "", frozenset()
    members: set[str] = set()
    for platform, ids in chats.items():
        members |= await ctx.facades.stewarding.chat_members(platform, ids)
    return audience, frozenset(members)


async def chase_deadline(ctx: Ctx, fx: Fixture, post: str) -> int | None:
    """When those a one-to-many post reached but who have not acknowledged get a direct
    message (epoch seconds; None without a post); the sweep is told to look (crash-safe,
    before the write)."""
    if not post:
        return None
    await ctx.facades.deadlines.index_escalation(fx.id)
    return int(ctx.now.timestamp()) + policy_for(ctx.core.settings).chase_after_s
