"""/merge <token> new: a report that joined an open incident is split out on its own."""

from __future__ import annotations

from bot.core.dispatch import Ctx, Registry, Spec, UsageError
from bot.core.messages import Reply, Result
from handlers.reporting import log_incident

MERGE_USAGE = "/merge <token> new"


async def merge_cmd(ctx: Ctx) -> Result:
    """/merge <token> new: the reporter says it is a separate incident after all."""
    if len(ctx.args) != 2 or ctx.args[1].lower() != "new":
        raise UsageError("Merge buttons only.")
    fx = await ctx.fixture()
    taken = await ctx.store.take_merge(fx.id, ctx.args[0], ctx.who)
    if taken is None:
        return Result(Reply("Already handled: that report was split out or has expired.",
                            ok=False))
    fields = {**taken["fields"], "new": True, "occurred_at": taken["at"]}
    result = await log_incident(ctx, fx, fields, extra_evidence=taken.get("evidence", []))
    first = int(taken["first"])
    ev = ctx.event("incident.unmerged", {"id": f"INC-{first}", "token": ctx.args[0],
                                         "reporter": taken["who"],
                                         "now": result.reply.title.removeprefix("Logged ")})
    await ctx.store.unmerge(fx.id, first, ev)
    await ctx.core.changed("incident", fx.id)
    return result


def register(registry: Registry) -> None:
    """Add the hidden merge command (its button)."""
    registry.add(Spec("merge", MERGE_USAGE, "Split a report out of the incident it joined",
                      merge_cmd, hidden=True))
