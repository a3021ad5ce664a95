"""The commander's one-screen status, and the summary on demand."""

from __future__ import annotations

from bot.core.dispatch import Ctx, Registry, Spec
from bot.core.messages import Reply, Result
from handlers.views import board


async def status_cmd(ctx: Ctx) -> Result:
    """/status: phase, open incidents (worst and oldest first), last 15 minutes, arrests."""
    fx = await ctx.fixture()
    extras: list[str] = []
    for extra in ctx.core.status_lines:  # missed briefings and other parts' lines
        extras += await extra(fx)
    lines = await board(ctx, fx, extras)  # fitted to one phone screen
    return Result(Reply("\n".join(lines), title=f"Status · {fx.title}"))


async def summary_cmd(ctx: Ctx) -> Result:
    """/summary: the post-match figures so far."""
    fx = await ctx.fixture()
    from bot.schedule.briefings import summary_reply  # figures + the chart (bot/charts.py)

    return Result(await summary_reply(ctx.core, fx))


def register(registry: Registry) -> None:
    """Add status and summary."""
    registry.add(Spec("status", "/status", "The commander's status screen", status_cmd,
                      aliases=("sitrep", "st", "status?"), reads_only=True))
    registry.add(Spec("summary", "/summary", "Post-match figures so far", summary_cmd,
                      aliases=("sum", "report_summary"), reads_only=True))
