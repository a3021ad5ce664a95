"""The commander's one-screen status, and the summary on demand."""

from __future__ import annotations

from datetime import datetime, timedelta

from bot.core.dispatch import Ctx, Registry, Spec
from bot.domain.fixture.fixture_model import Fixture
from bot.domain.messages import Reply, Result
from bot.ingress import ingress_command
from handlers.briefings import commands as briefings
from handlers.incident.card import board
from handlers.stewarding import broadcasts as stewarding
from handlers.stewarding import checkin, deploy

# Who sees which fixtures are live when several run at once (they may be asked about any).
COMMANDERS = frozenset({"admin", "safety_officer", "police_commander", "control"})
LIVE_SPAN = timedelta(hours=12)  # a fixture is live on its matchday, until closed


def is_live(fx: Fixture, now: datetime) -> bool:
    """Not cancelled, not closed, and kicking off within LIVE_SPAN of now."""
    return fx.status != "cancelled" and fx.phase != "closed" \
        and abs(fx.kickoff - now) <= LIVE_SPAN


async def live_line(ctx: Ctx, fx: Fixture) -> list[str]:
    """'Live: …' naming every live fixture, when more than the one shown is live."""
    live = [f for f in await ctx.store.fixtures() if is_live(f, ctx.now)]
    if not [f for f in live if f.id != fx.id]:
        return []
    names = ", ".join(("▶ " if f.id == fx.id else "") + f"{f.title} ({f.id})" for f in live)
    return [f"Live: {names}"]


async def status_cmd(ctx: Ctx) -> Result:
    """/status: phase, open incidents (worst and oldest first), last 15 minutes, arrests; for
    a commander, which fixtures are live."""
    fx = await ctx.fixture()
    extras: list[str] = []
    if ctx.role in COMMANDERS:
        extras += await live_line(ctx, fx)
        for extra in ctx.core.commander_lines:  # e.g. Redis could lose acknowledged reports
            extras += await extra(fx)
        extras += await ingress_command.status_lines(ctx, fx)  # people in, stands to watch
    extras += await stewarding.status_lines(ctx, fx)  # who has the latest broadcast
    extras += await deploy.plan_lines(ctx, fx, full=False)  # posts planned vs filled
    extras += await checkin.status_lines(ctx, fx)  # the roll call: posts on
    extras += await briefings.signoff_lines(ctx, fx)  # who signed the briefing off
    for extra in ctx.core.status_lines:  # missed briefings and other parts' lines
        extras += await extra(fx)
    lines = await board(ctx, fx, extras)  # fitted to one phone screen
    return Result(Reply("\n".join(lines), title=f"Status · {fx.title}"))


async def summary_cmd(ctx: Ctx) -> Result:
    """/summary: the post-match figures so far."""
    fx = await ctx.fixture()
    from handlers.briefings.briefing_content import (
        summary_reply,  # figures + the chart (bot/evidence/match_chart.py)
    )

    return Result(await summary_reply(ctx.core, ctx.store, ctx.facades, fx))


def register(registry: Registry) -> None:
    """Add status and summary."""
    registry.add(Spec("status", "/status", "The commander's status screen", status_cmd,
                      aliases=("sitrep", "st", "status?"), reads_only=True))
    registry.add(Spec("summary", "/summary", "Post-match figures so far", summary_cmd,
                      aliases=("sum", "report_summary"), reads_only=True))
