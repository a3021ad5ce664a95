"""The commander's one-screen status, and the summary on demand."""

from __future__ import annotations

from datetime import timedelta

from bot.clock import parse_iso
from bot.core import Ctx, Registry, Spec
from bot.messages import Reply, Result
from bot.vocab import PHASES
from handlers.cards import SEV_MARK, one_line
from handlers.summary import mmss, summary_figures, summary_text

SHOW_OPEN = 6  # incident lines on the status screen; the rest are counted


async def status_cmd(ctx: Ctx) -> Result:
    """/status: phase, open incidents (worst and oldest first), last 15 minutes, arrests."""
    fx = await ctx.fixture()
    ground = ctx.ground(fx)
    open_list, by_sev = await ctx.store.open_incidents(fx.id, limit=SHOW_OPEN)
    counts = await ctx.store.counts(fx.id)
    rt = await ctx.store.response_times(fx.id)
    recent = await ctx.store.recent_events(fx.id, 200)
    tz = ctx.core.settings.zone
    total_open = sum(v for k, v in by_sev.items() if k)
    lines = [f"Phase: {PHASES.label(fx.phase)} · {ctx.now.astimezone(tz):%H:%M} · "
             f"cat {fx.category}"]
    sev_line = " ".join(f"{SEV_MARK[s]}{s}×{by_sev[s]}" for s in range(5, 0, -1) if by_sev[s])
    lines.append(f"Open: {total_open} (unacknowledged {by_sev[0]})"
                 + (f" · {sev_line}" if sev_line else ""))
    lines += [one_line(i, ground, ctx.now) for i in open_list]
    if total_open > len(open_list):
        lines.append(f"+{total_open - len(open_list)} more open (/summary for all figures)")
    since = ctx.now - timedelta(minutes=15)
    fresh = [e for e in recent if parse_iso(e.at) >= since]
    reported = sum(e.kind == "incident.reported" for e in fresh)
    moved = sum(e.kind == "incident.status" for e in fresh)
    closed = sum(e.kind == "incident.status" and e.data.get("cls") == "close" for e in fresh)
    arrests = sum(int(e.data.get("count", 1)) for e in fresh if e.kind == "arrest.recorded")
    lines.append(f"Last 15 min: {reported} reported, {moved} status changes ({closed} closed), "
                 f"{arrests} arrests")
    lines.append(f"Arrests: {counts.get('arr:total', 0)} (inside {counts.get('arr:io:inside', 0)}"
                 f", outside {counts.get('arr:io:outside', 0)}) · Bans: "
                 f"{counts.get('ban:total', 0)}")
    lines.append(f"Median time to acknowledge: {mmss(rt['median_ack_s'])} "
                 f"(worst {mmss(rt['worst_ack_s'])})")
    for extra in ctx.core.status_lines:
        lines += await extra(fx)
    return Result(Reply("\n".join(lines), title=f"Status · {fx.title}"))


async def summary_cmd(ctx: Ctx) -> Result:
    """/summary: the post-match figures so far."""
    fx = await ctx.fixture()
    fig = await summary_figures(ctx.store, fx)
    return Result(Reply(summary_text(fig, ctx.ground(fx)), title=f"Summary · {fx.title}"))


def register(registry: Registry) -> None:
    """Add status and summary."""
    registry.add(Spec("status", "/status", "The commander's status screen", status_cmd,
                      aliases=("sitrep", "st", "status?"), reads_only=True))
    registry.add(Spec("summary", "/summary", "Post-match figures so far", summary_cmd,
                      aliases=("sum", "report_summary"), reads_only=True))
