"""/warnings: the early warnings standing now, and control dismissing one (the wall stops
showing it; the early warning stays quiet there a while)."""

from __future__ import annotations

from bot.core.dispatch import Ctx, Registry, Spec, UsageError
from bot.domain.early_warning import open_warnings
from bot.domain.messages import Button, Reply, Result

USAGE = "/warnings [dismiss <zone>]"


async def warnings_cmd(ctx: Ctx) -> Result:
    """/warnings lists the standing early warnings; /warnings dismiss <zone> ends one."""
    fx = await ctx.fixture()
    ground = ctx.ground(fx)
    standing = open_warnings(await ctx.store.events(fx.id))
    if not ctx.args:
        if not standing:
            return Result(Reply("No early warning standing.", title="Early warnings"))
        lines = [f"{w.get('text', '')}\nSuggested: {w.get('action', '')}"
                 for w in standing.values()]
        buttons = [[Button(f"Dismiss {ground.short_label(z, 20)}", f"/warnings dismiss {z}",
                           "danger")] for z in standing]
        return Result(Reply("\n\n".join(lines), title="Early warnings", buttons=buttons))
    if ctx.args[0].lower() != "dismiss" or len(ctx.args) < 2:
        raise UsageError(f"Usage: {USAGE}")
    word = " ".join(ctx.args[1:]).lstrip("@")
    zone = ground.resolve(word)
    if zone is None:
        raise UsageError(f"Unknown place '{word[:40]}' at {ground.name}.")
    hit = next((z for z, w in standing.items() if z == zone or zone in w.get("zones", ())),
               None)
    if hit is None:
        return Result(Reply(f"No early warning standing at {ground.short_label(zone, 30)}: "
                            "nothing dismissed.", ok=False))
    ev = ctx.event("fixture.early_warning_cleared",
                   {"zone": hit, "zones": list(standing[hit].get("zones", [hit])),
                    "why": "dismissed"})
    await ctx.store.log_once(fx.id, ev, [], ctx.cmd.dedupe_key or f"dismiss:{hit}:{ev.at}")
    await ctx.core.changed("fixture", fx.id)
    where = ground.short_label(hit, 30)
    ctx.notify("control", Reply(f"Early warning at {where} dismissed by "
                                f"{ctx.member.name if ctx.member else ctx.who}."),
               fixture=fx.id)
    return Result(Reply(f"Early warning at {where} dismissed: the wall stops showing it.",
                        title="Early warning dismissed"))


def register(registry: Registry) -> None:
    """Add /warnings."""
    registry.add(Spec("warnings", USAGE, "early warnings standing; dismiss one", warnings_cmd))
